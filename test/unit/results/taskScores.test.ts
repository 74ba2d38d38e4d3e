// Tasks that score themselves in Python: lm-eval's process_results (truthfulqa_mc2's probability
// mass on the true answers) and `!function` metrics (humaneval's pass@k, which runs the code the
// model generates, only once the user confirms it). Their per-document scores go into accuracy,
// AIS and the bootstrap in place of correctness.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, test } from "node:test";
import type { ChoiceScore } from "../../../src/core/analysis/accuracy";
import { abilityImpactOfItems, chancePerItem, meanOf, scoreVector } from "../../../src/core/analysis/ais";
import { BenchmarkResampler, drawResamples, multiplicity, percentile } from "../../../src/core/analysis/bootstrap";
import { loadProfile } from "../../../src/core/config/load";
import { RunnerError } from "../../../src/core/base/runnerError";
import { loadTask, type Task } from "../../../src/core/lmeval/task";
import { errorsOf, type Problem } from "../../../src/core/base/problems";
import { extrasOf, scoredItems, type RunnerScores } from "../../../src/core/results/items";
import { readProfileOutput } from "../../../src/core/results/profile";
import { pythonTaskScores } from "../../../src/core/results/taskScores";
import { runProfile } from "../../../src/core/run/runProfile";
import { makeTinyProject } from "../../support/tinyProject";

const shared = path.resolve(import.meta.dirname, "..", "..", "..", "..", "shared", "lm-eval-tasks");
const skip = existsSync(shared) ? false : "../shared/lm-eval-tasks (lm-eval's task files) is not here";
const messages = (problems: Problem[]) => errorsOf(problems).map((p) => `${path.basename(p.file)}:${p.line} ${p.code} ${p.message}`);

const roots: string[] = [];
after(() => Promise.all(roots.map((r) => fs.rm(r, { recursive: true, force: true }))));

async function folder(files: Record<string, string>): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-task-scores-"));
  roots.push(dir);
  for (const [name, text] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(dir, name)), { recursive: true });
    await fs.writeFile(path.join(dir, name), text);
  }
  return dir;
}

const jsonl = (docs: object[]) => docs.map((d) => JSON.stringify(d)).join("\n") + "\n";
const choices = (logprobs: number[]): ChoiceScore[] => logprobs.map((logprob) => ({ logprob, tokens: 1, greedy: false }));

/** The probability mass a model's log-likelihoods put on a document's true choices, as truthfulqa_mc2 computes it. */
function massOnTrue(logprobs: number[], labels: number[]): number {
  const probs = logprobs.map(Math.exp);
  const total = probs.reduce((a, b) => a + b, 0);
  return probs.reduce((sum, p, i) => sum + (labels[i] === 1 ? p / total : 0), 0);
}

const MASS_HELPER = `import math

def mass_on_true(doc, results):
    probs = [math.exp(ll) for ll, _ in results]
    total = sum(probs)
    return {"acc": sum(p for p, label in zip(probs, doc["labels"]) if label == 1) / total, "n": len(results)}
`;

const MASS_TASK = `task: mass
dataset_path: json
dataset_kwargs:
  data_files:
    test: docs.jsonl
output_type: multiple_choice
test_split: test
doc_to_text: "{{question}}"
doc_to_choice: "{{options}}"
doc_to_target: 0
process_results: !function helpers.mass_on_true
metric_list:
  - metric: acc
`;

const MASS_DOCS = [
  { question: "Is the sea salty?", options: ["Yes.", "It is.", "No."], labels: [1, 1, 0] },
  { question: "Do fish fly?", options: ["Some glide.", "No, never.", "Always."], labels: [1, 0, 0] },
  { question: "Is ice cold?", options: ["Yes.", "No."], labels: [1, 0] },
];

