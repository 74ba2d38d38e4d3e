// A complete, tiny profiling project: a random-weight Llama, a 3-item multiple-choice benchmark
// and a config, made in a moment for tests. The built-in demo (`bprof demo`) is media/demo.
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { writeRandomLlama } from "./randomLlama";

export interface TinyProject {
  root: string;
  configPath: string;
  modelDir: string;
  taskFile: string;
  dataFile: string;
}

export const TINY_BENCHMARK_DOCS = [
  { question: "Which colour is the sky on a clear day?", choices: ["blue", "green", "red"], answer: 0 },
  { question: "How many legs does a spider have?", choices: ["six", "eight", "ten", "four"], answer: 1 },
  { question: "Water freezes at which temperature in Celsius?", choices: ["100 degrees", "50 degrees", "0 degrees"], answer: 2 },
];

const TASK_YAML = `# An lm-eval task: the same keys and templates lm-evaluation-harness reads.
task: tiny_mc
dataset_path: json
dataset_kwargs:
  data_files:
    test: tiny_mc.jsonl
test_split: test
output_type: multiple_choice
doc_to_text: "Question: {{question}}\\nAnswer:"
doc_to_choice: choices
doc_to_target: answer
metric_list:
  - metric: acc
  - metric: acc_norm
`;

const CONFIG_YAML = `# Benchmark Profiler config: which model, which benchmarks.
models:
  - path: ./model
    name: tiny-llama
benchmarks:
  - task: ./tasks/tiny_mc.yaml
`;

export async function makeTinyProject(root: string, seed = 0): Promise<TinyProject> {
  const modelDir = path.join(root, "model");
  const taskDir = path.join(root, "tasks");
  await fs.mkdir(taskDir, { recursive: true });
  await writeRandomLlama(modelDir, { seed });
  const taskFile = path.join(taskDir, "tiny_mc.yaml");
  const dataFile = path.join(taskDir, "tiny_mc.jsonl");
  await fs.writeFile(taskFile, TASK_YAML);
  await fs.writeFile(dataFile, TINY_BENCHMARK_DOCS.map((d) => JSON.stringify(d)).join("\n") + "\n");
  const configPath = path.join(root, "tiny.bprof.yaml");
  await fs.writeFile(configPath, CONFIG_YAML);
  return { root, configPath, modelDir, taskFile, dataFile };
}
