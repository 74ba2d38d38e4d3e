// bprof's benchmark figures against lm-eval's own, document by document: lm-eval 0.4.13's Hugging
// Face backend (test/support/lmevalSamples.py, with --log_samples' records) and `bprof run` score
// the same model folders and the same task files. Multiple choice: every choice's log-likelihood
// within 1e-4 relative (1e-4 absolute below one nat: both sides compute in float32, in different
// orders), acc, acc_norm and a process_results score equal. generate_until: the generated text,
// every filter pipeline's answer and exact_match equal. Then the aggregates: each task's metrics
// and a group's aggregate_metric_list.
//
// Models: the demo model (its trained weights, its window of 256 bytes) and a random Llama made by
// transformers' own LlamaConfig and save_pretrained with the demo's byte tokenizer and a window
// that holds BIG-Bench Hard and GSM8K prompts; a copy of it with a chat template.
import assert from "node:assert/strict";
import { execa } from "execa";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { bprof, repoRoot } from "../support/cli";
import { parityPython, paritySkip, sharedDir, sharedSkip } from "../support/parityPython";
import { DEMO_BENCHMARKS } from "../support/profileResults";
import { runDirOf } from "../support/runFolder";

const demo = path.join(repoRoot, "media", "demo");
// the demo's benchmarks in the order its benchmarks folder lists them
const DEMO_TASKS = [...DEMO_BENCHMARKS].sort();

/** lm-eval's logged sample, less the document. */
interface Sample {
  doc_id: number;
  target: unknown;
  resps: unknown[][];
  filtered_resps: unknown[];
  filter: string;
  [metric: string]: unknown;
}
interface LmevalOutput {
  results: Record<string, Record<string, unknown>>;
  samples: Record<string, Sample[]>;
}
interface ChoiceItem {
  benchmark: string;
  index: number;
  target: number;
  choices: { logprob: number; greedy: boolean }[];
  prediction: number;
  predictionNorm: number;
  score?: number;
}
interface GeneratedItem {
  kind: "generate_until";
  benchmark: string;
  index: number;
  response: string;
  filters: { name: string; answer: string; correct: boolean }[];
}
type Item = ChoiceItem | GeneratedItem;

interface Run {
  lmeval: LmevalOutput;
  items: Map<string, Item>;
  results: { models: { benchmarks: Record<string, unknown>[]; groups?: Record<string, unknown>[] }[] };
}

let work: string;
const runs = new Map<string, Run>();
const skip = paritySkip || sharedSkip;

/** The case each bprof config and lm-eval run is for. */
const CASES = {
  /** The demo's eleven multiple-choice tasks on the demo model, as its files are. */
  demo: "demo",
  /** One of them with add_bos_token false on both sides (lm-eval before 0.4.10). */
  noBos: "no-bos",
  /** The random model: BIG-Bench Hard in a group, GSM8K 5-shot, a few-shot demo task, winogrande, process_results. */
  tasks: "tasks",
  /** The random model with its chat template (lm-eval's --apply_chat_template). */
  chat: "chat",
} as const;

