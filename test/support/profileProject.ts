// A tiny project with abilities, for tests that run the whole ability pipeline with the real
// runner: a random-weight Llama, two hand-written diagnostic datasets, an 8-document two-choice
// benchmark (chance exactly 1/2) and a config that ablates top and random sets at two k.
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { writeRandomLlama } from "./randomLlama";

export const QUANT = "Quantitative Reasoning";
export const SPATIAL = "Spatial Reasoning";

/** Hand-written diagnostic items; each file holds one ability. */
export const DIAGNOSTIC: Record<string, { context: string; question: string; choices: string[]; answer: number }[]> = {
  [QUANT]: [
    { context: "Ann has 3 apples and buys 4 more.", question: "How many apples does Ann have?", choices: ["7", "6", "12"], answer: 0 },
    {
      context: "A train travels 60 km in one hour.",
      question: "How far does it travel in two hours?",
      choices: ["60 km", "120 km", "180 km"],
      answer: 1,
    },
    { context: "", question: "What is 9 times 8?", choices: ["64", "81", "72"], answer: 2 },
    { context: "A box holds 12 eggs; 5 are broken.", question: "How many eggs are whole?", choices: ["7", "5", "17"], answer: 0 },
  ],
  [SPATIAL]: [
    {
      context: "The lamp is left of the chair; the chair is left of the desk.",
      question: "Where is the lamp relative to the desk?",
      choices: ["left", "right"],
      answer: 0,
    },
    {
      context: "Tom faces north and turns right.",
      question: "Which way does Tom face now?",
      choices: ["west", "east", "south"],
      answer: 1,
    },
    {
      context: "The cup is on the book; the book is on the table.",
      question: "What is directly under the cup?",
      choices: ["the table", "the book"],
      answer: 1,
    },
  ],
};

/** A small two-choice benchmark: chance is exactly 1/2. */
export const BENCH_DOCS = [
  { question: "Is ice cold or hot?", choices: ["cold", "hot"], answer: 0 },
  { question: "Do fish live in water or in trees?", choices: ["in trees", "in water"], answer: 1 },
  { question: "Is the sun a star or a planet?", choices: ["a star", "a planet"], answer: 0 },
  { question: "Do birds have feathers or scales?", choices: ["scales", "feathers"], answer: 1 },
  { question: "Is snow white or black?", choices: ["white", "black"], answer: 0 },
  { question: "Do cows say moo or quack?", choices: ["quack", "moo"], answer: 1 },
  { question: "Is a week seven days or ten days?", choices: ["seven days", "ten days"], answer: 0 },
  { question: "Is fire hot or frozen?", choices: ["frozen", "hot"], answer: 1 },
];

export const TASK_YAML = `task: tiny_yes
dataset_path: json
dataset_kwargs:
  data_files:
    test: tiny_yes.jsonl
test_split: test
output_type: multiple_choice
doc_to_text: "Question: {{question}}\\nAnswer:"
doc_to_choice: choices
doc_to_target: answer
`;

export const K = [0.001, 0.01];

export const CONFIG_YAML = `models:
  - path: ./model
    name: tiny-llama
benchmarks:
  - task: ./tasks/tiny_yes.yaml
abilities:
  - name: ${QUANT}
    data: ./diag/quantitative.diag.jsonl
  - name: ${SPATIAL}
    data: [./diag/spatial.diag.jsonl]
ablation:
  k: [${K[1]}, ${K[0]}]
  selections: [top, random]
  batch_size: 2
seed: 3
bootstrap:
  resamples: 500
`;

export interface ProfileProject {
  root: string;
  configPath: string;
  /** Every parameter of the model, as config.json implies. */
  parameters: number;
  /** The MLP weights that can be ablated. */
  mlpParameters: number;
}

/**
 * Writes the project into a new temporary folder (or `root`). `config` replaces the config text;
 * `extraFiles` adds files (path relative to the root -> text): more tasks, more diagnostic data.
 */
export async function makeProfileProject(
  options: { root?: string; config?: string; extraFiles?: Record<string, string> } = {},
): Promise<ProfileProject> {
  const root = options.root ?? (await fs.mkdtemp(path.join(os.tmpdir(), "bprof-profile-")));
  const model = writeRandomLlama(path.join(root, "model"), { seed: 0 });
  await fs.mkdir(path.join(root, "tasks"), { recursive: true });
  await fs.writeFile(path.join(root, "tasks", "tiny_yes.yaml"), TASK_YAML);
  await fs.writeFile(path.join(root, "tasks", "tiny_yes.jsonl"), BENCH_DOCS.map((d) => JSON.stringify(d)).join("\n") + "\n");
  await fs.mkdir(path.join(root, "diag"), { recursive: true });
  for (const [ability, file] of [
    [QUANT, "quantitative"],
    [SPATIAL, "spatial"],
  ] as const) {
    const lines = DIAGNOSTIC[ability]!.map((item, i) => JSON.stringify({ id: `${file}-${i}`, ability, ...item }));
    await fs.writeFile(path.join(root, "diag", `${file}.diag.jsonl`), lines.join("\n") + "\n");
  }
  for (const [file, text] of Object.entries(options.extraFiles ?? {})) {
    await fs.mkdir(path.dirname(path.join(root, file)), { recursive: true });
    await fs.writeFile(path.join(root, file), text);
  }
  const configPath = path.join(root, "profile.bprof.yaml");
  await fs.writeFile(configPath, options.config ?? CONFIG_YAML);
  return { root, configPath, parameters: model.parameters, mlpParameters: model.mlpParameters };
}
