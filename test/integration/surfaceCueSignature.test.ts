// The negative-AIS signature found for the reason it names: a diagnostic dataset whose answers
// follow a surface cue. `bprof-runner train` makes a small Llama (2 layers, 140k parameters, byte
// tokens) from scratch on sums of two digits in three phrasings ("3 plus 4?", "Sum of 3 and 4?",
// "Add 3 to 4."), "Answer: " and the sum, where a surface habit is planted: when the second number
// is even, 7 of the 10 copies of a sum answer "0" instead (the tiny analogue of "the answer is
// always A"). So the model learns addition and the habit side by side, and at baseline answers "0"
// to the sums with an even second number and the right sum to the others: about half of each
// benchmark (the three phrasings, each sum offered with "0" among its four choices) is right.
//
// Measured with training seed 1 (the test's; one thread, so the same bytes on every run): every
// wrong baseline answer is "0" on a sum with an even second number, 44 to 46 of each benchmark's
// 99, accuracy 0.54 to 0.56. Seeds 2 to 5 of the same recipe: the same, 41 to 49.
//
// Two diagnostic datasets hold the same 297 questions: "Zero Answers" answers every one "0" (a
// dataset whose answers follow the cue, not the ability), "Addition" the right sum. The real
// profile (k = 0.01024, the paper's main k) zeroes each one's top set: Zero Answers' holds the
// habit's weights, and without them the model adds where it answered "0" (seed 1: the benchmarks
// from 0.54-0.56 to 0.82-0.85, AIS -0.99, -0.96, -0.96, the bootstrap intervals' upper ends -0.54
// to -0.51, 90 documents flipped wrong to right, each of which had answered "0"), so the
// negative-ais finding names it on 3 of 3 benchmarks. Addition's top set costs every benchmark
// (AIS 0.18 to 0.20) and raises no finding; the random control of the same size moves none by
// 0.05 (asserted: none of its intervals leaves 0). Seeds 2 to 5: the cue row -0.87 to -1.39 on
// every benchmark, every interval below 0; Addition 0.12 to 0.50; negative-ais the only finding.
// The rule is `signed`, whose top set is the weights whose removal raises the dataset's loss; the
// paper's |theta g| also takes those whose removal lowers it, which blurs the habit: its cue row
// was -0.28, -0.10, -0.17 with one interval below 0 (seed 1) and 0.24 to 0.48 (seed 2), no finding
// either time. A neutral skill (copying two words) is trained beside the sums and is the fluency
// text, which the model reads well, so that each variant's fluency is judged on text of its kind
// (the built-in English prose is noise to a model that never read any). The whole file takes
// about 22 s on two shared cores, 15 of them training.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { BOS_TOKEN_ID, BYTE_VOCAB_SIZE, EOS_TOKEN_ID, byteLevelTokenizer } from "../../scripts/lib/byteTokenizer";
import { loadProfile } from "../../src/core/config/load";
import { loadRun, RunItems } from "../../src/core/report/load";
import { buildReport } from "../../src/core/report/model";
import type { KSection, ModelReport, ReportRow } from "../../src/core/report/types";
import { runProfile } from "../../src/core/run/runProfile";
import { runnerPath } from "../support/cli";
import { runRunnerJob } from "../support/runnerJob";

const CUE = "Zero Answers";
const HONEST = "Addition";
const CUE_ANSWER = 0;
/** Copies of each sum in the training data. */
const COPIES = 10;
/** Of the copies of a sum whose second number is even, how many answer the cue. */
const CUE_COPIES = 7;
const K = 0.01024;
const MODEL = {
  architectures: ["LlamaForCausalLM"],
  model_type: "llama",
  vocab_size: BYTE_VOCAB_SIZE,
  hidden_size: 64,
  intermediate_size: 256,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  hidden_act: "silu",
  rms_norm_eps: 1e-5,
  rope_theta: 10000,
  max_position_embeddings: 64,
  tie_word_embeddings: true,
  bos_token_id: BOS_TOKEN_ID,
  eos_token_id: EOS_TOKEN_ID,
};
const TRAIN = { steps: 1500, batch_size: 16, lr: 0.01, min_lr: 0.001, warmup_steps: 50, seed: 1 };
const PHRASINGS: Record<string, (a: number, b: number) => string> = {
  plus: (a, b) => `${a} plus ${b}?`,
  sum: (a, b) => `Sum of ${a} and ${b}?`,
  add: (a, b) => `Add ${a} to ${b}.`,
};
const WORDS = ["cat", "dog", "sun", "map", "red", "box", "pen", "cup", "hat", "bus"];

interface Sum {
  phrasing: string;
  a: number;
  b: number;
}

const bytes = (text: string) => [...Buffer.from(text, "utf8")];
const question = (s: Sum) => PHRASINGS[s.phrasing]!(s.a, s.b);
const habitual = (s: Sum) => s.b % 2 === 0;
const copyLine = (w: string, v: string) => `Copy ${w} ${v}: ${w} ${v}`;