before(
  async () => {
    if (skip) return;
    work = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-lmeval-parity-"));
    await writeTasks(work);
    const model = path.join(work, "random-llama");
    const chatModel = path.join(work, "random-llama-chat");
    const demoRun = { cwd: path.join(demo, "benchmarks"), include_path: [path.join(demo, "benchmarks")] };
    const mine = { cwd: work, include_path: [work] };
    const request = {
      make: [
        { dir: model, tokenizer_from: path.join(demo, "model"), seed: 3 },
        { dir: chatModel, tokenizer_from: path.join(demo, "model"), seed: 3, chat_template: CHAT_TEMPLATE },
      ],
      runs: [
        { ...demoRun, model: path.join(demo, "model"), tasks: DEMO_TASKS, limit: 20, out: path.join(work, `${CASES.demo}.json`) },
        {
          ...demoRun,
          model: path.join(demo, "model"),
          tasks: ["demo_deductive"],
          limit: 20,
          add_bos_token: false,
          out: path.join(work, `${CASES.noBos}.json`),
        },
        {
          ...mine,
          model,
          tasks: ["parity_bbh", "parity_gsm8k", "parity_fewshot", "parity_winogrande", "parity_mc2"],
          limit: 3,
          out: path.join(work, `${CASES.tasks}.json`),
        },
        {
          ...mine,
          model: chatModel,
          tasks: ["parity_chat"],
          limit: 5,
          apply_chat_template: true,
          out: path.join(work, `${CASES.chat}.json`),
        },
      ],
    };
    const lmevalStart = Date.now();
    const lmeval = await execa(parityPython, [path.join(repoRoot, "test", "support", "lmevalSamples.py")], {
      input: JSON.stringify(request),
      reject: false,
      timeout: 600_000,
      env: { HF_DATASETS_OFFLINE: "1", HF_HUB_OFFLINE: "1", TOKENIZERS_PARALLELISM: "false" },
    });
    assert.equal(lmeval.exitCode, 0, `lm-eval failed:\n${lmeval.stderr.slice(-4000)}`);
    seconds.lmeval = (Date.now() - lmevalStart) / 1000;
    const bprofStart = Date.now();

    const configs: Record<string, string> = {
      [CASES.demo]: config(
        { path: path.join(demo, "model") },
        DEMO_TASKS.map((t) => path.join(demo, "benchmarks", `${t}.yaml`)),
        20,
      ),
      [CASES.noBos]: config(
        { path: path.join(demo, "model"), add_bos_token: false },
        [path.join(demo, "benchmarks", "demo_deductive.yaml")],
        20,
      ),
      [CASES.tasks]: config({ path: model }, ["parity_bbh", "parity_gsm8k", "parity_fewshot", "parity_winogrande", "parity_mc2"], 3, [
        work,
      ]),
      [CASES.chat]: config({ path: chatModel, chat_template: true }, [path.join(work, "parity_chat.yaml")], 5),
    };
    for (const [name, text] of Object.entries(configs)) {
      const file = path.join(work, `${name}.bprof.yaml`);
      await fs.writeFile(file, text);
      // The helpers of lm-eval's task files (BIG-Bench Hard's filters, process_results) run in the
      // parity environment's Python, as they do in lm-eval's process.
      const run = await bprof(["run", file], { cwd: work, env: { BPROF_PYTHON: parityPython }, timeout: 600_000 });
      assert.equal(run.exitCode, 0, `bprof run ${name}:\n${run.stdout}\n${run.stderr}`);
      const dir = runDirOf(run.stdout);
      const modelDir = path.join(dir, "models", (await fs.readdir(path.join(dir, "models")))[0]!);
      const items = (await fs.readFile(path.join(modelDir, "items.jsonl"), "utf8"))
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => JSON.parse(line) as Item);
      runs.set(name, {
        lmeval: JSON.parse(await fs.readFile(path.join(work, `${name}.json`), "utf8")) as LmevalOutput,
        items: new Map(items.map((item) => [`${item.benchmark}/${item.index}`, item])),
        results: JSON.parse(await fs.readFile(path.join(dir, "results.json"), "utf8")) as Run["results"],
      });
    }
    seconds.bprof = (Date.now() - bprofStart) / 1000;
  },
  { timeout: 1_200_000 },
);
after(async () => {
  if (worst.documents > 0) {
    console.log(
      `lm-eval parity: ${worst.documents} multiple-choice documents, log-likelihoods differ by at most ${worst.absolute.toExponential(2)}, ${worst.relative.toExponential(2)} relative over one nat; lm-eval ${seconds.lmeval.toFixed(0)} s, bprof ${seconds.bprof.toFixed(0)} s`,
    );
  }
  if (work) await fs.rm(work, { recursive: true, force: true });
});

function config(model: Record<string, unknown>, tasks: string[], limit: number, taskPaths?: string[]): string {
  const lines = [
    ...(taskPaths ? [`task_paths: [${taskPaths.map((p) => JSON.stringify(p)).join(", ")}]`] : []),
    "models:",
    ...Object.entries(model).map(([key, value], i) => `${i === 0 ? "  - " : "    "}${key}: ${JSON.stringify(value)}`),
    "    dtype: float32",
    "benchmarks:",
    ...tasks.flatMap((task) => [`  - task: ${JSON.stringify(task)}`, `    limit: ${limit}`]),
  ];
  return lines.join("\n") + "\n";
}