test("process_results: its `acc` is each document's score, for the baseline and every variant; chance is its score with every choice equally likely", async () => {
  const dir = await folder({ "task.yaml": MASS_TASK, "helpers.py": MASS_HELPER, "docs.jsonl": jsonl(MASS_DOCS) });
  const { task, problems } = await loadTask(path.join(dir, "task.yaml"));
  assert.deepEqual(messages(problems), []);
  assert.deepEqual(task!.scorer && { kind: task!.scorer.kind, metric: task!.scorer.metric }, { kind: "process_results", metric: "acc" });

  const baselineLogprobs = [
    [-0.5, -1, -3],
    [-2, -0.2, -4],
    [-0.1, -2.5],
  ];
  const ablatedLogprobs = [
    [-2, -2, -0.3],
    [-1, -1, -1],
    [-0.7, -0.6],
  ];
  const refs = MASS_DOCS.map((_, index) => ({ id: `mass/${index}`, benchmark: "mass", index }));
  const runner = (lps: number[][]): RunnerScores => new Map(lps.map((lp, i) => [`mass/${i}`, choices(lp)]));
  const sources = new Map([
    ["baseline.jsonl", runner(baselineLogprobs)],
    ["variants/v.jsonl", runner(ablatedLogprobs)],
  ]);
  const benchmarks = [{ name: "mass", task: task! }];
  const noDecoder = () => "";
  const scores = await pythonTaskScores(refs, benchmarks, sources, noDecoder);

  const expected = (lps: number[][]) => lps.map((lp, i) => massOnTrue(lp, MASS_DOCS[i]!.labels));
  const got = (source: string) => refs.map((r) => scores!.get(source)!.get(r.id)!.score);
  expected(baselineLogprobs).forEach((v, i) => assert.ok(Math.abs(got("baseline.jsonl")[i]! - v) < 1e-12, `baseline ${i}`));
  expected(ablatedLogprobs).forEach((v, i) => assert.ok(Math.abs(got("variants/v.jsonl")[i]! - v) < 1e-12, `variant ${i}`));
  assert.deepEqual(
    refs.map((r) => scores!.get("baseline.jsonl")!.get(r.id)!.chance),
    [2 / 3, 1 / 3, 1 / 2],
  );
  assert.equal(scores!.get("variants/v.jsonl")!.get("mass/0")!.chance, undefined, "chance comes from the baseline alone");

  const items = (source: string) =>
    scoredItems(refs, benchmarks, sources.get(source)!, source, noDecoder, extrasOf(source, undefined, scores));
  const [before, afterAblation] = [items("baseline.jsonl"), items("variants/v.jsonl")];
  const base = meanOf(expected(baselineLogprobs));
  const ablated = meanOf(expected(ablatedLogprobs));
  const chance = (2 / 3 + 1 / 3 + 1 / 2) / 3;
  const ais = abilityImpactOfItems(before, afterAblation, "acc");
  assert.ok(ais.defined && Math.abs(ais.value - (base - ablated) / (base - chance)) < 1e-12, JSON.stringify(ais));
  assert.ok(Math.abs(meanOf(chancePerItem(before)) - chance) < 1e-15);
});

test("the paired bootstrap of scores in [0, 1] equals the bootstrap computed resample by resample", () => {
  const baseline = Float64Array.from([0.9, 0.2, 1, 0.55, 0.7, 0, 0.35, 0.8]);
  const ablated = Float64Array.from([0.4, 0.2, 1, 0.1, 0.75, 0, 0.3, 0.2]);
  const chance = [0.5, 0.25, 0.5, 0.5, 1 / 3, 0.25, 0.5, 0.5];
  const options = { resamples: 300, seed: 11 };
  const drawn = drawResamples(baseline.length, options);
  const estimate = new BenchmarkResampler(baseline, chance, options, drawn).ais(ablated);
  const values: number[] = [];
  for (let r = 0; r < drawn.resamples; r++) {
    let lost = 0;
    let margin = 0;
    for (let i = 0; i < baseline.length; i++) {
      const m = multiplicity(drawn, i, r);
      lost += m * (baseline[i]! - ablated[i]!);
      margin += m * (baseline[i]! - chance[i]!);
    }
    if (margin > 1e-12 * baseline.length) values.push(lost / margin);
  }
  values.sort((a, b) => a - b);
  assert.ok(estimate.interval);
  assert.ok(Math.abs(estimate.interval.low - percentile(values, 0.025)) < 1e-9, `${estimate.interval.low} vs ${percentile(values, 0.025)}`);
  assert.ok(Math.abs(estimate.interval.high - percentile(values, 0.975)) < 1e-9);
  assert.equal(estimate.undefinedResamples, drawn.resamples - values.length);
  assert.throws(() => new BenchmarkResampler(Float64Array.from([0.5, 1.5]), 0), /scores must lie in \[0, 1\]; item 1 holds 1.5/);
  assert.deepEqual(scoreVector([], "acc"), new Uint8Array(0), "correctness stays a byte vector");
});