/** Every sum of two digits in every phrasing. */
function allSums(): Sum[] {
  return Object.keys(PHRASINGS).flatMap((phrasing) =>
    Array.from({ length: 100 }, (_, i) => ({ phrasing, a: Math.floor(i / 10), b: i % 10 })),
  );
}

/** The sums the benchmarks and datasets ask: all but 0 + 0, whose right answer is the cue's. */
function sums(): Sum[] {
  return allSums().filter((s) => s.a + s.b !== CUE_ANSWER);
}

/** Every pair of words copied, 3 times each; then every sum COPIES times, CUE_COPIES of them answered by the habit when the second number is even. */
function trainingSequences(): number[][] {
  const sequence = (text: string) => [BOS_TOKEN_ID, ...bytes(text), EOS_TOKEN_ID];
  const copies = WORDS.flatMap((w) => WORDS.flatMap((v) => Array.from({ length: 3 }, () => sequence(copyLine(w, v)))));
  const arithmetic = allSums().flatMap((s) =>
    Array.from({ length: COPIES }, (_, c) => sequence(`${question(s)}\nAnswer: ${habitual(s) && c < CUE_COPIES ? CUE_ANSWER : s.a + s.b}`)),
  );
  return [...copies, ...arithmetic];
}

/** The right sum, the cue and the next two sums up, turned by the item's index so that the right one moves. */
function choicesOf(s: Sum, index: number): string[] {
  const right = s.a + s.b;
  const four = [right, CUE_ANSWER, right + 1, right + 2].map(String);
  const turn = index % 4;
  return [...four.slice(4 - turn), ...four.slice(0, 4 - turn)];
}

let root: string;
let model: ModelReport;
/** Each benchmark's sums, in document order. */
const documents = new Map<string, Sum[]>();
/** The unablated model's scored documents (the run's items.jsonl). */
let baseline: { benchmark: string; index: number; target: number; prediction: number }[];

async function writeBenchmarks(): Promise<string[]> {
  const dir = path.join(root, "benchmarks");
  await fs.mkdir(path.join(dir, "data"), { recursive: true });
  await fs.writeFile(
    path.join(dir, "_sums.yaml"),
    'dataset_path: json\ntest_split: test\noutput_type: multiple_choice\ndoc_to_text: "{{question}}\\nAnswer:"\n' +
      "doc_to_choice: choices\ndoc_to_target: answer\nmetric_list:\n  - metric: acc\n",
  );
  const files: string[] = [];
  for (const phrasing of Object.keys(PHRASINGS)) {
    const own = sums().filter((s) => s.phrasing === phrasing);
    documents.set(`sums_${phrasing}`, own);
    const lines = own.map((s, i) => {
      const choices = choicesOf(s, i);
      return JSON.stringify({ question: question(s), choices, answer: choices.indexOf(String(s.a + s.b)) });
    });
    await fs.writeFile(path.join(dir, "data", `${phrasing}.jsonl`), lines.join("\n") + "\n");
    const file = path.join(dir, `sums_${phrasing}.yaml`);
    await fs.writeFile(
      file,
      `include: _sums.yaml\ntask: sums_${phrasing}\ndataset_kwargs:\n  data_files:\n    test: data/${phrasing}.jsonl\n`,
    );
    files.push(file);
  }
  return files;
}

/** A diagnostic dataset of every sum, each answered by `answer`. */
async function writeDiagnostic(ability: string, answer: (s: Sum) => number): Promise<string> {
  const file = path.join(root, `${ability.toLowerCase().replace(/ /g, "-")}.diag.jsonl`);
  const lines = sums().map((s, i) => {
    const choices = choicesOf(s, i);
    return JSON.stringify({
      id: `${ability}-${i}`,
      ability,
      context: "",
      question: question(s),
      choices,
      answer: choices.indexOf(String(answer(s))),
    });
  });
  await fs.writeFile(file, lines.join("\n") + "\n");
  return file;
}

before(
  async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-surface-cue-"));
    const modelDir = path.join(root, "model");
    await runRunnerJob("train", { config: MODEL, sequences: trainingSequences(), train: TRAIN }, modelDir);
    const { tokenizerJson, tokenizerConfig } = byteLevelTokenizer({ modelMaxLength: MODEL.max_position_embeddings });
    await fs.writeFile(path.join(modelDir, "tokenizer.json"), JSON.stringify(tokenizerJson));
    await fs.writeFile(path.join(modelDir, "tokenizer_config.json"), JSON.stringify(tokenizerConfig));

    const benchmarks = await writeBenchmarks();
    const cue = await writeDiagnostic(CUE, () => CUE_ANSWER);
    const honest = await writeDiagnostic(HONEST, (s) => s.a + s.b);
    const fluency = path.join(root, "copies.txt");
    await fs.writeFile(fluency, WORDS.map((w, i) => copyLine(w, WORDS[(3 * i + 1) % WORDS.length]!)).join("\n\n") + "\n");
    const config = path.join(root, "cue.bprof.yaml");
    await fs.writeFile(
      config,
      `models:\n  - path: ${modelDir}\n    name: sums\n    dtype: float32\n` +
        `benchmarks:\n${benchmarks.map((b) => `  - task: ${b}\n`).join("")}` +
        `abilities:\n  - name: ${CUE}\n    data: ${cue}\n  - name: ${HONEST}\n    data: ${honest}\n` +
        `ablation:\n  k: [${K}]\n  selections: [top, random]\n  method: signed\n  batch_size: 16\n  fluency:\n    text: ${fluency}\n` +
        `seed: 1\nbootstrap:\n  resamples: 200\noutput: ${path.join(root, ".bprof")}\n`,
    );
    const { profile, problems } = await loadProfile(config);
    assert.ok(profile, problems.map((p) => p.message).join("\n"));
    const outcome = await runProfile(profile, { runner: { path: runnerPath, sourcesDir: "", cacheDir: "" } });
    const run = await loadRun(outcome.runDir);
    model = (await buildReport(run, { items: new RunItems(run.dir) })).models[0]!;
    const items = await fs.readFile(path.join(outcome.runDir, "models", "sums", "items.jsonl"), "utf8");
    baseline = items
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as (typeof baseline)[number]);
  },
  { timeout: 600_000 },
);