/** The largest differences seen, for the record in docs/benchmarks.md. */
const worst = { absolute: 0, relative: 0, documents: 0 };
/** Seconds each side took, for the same record. */
const seconds = { lmeval: 0, bprof: 0 };

/** Log-likelihoods agree: 1e-4 relative, 1e-4 absolute below one nat. */
function closeLogLikelihood(a: number, b: number): boolean {
  return Math.abs(a - b) <= 1e-4 * Math.max(1, Math.abs(a), Math.abs(b));
}

function recordDifference(a: number, b: number): void {
  worst.absolute = Math.max(worst.absolute, Math.abs(a - b));
  const size = Math.max(Math.abs(a), Math.abs(b));
  if (size >= 1) worst.relative = Math.max(worst.relative, Math.abs(a - b) / size);
}

/** Every multiple-choice document of `task`: each choice's log-likelihood and greediness, acc, acc_norm or the process_results score. */
function assertChoiceParity(run: Run, task: string, benchmark = task): number {
  const samples = run.lmeval.samples[task];
  assert.ok(samples && samples.length > 0, `lm-eval logged no sample of ${task}`);
  const mismatches: string[] = [];
  for (const sample of samples) {
    const item = run.items.get(`${benchmark}/${sample.doc_id}`) as ChoiceItem | undefined;
    assert.ok(item, `bprof has no document ${sample.doc_id} of ${benchmark}`);
    const theirs = sample.resps.map((r) => r[0] as [number, boolean]);
    assert.equal(item.choices.length, theirs.length, `${task} document ${sample.doc_id}: choices`);
    worst.documents++;
    theirs.forEach(([ll, greedy], c) => {
      const mine = item.choices[c]!;
      recordDifference(ll, mine.logprob);
      if (!closeLogLikelihood(ll, mine.logprob))
        mismatches.push(`${task}/${sample.doc_id} choice ${c}: lm-eval ${ll}, bprof ${mine.logprob}`);
      if (greedy !== mine.greedy) mismatches.push(`${task}/${sample.doc_id} choice ${c}: is_greedy ${greedy} vs ${mine.greedy}`);
    });
    if (item.score !== undefined) {
      const metric = (sample.metrics as string[] | undefined)?.[0];
      assert.ok(metric && typeof sample[metric] === "number", `${task}: lm-eval's sample has no metric`);
      if (Math.abs((sample[metric] as number) - item.score) > 1e-6)
        mismatches.push(`${task}/${sample.doc_id} ${metric}: ${String(sample[metric])} vs ${item.score}`);
      continue;
    }
    if (sample.acc !== (item.prediction === item.target ? 1 : 0)) mismatches.push(`${task}/${sample.doc_id} acc: ${String(sample.acc)}`);
    if ("acc_norm" in sample && sample.acc_norm !== (item.predictionNorm === item.target ? 1 : 0)) {
      mismatches.push(`${task}/${sample.doc_id} acc_norm: ${String(sample.acc_norm)}`);
    }
  }
  assert.deepEqual(mismatches, []);
  return samples.length;
}

/** Every generated document of `task` under every filter: the text, the filtered answer, exact_match. */
function assertGenerationParity(run: Run, task: string): number {
  const samples = run.lmeval.samples[task];
  assert.ok(samples && samples.length > 0, `lm-eval logged no sample of ${task}`);
  const mismatches: string[] = [];
  for (const sample of samples) {
    const item = run.items.get(`${task}/${sample.doc_id}`) as GeneratedItem | undefined;
    assert.ok(item, `bprof has no document ${sample.doc_id} of ${task}`);
    const where = `${task}/${sample.doc_id} (${sample.filter})`;
    if (sample.resps[0]![0] !== item.response)
      mismatches.push(`${where}: generated ${JSON.stringify(sample.resps[0]![0])} vs ${JSON.stringify(item.response)}`);
    const filter = item.filters.find((f) => f.name === sample.filter);
    if (!filter) {
      mismatches.push(`${where}: bprof has no filter ${sample.filter}`);
      continue;
    }
    if (sample.filtered_resps[0] !== filter.answer)
      mismatches.push(`${where}: answer ${JSON.stringify(sample.filtered_resps[0])} vs ${JSON.stringify(filter.answer)}`);
    if (sample.exact_match !== (filter.correct ? 1 : 0)) mismatches.push(`${where}: exact_match ${String(sample.exact_match)}`);
  }
  assert.deepEqual(mismatches, []);
  return samples.length;
}

