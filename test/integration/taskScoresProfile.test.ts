// Tasks that score themselves in Python, end to end with the real runner on the tiny random Llama:
// a multiple-choice task whose process_results gives the probability mass on the true choices
// (truthfulqa_mc2's score) and a generation task with a `!function` metric and `unsafe_code: true`,
// profiled with abilities by `bprof run`. The run is refused without --confirm-run-unsafe-code;
// with it, every document's score and every cell are recomputed here from the runner's numbers.
import assert from "node:assert/strict";
import { existsSync, promises as fs } from "node:fs";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { bprof } from "../support/cli";
import { BENCH_DOCS, K, makeProfileProject, QUANT, SPATIAL, TASK_YAML } from "../support/profileProject";

// The project's two-choice benchmark, scored by its own process_results.
const MASS_TASK =
  TASK_YAML.replace("task: tiny_yes", "task: tiny_mass") +
  "process_results: !function scores.mass_on_answer\nmetric_list:\n  - metric: acc\n";

const GEN_TASK = `task: tiny_said
dataset_path: json
dataset_kwargs:
  data_files:
    test: tiny_yes.jsonl
test_split: test
output_type: generate_until
unsafe_code: true
doc_to_text: "Question: {{question}}\\nAnswer:"
doc_to_target: "{{choices[answer]}}"
generation_kwargs:
  until: ["\\n"]
  max_gen_toks: 4
metric_list:
  - metric: !function scores.says_something
`;

// The generation metric does not run what the model wrote (a random model writes no Python); it
// scores 1 when the answer has a letter, so that both scores occur.
const SCORES_PY = `import math


def mass_on_answer(doc, results):
    probs = [math.exp(ll) for ll, _ in results]
    return {"acc": probs[doc["answer"]] / sum(probs)}


def says_something(references, predictions):
    return {"said": float(any(c.isalpha() for c in predictions[0]))}
`;

const CONFIG = `models:
  - path: ./model
    name: tiny-llama
benchmarks:
  - task: ./tasks/tiny_mass.yaml
  - task: ./tasks/tiny_said.yaml
abilities:
  - name: ${QUANT}
    data: ./diag/quantitative.diag.jsonl
  - name: ${SPATIAL}
    data: ./diag/spatial.diag.jsonl
ablation:
  k: [${K.join(", ")}]
  selections: [top, random]
  batch_size: 2
seed: 3
bootstrap:
  resamples: 200
`;

let root: string;
let configPath: string;
before(async () => {
  ({ root, configPath } = await makeProfileProject({
    config: CONFIG,
    extraFiles: { "tasks/tiny_mass.yaml": MASS_TASK, "tasks/tiny_said.yaml": GEN_TASK, "tasks/scores.py": SCORES_PY },
  }));
});
after(() => fs.rm(root, { recursive: true, force: true }));

interface Item {
  benchmark: string;
  index: number;
  target: number | string;
  choices?: { logprob: number }[];
  answer?: string;
  score?: number;
  chance?: number;
}
interface Cell {
  baseline: number;
  ablated: number;
  chance: number;
  ais: number | null;
}

const readJsonl = async (file: string): Promise<Item[]> =>
  (await fs.readFile(file, "utf8"))
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Item);
const close = (a: number, b: number, what: string) => assert.ok(Math.abs(a - b) < 1e-9, `${what}: ${a} vs ${b}`);
const mean = (values: number[]) => values.reduce((s, v) => s + v, 0) / values.length;

test(
  "bprof run refuses a task that runs generated code until it is confirmed, then scores every document with the tasks' own Python",
  { timeout: 300_000 },
  async () => {
    const refused = await bprof(["run", configPath]);
    assert.equal(refused.exitCode, 2, refused.stderr);
    assert.match(
      refused.stderr,
      /bprof: unsafe_code: `tiny_said` scores each document by running the code the model generates .*--confirm-run-unsafe-code/,
    );
    assert.equal(existsSync(path.join(root, ".bprof", "runs")), false, "nothing started");

    const result = await bprof(["run", configPath, "--confirm-run-unsafe-code"]);
    assert.equal(result.exitCode, 0, `bprof run failed:\n${result.stderr}\n${result.stdout}`);
    const runs = path.join(root, ".bprof", "runs");
    const runDir = path.join(runs, (await fs.readdir(runs))[0]!);
    const modelDir = path.join(runDir, "models", "tiny-llama");
    const results = JSON.parse(await fs.readFile(path.join(runDir, "results.json"), "utf8"));
    const model = results.models[0];

    // Each document's score, by hand from the runner's log-likelihoods and the generated answers.
    const byHand = (item: Item): number => {
      if (item.choices) {
        const probs = item.choices.map((c) => Math.exp(c.logprob));
        return probs[item.target as number]! / probs.reduce((a, b) => a + b, 0);
      }
      return /\p{L}/u.test(item.answer!) ? 1 : 0;
    };
    const itemsOf = async (file: string) => {
      const items = await readJsonl(path.join(modelDir, file));
      for (const item of items) close(item.score!, byHand(item), `${file} ${item.benchmark} document ${item.index}`);
      return items;
    };
    const baseline = await itemsOf("items.jsonl");
    const mass = baseline.filter((i) => i.benchmark === "tiny_mass");
    assert.equal(mass.length, BENCH_DOCS.length);
    for (const item of mass) assert.equal(item.chance, 0.5, "two choices, equally likely: half the mass on the answer");
    const baselineOf = (name: string) => mean(baseline.filter((i) => i.benchmark === name).map(byHand));
    assert.deepEqual(
      model.benchmarks.map((b: { scored_by?: string }) => b.scored_by),
      ["scores.mass_on_answer", "scores.says_something"],
    );
    assert.match(result.stdout, /^tiny-llama {2}tiny_mass {2}acc \d\.\d{4} \(scores\.mass_on_answer\) {2}chance 0\.5000 {2}\(8 items\)$/m);
    close(model.benchmarks.find((b: { name: string }) => b.name === "tiny_mass").acc, baselineOf("tiny_mass"), "tiny_mass acc");
    close(model.benchmarks.find((b: { name: string }) => b.name === "tiny_said").exact_match, baselineOf("tiny_said"), "tiny_said score");

    let cells = 0;
    for (const variant of model.profile.variants) {
      const ablated = await itemsOf(variant.items_file);
      for (const bench of variant.benchmarks) {
        const metric = bench.name === "tiny_mass" ? "acc" : "exact_match";
        assert.equal(bench.acc_norm, undefined, "a task that scores itself has its one metric");
        const cell = bench[metric] as Cell;
        const chance = bench.name === "tiny_mass" ? 0.5 : 0;
        const after = mean(ablated.filter((i) => i.benchmark === bench.name).map(byHand));
        close(cell.baseline, baselineOf(bench.name), `${variant.items_file} ${bench.name} baseline`);
        close(cell.ablated, after, `${variant.items_file} ${bench.name} ablated`);
        close(cell.chance, chance, `${bench.name} chance`);
        if (cell.ais !== null) close(cell.ais, (cell.baseline - after) / (cell.baseline - chance), `${bench.name} AIS`);
        cells++;
      }
    }
    assert.equal(cells, model.profile.variants.length * 2);
  },
);
