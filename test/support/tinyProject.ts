// A complete, tiny profiling project: a random-weight Llama, a 3-item multiple-choice benchmark
// and a config, made in a moment for tests; and a finished run of a config's benchmarks as its
// output folder holds one (results.json with the baselines only). The built-in demo (`bprof demo`)
// is media/demo.
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

/**
 * The problems other than `config.low-power`: a tiny benchmark's few documents detect no AIS at 80%
 * power, so every config of one gets that warning at its entry (test/unit/config/power.test.ts
 * checks it); tests of the other checks leave it aside.
 */
export function withoutLowPower<P extends { code: string }>(problems: readonly P[]): P[] {
  return problems.filter((p) => p.code !== "config.low-power");
}

/** A benchmark's baseline in a hand-made run: acc (and chance) for multiple choice, exact_match for generate_until. */
export type ScoredBenchmark =
  { name: string; items: number; acc: number; chance: number } | { name: string; items: number; exact_match: number };

/**
 * A finished run of `configFile` in its default output folder (.bprof beside it): run.json naming
 * the config and a results.json of the models' baselines, as a score-only run writes them. Returns
 * the run's folder.
 */
export async function writeScoredRun(
  configFile: string,
  runId: string,
  models: readonly { name: string; benchmarks: readonly ScoredBenchmark[] }[],
): Promise<string> {
  const dir = path.join(path.dirname(configFile), ".bprof", "runs", runId);
  await fs.mkdir(dir, { recursive: true });
  const created = "2026-12-01T00:00:00.000Z";
  await fs.writeFile(path.join(dir, "run.json"), JSON.stringify({ run_id: runId, created, config_file: path.resolve(configFile) }));
  const results = {
    schema: "bprof.results",
    schema_version: 1,
    run_id: runId,
    created,
    config_file: path.resolve(configFile),
    models: models.map((m) => ({
      name: m.name,
      path: path.join(path.dirname(configFile), "model"),
      dtype: "float32",
      benchmarks: m.benchmarks.map((b) =>
        "acc" in b
          ? {
              name: b.name,
              task_file: `${b.name}.yaml`,
              output_type: "multiple_choice",
              items: b.items,
              acc: b.acc,
              acc_norm: b.acc,
              chance: b.chance,
            }
          : {
              name: b.name,
              task_file: `${b.name}.yaml`,
              output_type: "generate_until",
              items: b.items,
              exact_match: b.exact_match,
              chance: 0,
              filter: "none",
              exact_match_by_filter: { none: b.exact_match },
            },
      ),
    })),
  };
  await fs.writeFile(path.join(dir, "results.json"), JSON.stringify(results, null, 2));
  return dir;
}