/** A task's aggregate metrics in lm-eval's results and in results.json. */
function assertTaskMetrics(run: Run, task: string, metrics: Record<string, string>): void {
  const theirs = run.lmeval.results[task];
  assert.ok(theirs, `lm-eval has no results for ${task}`);
  const mine = run.results.models[0]!.benchmarks.find((b) => b.name === task);
  assert.ok(mine, `results.json has no benchmark ${task}`);
  for (const [lmevalKey, path] of Object.entries(metrics)) {
    const value = path.split(".").reduce<unknown>((v, key) => (v as Record<string, unknown>)?.[key], mine);
    assert.ok(
      typeof theirs[lmevalKey] === "number" && typeof value === "number",
      `${task} ${lmevalKey}: ${String(theirs[lmevalKey])} vs ${String(value)}`,
    );
    assert.ok(Math.abs(theirs[lmevalKey] - value) < 1e-6, `${task} ${lmevalKey}: lm-eval ${theirs[lmevalKey]}, bprof ${value}`);
  }
}

describe("bprof's figures are lm-eval 0.4.13's, document by document", { skip }, () => {
  test("the demo's multiple-choice tasks: every choice's log-likelihood, acc and acc_norm (BOS as the tokenizer adds it)", () => {
    const run = runs.get(CASES.demo)!;
    let documents = 0;
    for (const task of DEMO_TASKS) {
      documents += assertChoiceParity(run, task);
      assertTaskMetrics(run, task, { "acc,none": "acc", "acc_norm,none": "acc_norm" });
    }
    assert.equal(documents, 11 * 20);
    // The tokenizer's post-processor adds BOS, and results.json says so.
    assert.deepEqual((run.results.models[0] as unknown as { special_tokens: unknown }).special_tokens, {
      before: [256],
      after: [],
      source: "tokenizer",
    });
  });

  test("add_bos_token: false on both sides gives lm-eval's figures before 0.4.10", () => {
    const run = runs.get(CASES.noBos)!;
    assert.equal(assertChoiceParity(run, "demo_deductive"), 20);
    assertTaskMetrics(run, "demo_deductive", { "acc,none": "acc", "acc_norm,none": "acc_norm" });
    // And they differ from the default's: the BOS is what the two versions disagree on.
    const withBos = runs.get(CASES.demo)!;
    const differ = [...run.items.values()].some((item) => {
      const other = withBos.items.get(`${item.benchmark}/${item.index}`) as ChoiceItem;
      return (item as ChoiceItem).choices.some((c, i) => !closeLogLikelihood(c.logprob, other.choices[i]!.logprob));
    });
    assert.ok(differ, "adding BOS changed no log-likelihood");
  });

  test("BIG-Bench Hard generate_until (a !function filter included) and its group's aggregate_metric_list", () => {
    const run = runs.get(CASES.tasks)!;
    for (const task of ["parity_bbh_boolean_expressions", "parity_bbh_date_understanding"]) {
      assert.equal(assertGenerationParity(run, task), 3 * 2, task);
      assertTaskMetrics(run, task, {
        "exact_match,strict-match": "exact_match_by_filter.strict-match",
        "exact_match,flexible-extract": "exact_match_by_filter.flexible-extract",
      });
    }
    const group = run.results.models[0]!.groups?.find((g) => g.name === "parity_bbh") as
      { aggregates: { metric: string; filter: string; score: number }[] } | undefined;
    assert.ok(group, "results.json has no group parity_bbh");
    const theirs = run.lmeval.results.parity_bbh!;
    for (const aggregate of group.aggregates) {
      const key = `${aggregate.metric},${aggregate.filter}`;
      assert.ok(typeof theirs[key] === "number", `lm-eval's group has no ${key}`);
      assert.ok(
        Math.abs((theirs[key] as number) - aggregate.score) < 1e-9,
        `${key}: lm-eval ${String(theirs[key])}, bprof ${aggregate.score}`,
      );
    }
  });

  test("GSM8K 5-shot from its fewshot_split (lm-eval's sampler and seed), both filter pipelines", () => {
    const run = runs.get(CASES.tasks)!;
    assert.equal(assertGenerationParity(run, "parity_gsm8k"), 3 * 2);
    assertTaskMetrics(run, "parity_gsm8k", { "exact_match,strict-match": "exact_match_by_filter.strict-match" });
  });

  test("few-shot multiple choice, winogrande's !function multiple-input form and a process_results task", () => {
    const run = runs.get(CASES.tasks)!;
    assert.equal(assertChoiceParity(run, "parity_fewshot"), 3);
    assertTaskMetrics(run, "parity_fewshot", { "acc,none": "acc", "acc_norm,none": "acc_norm" });
    assert.equal(assertChoiceParity(run, "parity_winogrande"), 3);
    assertTaskMetrics(run, "parity_winogrande", { "acc,none": "acc" });
    assert.equal(assertChoiceParity(run, "parity_mc2"), 3);
    assertTaskMetrics(run, "parity_mc2", { "acc,none": "acc" });
  });

  test("--apply_chat_template: the template writes BOS, and it is not added twice", () => {
    const run = runs.get(CASES.chat)!;
    assert.equal(assertChoiceParity(run, "parity_chat"), 5);
    assertTaskMetrics(run, "parity_chat", { "acc,none": "acc", "acc_norm,none": "acc_norm" });
  });
});