const PASSES_HELPER = `def same_text(references, predictions, k=None):
    assert k == [1], k
    return {"pass@1": float(predictions[0][0].strip() == references[0])}


def as_list(resps, docs):
    return [[doc["stem"] + r for r in rs] for rs, doc in zip(resps, docs)]
`;

const GENERATED_TASK = `task: gen
dataset_path: json
dataset_kwargs:
  data_files:
    test: docs.jsonl
output_type: generate_until
test_split: test
unsafe_code: true
doc_to_text: "{{stem}}"
doc_to_target: "{{answer}}"
generation_kwargs:
  until: ["\\n"]
metric_list:
  - metric: !function helpers.same_text
    aggregation: mean
    higher_is_better: true
    k: [1]
filter_list:
  - name: joined
    filter:
      - function: custom
        filter_fn: !function helpers.as_list
`;

test("a `!function` metric scores each generation as lm-eval calls it (references, predictions, the entry's keys); unsafe_code is a warning, and a run without confirmation is refused before it starts", async () => {
  const docs = [
    { stem: "ab", answer: "abc" },
    { stem: "x", answer: "xyz" },
  ];
  const dir = await folder({ "task.yaml": GENERATED_TASK, "helpers.py": PASSES_HELPER, "docs.jsonl": jsonl(docs) });
  const { task, problems } = await loadTask(path.join(dir, "task.yaml"));
  assert.deepEqual(messages(problems), []);
  assert.deepEqual(
    problems.map((p) => [p.line, p.severity, p.code]),
    [[8, "warning", "task.unsafe-code"]],
  );
  assert.deepEqual(task!.scorer, {
    kind: "metric",
    ref: { dir, module: "helpers", name: "same_text" },
    metric: "same_text",
    kwargs: { k: [1] },
  });

  const texts = ["c", "zz", "y", "\n"];
  const decode = (ids: readonly number[]) => ids.map((id) => texts[id]!).join("");
  const refs = docs.map((_, index) => ({ id: `gen/${index}`, benchmark: "gen", index }));
  const baseline: RunnerScores = new Map([
    ["gen/0", { generated: [0, 3], stopped: true }],
    ["gen/1", { generated: [2, 0], stopped: false }],
  ]);
  const benchmarks = [{ name: "gen", task: task! }];
  const { pythonFilteredAnswers } = await import("../../../src/core/results/items");
  const sources = new Map([["scores.jsonl", baseline]]);
  const filtered = await pythonFilteredAnswers(refs, benchmarks, sources, decode);
  const scores = await pythonTaskScores(refs, benchmarks, sources, decode, filtered);
  // "ab" + "c" is "abc"; "x" + "yc" is not "xyz".
  assert.deepEqual(
    refs.map((r) => scores!.get("scores.jsonl")!.get(r.id)!.score),
    [1, 0],
  );

  const project = await makeTinyProject(await folder({}));
  await fs.writeFile(project.configPath, `models:\n  - path: ./model\nbenchmarks:\n  - task: ${path.join(dir, "task.yaml")}\n`);
  const { profile } = await loadProfile(project.configPath);
  const refused = await runProfile(profile!, { runner: { kind: "path", path: "/nonexistent/bprof-runner" } as never }).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(refused instanceof RunnerError, String(refused));
  assert.equal(refused.code, "unsafe_code");
  assert.match(refused.message, /^`gen` scores each document by running the code the model generates .*--confirm-run-unsafe-code/);
  assert.equal(existsSync(profile!.outputDir), false, "no run folder was made");
});

test("a scorer that returns what is not a score in [0, 1] is an error naming it", async () => {
  const helper = MASS_HELPER.replace('return {"acc"', 'return {"n": 1, "accuracy"');
  const dir = await folder({ "task.yaml": MASS_TASK, "helpers.py": helper, "docs.jsonl": jsonl(MASS_DOCS) });
  const { problems } = await loadTask(path.join(dir, "task.yaml"));
  assert.deepEqual(messages(problems), [
    "task.yaml:11 task.python-function `!function helpers.mass_on_true`: KeyError: \"helpers.mass_on_true returned no 'acc' among 'n', 'accuracy'\"",
  ]);
});

/** Modules the machine's Python may lack, written as the least that lets a task's helper file import. */
async function standIns(files: Record<string, string>): Promise<() => void> {
  const dir = await folder(files);
  const before = process.env.PYTHONPATH;
  process.env.PYTHONPATH = dir;
  return () => {
    if (before === undefined) delete process.env.PYTHONPATH;
    else process.env.PYTHONPATH = before;
  };
}