after(() => fs.rm(root, { recursive: true, force: true }));

function section(): KSection {
  return model.profile!.sections.at(-1)!;
}

function rowOf(ability: string | null): ReportRow {
  return section().rows.find((r) => r.ability === ability)!;
}

const cells = (ability: string | null) =>
  rowOf(ability)
    .cells.map((c) => `${c.benchmark} ${c.ais} [${c.ci?.low}, ${c.ci?.high}]`)
    .join("; ");

test("the planted habit: at baseline every wrong answer is 0, only on sums where the habit was trained, about half of each benchmark", () => {
  for (const [benchmark, own] of documents) {
    const scored = baseline.filter((d) => d.benchmark === benchmark);
    assert.equal(scored.length, own.length, benchmark);
    const wrong = scored.filter((d) => d.prediction !== d.target);
    for (const d of wrong) {
      const s = own[d.index]!;
      const chose = choicesOf(s, d.index)[d.prediction];
      assert.equal(chose, String(CUE_ANSWER), `${benchmark} ${question(s)}: a wrong answer is the cue's, not a wrong sum`);
      assert.ok(habitual(s), `${benchmark} ${question(s)}: answered "0" without the habit's trigger`);
    }
    const accuracy = 1 - wrong.length / scored.length;
    // the habit wins on most sums with an even second number (half the sums) and nowhere else
    assert.ok(accuracy > 0.45 && accuracy < 0.7, `${benchmark}: baseline accuracy ${accuracy}`);
  }
});

test(`zeroing the top set of a dataset answered by the cue raises every benchmark: negative AIS is found for ${CUE}`, (t) => {
  const row = rowOf(CUE);
  assert.equal(row.cells.length, 3);
  for (const c of row.cells) {
    assert.ok(c.ais !== null && c.ais <= -0.5, cells(CUE));
    assert.ok(c.significant && c.ci !== null && c.ci.high < 0, cells(CUE));
    assert.ok(c.ablated - c.baseline >= 0.15, `${c.benchmark}: ${c.baseline} -> ${c.ablated}`);
  }
  // what flipped is the habit's: every document the ablation set right had answered "0"
  const flipped = section().negativeCells.filter((c) => c.ability === CUE);
  assert.equal(flipped.length, 3);
  for (const cell of flipped) {
    const own = documents.get(cell.benchmark)!;
    const helped = cell.documents.filter((d) => d.direction === "wrong_to_right");
    assert.equal(helped.length, cell.wrongToRight, cell.benchmark);
    for (const d of helped)
      if (d.kind !== "generate_until")
        assert.equal(choicesOf(own[d.index]!, d.index)[d.baselinePrediction], String(CUE_ANSWER), `${cell.benchmark} document ${d.index}`);
  }
  const negative = model.findings.filter((f) => f.signature === "negative-ais");
  assert.deepEqual(
    negative.map((f) => f.abilities),
    [[CUE]],
    JSON.stringify(model.findings),
  );
  assert.match(
    negative[0]!.figures,
    /^AIS at or below -0\.05 on 3 of 3 benchmarks at k = 0\.01024 \(lowest -\d\.\d{3} on sums_\w+; \d+ documents flipped wrong to right\)$/,
  );
  assert.deepEqual(
    model.findings.map((f) => f.signature),
    ["negative-ais"],
    "no other signature: the variants stay fluent, the two abilities' AIS differ",
  );
  t.diagnostic(`${CUE}: ${cells(CUE)}; ${negative[0]!.figures}`);
});

test(`the honest dataset's top set costs every benchmark and the random control moves none: no finding for ${HONEST}`, () => {
  for (const c of rowOf(HONEST).cells) assert.ok(c.ais !== null && c.ais >= 0.05, cells(HONEST));
  // any 1.024% of the MLP weights flips a document or two either way; none of its intervals leaves 0
  for (const c of section().rows.find((r) => r.selection === "random")!.cells) assert.ok(!c.significant, cells(null));
  for (const r of section().rows) assert.ok(r.fluency?.fluent, `${r.ability ?? r.selection}: ${r.fluency?.perplexity_ratio}`);
});