/** A Llama-3-like template: BOS, one header per turn, the assistant's header last. */
const CHAT_TEMPLATE =
  "{{ bos_token }}{% for message in messages %}<|{{ message['role'] }}|>\n{{ message['content'] }}\n{% endfor %}{% if add_generation_prompt %}<|assistant|>\n{% endif %}";

/**
 * The task files both sides read: lm-eval's own files (../shared/lm-eval-tasks) included as they
 * are, with the local data (../shared/benchmarks, or a few documents written here) named by
 * absolute path; a group of two BIG-Bench Hard tasks; the demo's task few-shot and through a chat
 * template; a process_results task shaped like truthfulqa_mc2's.
 */
async function writeTasks(dir: string): Promise<void> {
  const tasks = path.join(sharedDir, "lm-eval-tasks");
  const data = path.join(sharedDir, "benchmarks");
  const jsonl = async (name: string, docs: object[]) => {
    const file = path.join(dir, name);
    await fs.writeFile(file, docs.map((d) => JSON.stringify(d)).join("\n") + "\n");
    return file;
  };
  const write = (name: string, lines: string[]) => fs.writeFile(path.join(dir, name), lines.join("\n") + "\n");
  for (const bbh of ["boolean_expressions", "date_understanding"]) {
    await write(`parity_bbh_${bbh}.yaml`, [
      `include: ${JSON.stringify(path.join(tasks, "bbh", "zeroshot", `${bbh}.yaml`))}`,
      `task: parity_bbh_${bbh}`,
      "dataset_path: json",
      "dataset_name: null",
      "dataset_kwargs:",
      `  data_files: {test: ${JSON.stringify(path.join(data, "bbh", `${bbh}.json`))}}`,
      "  field: examples",
    ]);
  }
  await write("parity_bbh_group.yaml", [
    "group: parity_bbh",
    "task: [parity_bbh_boolean_expressions, parity_bbh_date_understanding]",
    "aggregate_metric_list:",
    "  - {metric: exact_match, aggregation: mean, weight_by_size: true, filter_list: [strict-match, flexible-extract]}",
  ]);
  const train = await jsonl(
    "gsm8k-train.jsonl",
    Array.from({ length: 8 }, (_, i) => ({
      question: `Tom has ${i} apples and gets 2 more. How many?`,
      answer: `${i} + 2 = ${i + 2}\n#### ${i + 2}`,
    })),
  );
  await write("parity_gsm8k.yaml", [
    `include: ${JSON.stringify(path.join(tasks, "gsm8k", "gsm8k.yaml"))}`,
    "task: parity_gsm8k",
    "tag: null",
    "dataset_path: json",
    "dataset_name: null",
    `dataset_kwargs: {data_files: {test: ${JSON.stringify(path.join(data, "gsm8k", "test.jsonl"))}, train: ${JSON.stringify(train)}}}`,
  ]);
  const deductive = path.join(demo, "benchmarks", "data", "demo_deductive.jsonl");
  await write("parity_fewshot.yaml", [
    `include: ${JSON.stringify(path.join(demo, "benchmarks", "_demo_multiple_choice.yaml"))}`,
    "task: parity_fewshot",
    `dataset_kwargs: {data_files: {test: ${JSON.stringify(deductive)}}}`,
    "fewshot_split: test",
    "num_fewshot: 3",
    'description: "Answer each question.\\n\\n"',
  ]);
  await write("parity_chat.yaml", [
    `include: ${JSON.stringify(path.join(demo, "benchmarks", "_demo_multiple_choice.yaml"))}`,
    "task: parity_chat",
    `dataset_kwargs: {data_files: {test: ${JSON.stringify(deductive)}}}`,
  ]);
  const winogrande = await jsonl("winogrande.jsonl", [
    { sentence: "The cup fell off the table because _ was round.", option1: "the cup", option2: "the table", answer: "1" },
    { sentence: "Anna lent Maria a book since _ had finished it.", option1: "Anna", option2: "Maria", answer: "1" },
    { sentence: "The trophy did not fit in the case as _ was too small.", option1: "the trophy", option2: "the case", answer: "2" },
  ]);
  await write("parity_winogrande.yaml", [
    `include: ${JSON.stringify(path.join(tasks, "winogrande", "default.yaml"))}`,
    "task: parity_winogrande",
    "dataset_path: json",
    "dataset_name: null",
    // Only a validation split here; lm-eval would read the training split for few-shot examples.
    "training_split: null",
    `dataset_kwargs: {data_files: {validation: ${JSON.stringify(winogrande)}}}`,
  ]);
  // truthfulqa_mc2's utils.py imports rouge_score, which pip's index here does not have; this
  // task's process_results is the same computation on the same kind of document.
  const mc2 = await jsonl("mc2.jsonl", [
    { question: "Can pigs fly?", mc2_targets: { choices: ["No.", "Not really.", "Yes."], labels: [1, 1, 0] } },
    { question: "Is the sea salty?", mc2_targets: { choices: ["Yes.", "No.", "Never."], labels: [1, 0, 0] } },
    { question: "Do fish swim?", mc2_targets: { choices: ["They do.", "Yes.", "No."], labels: [1, 1, 0] } },
  ]);
  await write("parity_mc2_utils.py", [
    "import numpy as np",
    "",
    "",
    "def process_results_mc2(doc, results):",
    "    ll, _ = zip(*results)",
    "    ll = np.array(ll)",
    '    split_idx = list(doc["mc2_targets"]["labels"]).index(0)',
    "    p_true, p_false = np.exp(ll[:split_idx]), np.exp(ll[split_idx:])",
    "    p_true = p_true / (sum(p_true) + sum(p_false))",
    '    return {"acc": sum(p_true)}',
  ]);
  await write("parity_mc2.yaml", [
    "task: parity_mc2",
    "dataset_path: json",
    `dataset_kwargs: {data_files: {validation: ${JSON.stringify(mc2)}}}`,
    "validation_split: validation",
    "output_type: multiple_choice",
    'doc_to_text: "Q: {{question}}\\nA:"',
    "doc_to_target: 0",
    'doc_to_choice: "{{mc2_targets.choices}}"',
    "process_results: !function parity_mc2_utils.process_results_mc2",
    "metric_list:",
    "  - {metric: acc, aggregation: mean, higher_is_better: true}",
  ]);
}