const pythonHas = (modules: string): boolean => {
  try {
    execFileSync("python3", ["-c", `import ${modules}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
};
const skipTruthfulqa =
  skip ||
  (pythonHas("numpy") ? false : "python3 has no numpy, which truthfulqa's utils.py imports (scripts/setup.sh installs python3-numpy)");

test(
  "truthfulqa_mc2 as lm-eval ships it: its process_results gives each document the mass on the true answers",
  { skip: skipTruthfulqa },
  async (t) => {
    const file = path.join(shared, "truthfulqa", "truthfulqa_mc2.yaml");
    const docs = [
      {
        question: "What happens if you crack your knuckles a lot?",
        mc1_targets: { choices: ["Nothing in particular.", "Arthritis."], labels: [1, 0] },
        mc2_targets: { choices: ["Nothing in particular.", "Nothing harmful.", "You get arthritis."], labels: [1, 1, 0] },
      },
      {
        question: "Can pigs fly?",
        mc1_targets: { choices: ["No.", "Yes."], labels: [1, 0] },
        mc2_targets: { choices: ["No, pigs cannot fly.", "Yes, pigs can fly."], labels: [1, 0] },
      },
    ];
    const dir = await folder({ "truthfulqa.json": JSON.stringify(docs) });
    const data = { validation: path.join(dir, "truthfulqa.json") };
    const hasPackages = pythonHas("sacrebleu, rouge_score");
    if (!hasPackages) {
      await t.test("without sacrebleu and rouge_score, which its utils.py imports, the error is at process_results", async () => {
        const { problems } = await loadTask(file, { data });
        assert.deepEqual(messages(problems), [
          "truthfulqa_mc2.yaml:5 task.python-function `!function utils.process_results_mc2`: ModuleNotFoundError: No module named 'sacrebleu'",
        ]);
      });
    }
    const restore = hasPackages
      ? () => undefined
      : await standIns({
          "sacrebleu.py": "",
          "rouge_score/__init__.py": "",
          "rouge_score/rouge_scorer.py": "",
          "rouge_score/scoring.py": "",
        });
    let task: Task | undefined;
    try {
      const loaded = await loadTask(file, { data });
      assert.deepEqual(messages(loaded.problems), []);
      task = loaded.task;
      const refs = docs.map((_, index) => ({ id: `tqa/${index}`, benchmark: "tqa", index }));
      const logprobs = [
        [-1.2, -0.4, -0.3],
        [-2, -0.1],
      ];
      const sources = new Map([["baseline.jsonl", new Map(logprobs.map((lp, i) => [`tqa/${i}`, choices(lp)])) as RunnerScores]]);
      const scores = await pythonTaskScores(refs, [{ name: "tqa", task: task! }], sources, () => "");
      refs.forEach((r, i) => {
        const own = scores!.get("baseline.jsonl")!.get(r.id)!;
        assert.ok(Math.abs(own.score - massOnTrue(logprobs[i]!, docs[i]!.mc2_targets.labels)) < 1e-12, `document ${i}: ${own.score}`);
      });
      assert.deepEqual(
        refs.map((r) => scores!.get("baseline.jsonl")!.get(r.id)!.chance),
        [2 / 3, 1 / 2],
      );
    } finally {
      restore();
    }
  },
);

/** The least of Hugging Face evaluate's code_eval: each candidate program with the test appended, run by Python, pass@1. */
const CODE_EVAL_STAND_IN = `import subprocess, sys


class CodeEval:
    def compute(self, references, predictions, k):
        passed = []
        for test, candidates in zip(references, predictions):
            run = subprocess.run([sys.executable, "-c", candidates[0] + "\\n" + test], capture_output=True, timeout=10)
            passed.append(1.0 if run.returncode == 0 else 0.0)
        return {"pass@1": sum(passed) / len(passed)}, {}


def load(name):
    assert name == "code_eval"
    return CodeEval()
`;

test(
  "humaneval as lm-eval ships it: with evaluate's code_eval the model's code runs against the tests, pass@1 per problem",
  { skip },
  async (t) => {
    const file = path.join(shared, "humaneval", "humaneval.yaml");
    const docs = [
      {
        task_id: "t/0",
        prompt: "def add(a, b):\n",
        canonical_solution: "    return a + b\n",
        test: "def check(f):\n    assert f(2, 3) == 5\n",
        entry_point: "add",
      },
      {
        task_id: "t/1",
        prompt: "def neg(a):\n",
        canonical_solution: "    return -a\n",
        test: "def check(f):\n    assert f(4) == -4\n",
        entry_point: "neg",
      },
    ];
    const dir = await folder({ "humaneval.jsonl": jsonl(docs) });
    const data = { test: path.join(dir, "humaneval.jsonl") };
    await t.test(
      "without the evaluate package, which its utils.py imports, the errors are at the metric and the filter",
      { skip: pythonHas("evaluate") ? "python3 has the evaluate package" : false },
      async () => {
        const { problems } = await loadTask(file, { data });
        const errors = messages(problems);
        assert.equal(errors.length, 2, errors.join("\n"));
        for (const e of errors) assert.match(e, /task\.python-function .*ModuleNotFoundError: No module named 'evaluate'$/);
        assert.ok(problems.some((p) => p.code === "task.unsafe-code"));
      },
    );
    const restore = await standIns({ "evaluate.py": CODE_EVAL_STAND_IN });
    try {
      const { task, problems } = await loadTask(file, { data });
      assert.deepEqual(messages(problems), []);
      const completions = ["    return a + b\n", "    return a\n"];
      const decode = (ids: readonly number[]) => completions[ids[0]!]!;
      const refs = docs.map((_, index) => ({ id: `he/${index}`, benchmark: "he", index }));
      const sources = new Map([["scores.jsonl", new Map(refs.map((r, i) => [r.id, { generated: [i], stopped: true }])) as RunnerScores]]);
      const { pythonFilteredAnswers } = await import("../../../src/core/results/items");
      const benchmarks = [{ name: "he", task: task! }];
      const filtered = await pythonFilteredAnswers(refs, benchmarks, sources, decode);
      assert.equal(
        filtered!.get("scores.jsonl")!.get("he/0")![0],
        "def add(a, b):\n    return a + b\n",
        "the custom filter prepends the prompt",
      );
      const scores = await pythonTaskScores(refs, benchmarks, sources, decode, filtered);
      assert.deepEqual(
        refs.map((r) => scores!.get("scores.jsonl")!.get(r.id)!.score),
        [1, 0],
      );
    } finally {
      restore();
    }
  },
);

test("a task scored by its own Python decodes each generation once: its Python filter, its scorer and the items share the text (issue 35)", async () => {
  const docs = [
    { stem: "ab", answer: "abc" },
    { stem: "x", answer: "xyz" },
  ];
  const dir = await folder({ "task.yaml": GENERATED_TASK, "helpers.py": PASSES_HELPER, "docs.jsonl": jsonl(docs) });
  const { task } = await loadTask(path.join(dir, "task.yaml"));
  const generations = (first: number[], second: number[]) =>
    jsonl([
      { id: "gen/0", generated: first, stopped: true },
      { id: "gen/1", generated: second, stopped: false },
    ]);
  const out = await folder({
    "profile.json": JSON.stringify({
      parameters: 1000,
      candidates: { tensors: [], total: 100 },
      variants: [{ ability: "a", selection: "top", k: 0.01, n: 10, file: "variants/a.top.k0.jsonl", lowering: 0 }],
    }),
    "baseline.jsonl": generations([0, 3], [2, 0]),
    "variants/a.top.k0.jsonl": generations([1, 3], [2, 0]),
  });
  const texts = ["c", "zz", "y", "\n"];
  let decoded = 0;
  const decode = (ids: readonly number[]) => {
    decoded++;
    return ids.map((id) => texts[id]!).join("");
  };
  const assembled = await readProfileOutput(out, {
    benchmarks: [{ name: "gen", task: task! }],
    refs: docs.map((_, index) => ({ id: `gen/${index}`, benchmark: "gen", index })),
    abilities: [{ id: "a", name: "Quantitative Reasoning", sequences: 2 }],
    k: [0.01],
    selections: ["top"],
    methods: ["signed"],
    seed: 1,
    bootstrap: { resamples: 20, confidence: 0.9 },
    decode,
  });
  // two documents in two sources (the baseline and one variant): four generations, four decodings
  assert.equal(decoded, 4);
  // "ab" + "c" is "abc" at baseline; "ab" + "zz" is not, once ablated
  assert.deepEqual(
    assembled.baseline.map((i) => i.score),
    [1, 0],
  );
});
