// generate_until benchmarks from the runner's tokens to AIS: decode with the model's tokenizer,
// cut at the first `until` string, filter, exact_match (on real GSM8K and BIG-Bench Hard documents
// from ../shared/benchmarks, read in place); the job's generate items; AIS with chance 0.
import assert from "node:assert/strict";
import { existsSync, promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { abilityImpactOfItems, chancePerItem, scoreVector, isCorrect, metricsOf } from "../../../src/core/analysis/ais";
import { scoreItem } from "../../../src/core/analysis/accuracy";
import { BenchmarkResampler } from "../../../src/core/analysis/bootstrap";
import { cellFlips } from "../../../src/core/analysis/flips";
import { applyFilters, type FilterPipeline, type FilterStep } from "../../../src/core/lmeval/exactMatch";
import {
  benchmarkExactMatch,
  cutAtStop,
  scoreGeneration,
  type GeneratedItem,
  type GenerationRules,
} from "../../../src/core/analysis/generation";
import type { ResolvedBenchmark } from "../../../src/core/config/load";
import { loadTask, type GenerationItem, type Task } from "../../../src/core/lmeval/task";
import { BOS_TOKEN_ID, byteLevelTokenizer, EOS_TOKEN_ID } from "../../../scripts/lib/byteTokenizer";
import { compileScoreJob, generateSpec, type GenerateJobItem } from "../../../src/core/plan/job";
import { loadTokenizer, type ModelTokenizer } from "../../../src/core/prompts/tokenize";
import { baselineAccuracies } from "../../../src/core/results/profile";
import { scoredItems, type RunnerScores } from "../../../src/core/results/items";

const tasks = path.join(import.meta.dirname, "..", "..", "fixtures", "tasks");
/** The fixtures' data files are ../shared/benchmarks, read in place: a clone without it skips these tests. */
const skipShared = existsSync(path.resolve(import.meta.dirname, "..", "..", "..", "..", "shared", "benchmarks"))
  ? false
  : "../shared/benchmarks (GSM8K and BIG-Bench Hard, read in place) is not here";

/** The byte-level tokenizer's ids are the UTF-8 bytes: an encoding independent of the tokenizer code. */
const utf8 = (text: string) => [...Buffer.from(text, "utf8")];

let dir: string;
let tokenizer: ModelTokenizer;
let gsm8k: Task;
let bbh: Task;

before(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-generation-"));
  const { tokenizerJson, tokenizerConfig } = byteLevelTokenizer();
  await fs.writeFile(path.join(dir, "tokenizer.json"), JSON.stringify(tokenizerJson));
  await fs.writeFile(path.join(dir, "tokenizer_config.json"), JSON.stringify(tokenizerConfig));
  tokenizer = await loadTokenizer(dir);
  gsm8k = (await loadTask(path.join(tasks, "gsm8k.yaml"), { limit: 3 })).task!;
  bbh = (await loadTask(path.join(tasks, "bbh_zeroshot_boolean_expressions.yaml"), { limit: 4 })).task!;
});
after(async () => fs.rm(dir, { recursive: true, force: true }));

const rulesOf = (task: Task): GenerationRules => ({ until: task.generation!.until, filters: task.filters, exactMatch: task.exactMatch });

/** The runner's line for a generation: the tokens of `text`, then `stop` (a stop sequence it matched) if any. */
function generated(task: Task, index: number, text: string, stop?: number[]): GeneratedItem {
  const item = task.items[index] as GenerationItem;
  const tokens = [...utf8(text), ...(stop ?? [])];
  return scoreGeneration(task.name, index, item.target, tokens, stop !== undefined, tokenizer.decode, rulesOf(task));
}

test("the tokenizer decodes generated ids to text, skipping special tokens, and knows its EOS", () => {
  assert.equal(tokenizer.eosTokenId, EOS_TOKEN_ID);
  assert.equal(tokenizer.decode([...utf8("Hé #### 18"), EOS_TOKEN_ID]), "Hé #### 18");
  assert.equal(tokenizer.decode([BOS_TOKEN_ID, ...utf8("x")]), "x");
  assert.equal(tokenizer.decode([]), "");
  // A UTF-8 sequence cut by max_gen_toks decodes with a replacement character, as Python's errors="replace" does.
  assert.equal(tokenizer.decode([0x41, 0xe6, 0x97]), "A\ufffd");
});

test("the cut is at the first occurrence of any until string; empty strings stop nothing", () => {
  assert.equal(cutAtStop("a Q: b Question: c", ["Question:", "Q:"]), "a ");
  assert.equal(cutAtStop("no stop here", ["Question:"]), "no stop here");
  assert.equal(cutAtStop("x\n\ny", ["", "\n\n"]), "x");
  assert.equal(cutAtStop("Question: at once", ["Question:"]), "");
});

test("GSM8K documents 0-2: decode, cut at `Question:`, strict-match and flexible-extract, exact_match", { skip: skipShared }, () => {
  assert.deepEqual(
    gsm8k.filters.map((f) => f.name),
    ["strict-match", "flexible-extract"],
  );
  // Document 0 (target "... #### 18"): the answer in lm-eval's format, the runner stopped on "Question:".
  const right = generated(gsm8k, 0, " She sells 16 - 3 - 4 = 9 eggs for $2 each: 9 * 2 = 18.\n#### 18\n\n", utf8("Question:"));
  assert.equal(right.generation, " She sells 16 - 3 - 4 = 9 eggs for $2 each: 9 * 2 = 18.\n#### 18\n\nQuestion:");
  assert.equal(right.response, " She sells 16 - 3 - 4 = 9 eggs for $2 each: 9 * 2 = 18.\n#### 18\n\n");
  assert.equal(right.stopped, true);
  assert.deepEqual(right.filters, [
    { name: "strict-match", answer: "18", correct: true },
    { name: "flexible-extract", answer: "18", correct: true },
  ]);
  assert.deepEqual([right.answer, right.correct, right.target.endsWith("#### 18")], ["18", true, true]);

  // Document 1 (target "... #### 3"): no "####", so strict-match falls back to [invalid]; the last number is 3.
  const unmarked = generated(gsm8k, 1, " It takes 2 / 2 = 1 bolt of white fiber, so 2 + 1 = 3 bolts in total.", [EOS_TOKEN_ID]);
  assert.equal(unmarked.response, " It takes 2 / 2 = 1 bolt of white fiber, so 2 + 1 = 3 bolts in total.", "EOS is skipped in decoding");
  assert.deepEqual(unmarked.filters, [
    { name: "strict-match", answer: "[invalid]", correct: false },
    { name: "flexible-extract", answer: "3", correct: true },
  ]);
  assert.equal(unmarked.correct, false, "the first filter (strict-match) is the benchmark's exact_match");

  // Document 2 (target "... #### 70000"): "70,000" matches once "," is ignored; an answer after the stop string does not count.
  assert.equal(generated(gsm8k, 2, " His profit is 200,000 - 130,000 = $70,000.\n#### 70,000").correct, true);
  const late = generated(gsm8k, 2, " He bought it for $80,000.\n\nQuestion: What is his profit?\nAnswer: #### 70000");
  assert.equal(late.stopped, false, "the runner did not see the stop (max_gen_toks), the text cut still applies");
  assert.equal(late.response, " He bought it for $80,000.\n\n");
  assert.deepEqual(
    late.filters.map((f) => [f.answer, f.correct]),
    [
      ["[invalid]", false],
      ["$80,000.", false],
    ],
  );

  const summary = benchmarkExactMatch(
    [right, unmarked, late],
    gsm8k.filters.map((f) => f.name),
  );
  assert.deepEqual(summary, {
    items: 3,
    exact_match: 1 / 3,
    chance: 0,
    filter: "strict-match",
    exact_match_by_filter: { "strict-match": 1 / 3, "flexible-extract": 2 / 3 },
  });
});

test(
  "BIG-Bench Hard boolean_expressions: no filter_list (take_first), case, a final period and newlines ignored",
  { skip: skipShared },
  () => {
    assert.deepEqual(bbh.filters, [{ name: "none", steps: [{ function: "take_first" }] }]);
    assert.equal((bbh.items[0] as GenerationItem).target, "False");
    assert.equal(generated(bbh, 0, "False", [EOS_TOKEN_ID]).correct, true);
    assert.equal(generated(bbh, 0, "false.").correct, true);
    const cut = generated(bbh, 0, "False\n\n", utf8("Q:"));
    assert.deepEqual([cut.response, cut.answer, cut.correct], ["False\n\n", "False\n\n", true]);
    // lm-eval compares the response as it is: a leading space is a different string.
    assert.equal(generated(bbh, 0, " False").correct, false);
    assert.equal(generated(bbh, 1, "True").correct, true);
    assert.equal(generated(bbh, 1, "False").correct, false);
  },
);

test("the job: a generate item per document, until strings tokenized without special tokens, EOS last", { skip: skipShared }, () => {
  const benchmarks: ResolvedBenchmark[] = [
    { name: "gsm8k", task: gsm8k },
    { name: "bbh", task: bbh },
  ];
  const { job, refs } = compileScoreJob({ name: "m", path: dir, dtype: "float32" }, benchmarks, tokenizer, "cpu");
  assert.equal(job.items.length, 7);
  assert.deepEqual(
    refs.map((r) => r.id),
    ["gsm8k/0", "gsm8k/1", "gsm8k/2", "bbh/0", "bbh/1", "bbh/2", "bbh/3"],
  );
  const first = job.items[0] as GenerateJobItem;
  assert.equal("choices" in first, false);
  // The whole context after BOS: lm-eval 0.4.10+ encodes it with the tokenizer's special tokens.
  assert.deepEqual(first.context, [BOS_TOKEN_ID, ...utf8((gsm8k.items[0] as GenerationItem).context)]);
  assert.deepEqual(first.generate, { max_tokens: 256, stop: [utf8("Question:"), utf8("</s>"), utf8("<|im_end|>"), [EOS_TOKEN_ID]] });
  assert.deepEqual((job.items[3] as GenerateJobItem).generate, {
    max_tokens: 256,
    stop: [utf8("</s>"), utf8("Q:"), utf8("<|im_end|>"), [EOS_TOKEN_ID]],
  });
  assert.deepEqual(JSON.parse(JSON.stringify(job.items[4])), {
    id: "bbh/1",
    context: [BOS_TOKEN_ID, ...utf8("Q: True and not not ( not False ) is\nA:")],
    generate: { max_tokens: 256, stop: [utf8("</s>"), utf8("Q:"), utf8("<|im_end|>"), [EOS_TOKEN_ID]] },
  });
});

test("stop sequences: empty until strings are left out, repeats once, EOS only when the tokenizer has one", () => {
  assert.deepEqual(generateSpec(tokenizer, ["", "\n\n", "\n\n", "A"], 8), { max_tokens: 8, stop: [[10, 10], [65], [EOS_TOKEN_ID]] });
  // A tokenizer that reads "</s>" as its EOS token: one stop sequence, not two.
  const llama2: ModelTokenizer = {
    encode: (t) => (t === "</s>" ? [2] : utf8(t)),
    specials: { before: [1], after: [], source: "tokenizer" },
    bosText: { loglikelihood: "<s>", generation: "<s>" },
    prefixTokenId: 1,
    decode: () => "",
    eosTokenId: 2,
  };
  assert.deepEqual(generateSpec(llama2, ["</s>", "Q:"], 16).stop, [[2], utf8("Q:")]);
  const noEos: ModelTokenizer = { ...llama2, eosTokenId: undefined };
  assert.deepEqual(generateSpec(noEos, ["Q:"], 16).stop, [utf8("Q:")]);
  assert.throws(() => generateSpec(tokenizer, [], 0), /max_gen_toks must be a positive integer/);
});

test("runner lines become generated items: decoded, cut, filtered and matched; summaries carry exact_match", { skip: skipShared }, () => {
  const benchmarks: ResolvedBenchmark[] = [{ name: "gsm8k", task: gsm8k }];
  const { refs } = compileScoreJob({ name: "m", path: dir, dtype: "float32" }, benchmarks, tokenizer, "cpu");
  const scores: RunnerScores = new Map([
    ["gsm8k/0", { generated: [...utf8(" 9 * 2 = 18\n#### 18\n\n"), ...utf8("Question:")], stopped: true }],
    ["gsm8k/1", { generated: utf8(" 3 bolts"), stopped: false }],
    ["gsm8k/2", { generated: [...utf8("#### 70000"), EOS_TOKEN_ID], stopped: true }],
  ]);
  const items = scoredItems(refs, benchmarks, scores, "scores.jsonl", tokenizer.decode) as GeneratedItem[];
  assert.deepEqual(
    items.map((i) => [i.kind, i.index, i.answer, i.correct]),
    [
      ["generate_until", 0, "18", true],
      ["generate_until", 1, "[invalid]", false],
      ["generate_until", 2, "70000", true],
    ],
  );
  assert.deepEqual(items[0]!.tokens, [...utf8(" 9 * 2 = 18\n#### 18\n\n"), ...utf8("Question:")]);
  assert.deepEqual(baselineAccuracies(items, benchmarks), [
    {
      name: "gsm8k",
      task_file: gsm8k.file,
      output_type: "generate_until",
      items: 3,
      exact_match: 2 / 3,
      chance: 0,
      filter: "strict-match",
      exact_match_by_filter: { "strict-match": 2 / 3, "flexible-extract": 1 },
    },
  ]);
  assert.throws(() => scoredItems(refs, benchmarks, scores, "scores.jsonl"), /decoding its tokens needs the model's tokenizer/);
  assert.throws(
    () => scoredItems(refs, benchmarks, new Map([...scores].slice(1)), "scores.jsonl", tokenizer.decode),
    /scores\.jsonl: the generation of gsm8k\/0 is missing/,
  );
});

/** A generated item that is right or wrong, with its text. */
function gen(index: number, correct: boolean, response = correct ? "yes" : "no"): GeneratedItem {
  return {
    kind: "generate_until",
    benchmark: "g",
    index,
    target: "yes",
    answer: response,
    correct,
    response,
    generation: response,
    tokens: utf8(response),
    stopped: false,
    filters: [{ name: "none", answer: response, correct }],
  };
}

test("AIS of an exact-match benchmark: chance 0, so AIS = (P(theta) - P(theta_a)) / P(theta)", () => {
  assert.deepEqual(metricsOf("generate_until"), ["exact_match"]);
  assert.deepEqual(metricsOf("multiple_choice"), ["acc", "acc_norm"]);
  const baseline = [gen(0, true), gen(1, true), gen(2, true), gen(3, false), gen(4, false)];
  const ablated = [gen(0, true), gen(1, false), gen(2, false), gen(3, false), gen(4, false)];
  assert.deepEqual(chancePerItem(baseline), new Float64Array(5));
  assert.deepEqual(scoreVector(baseline, "exact_match"), Uint8Array.from([1, 1, 1, 0, 0]));
  const ais = abilityImpactOfItems(baseline, ablated, "exact_match");
  assert.ok(ais.defined);
  assert.ok(Math.abs(ais.value - (0.6 - 0.2) / 0.6) < 1e-15, String(ais.value));
  // An ablation that makes a wrong document right is interference: negative AIS.
  const helped = abilityImpactOfItems(baseline, [gen(0, true), gen(1, true), gen(2, true), gen(3, true), gen(4, false)], "exact_match");
  assert.ok(helped.defined && Math.abs(helped.value - (0.6 - 0.8) / 0.6) < 1e-15);
  // No document right at baseline: nothing to remove, AIS undefined.
  const none = abilityImpactOfItems(
    ablated.map((i) => gen(i.index, false)),
    ablated,
    "exact_match",
  );
  assert.ok(!none.defined && /baseline score 0\.0000 is at chance \(0\.0000\)/.test(none.reason));
  // The metric must be the benchmark's own.
  assert.throws(() => isCorrect(baseline[0]!, "acc"), /generated: it is scored by exact_match, not acc/);
  assert.throws(
    () =>
      isCorrect(
        scoreItem(
          "m",
          0,
          0,
          ["a", "b"],
          [
            { logprob: -1, tokens: 1, greedy: true },
            { logprob: -2, tokens: 1, greedy: false },
          ],
        ),
        "exact_match",
      ),
    /multiple choice/,
  );

  // The paired bootstrap with chance 0: the point estimate is the same AIS; resamples that draw no
  // right document have no AIS and are left out.
  const resampler = new BenchmarkResampler(scoreVector(baseline, "exact_match"), 0, { resamples: 400, seed: 3 });
  const estimate = resampler.ais(scoreVector(ablated, "exact_match"));
  assert.deepEqual(estimate.estimate, ais);
  assert.ok(estimate.interval && estimate.interval.low <= ais.value && ais.value <= estimate.interval.high, JSON.stringify(estimate));
  assert.ok(estimate.interval!.high <= 1 + 1e-12, "with chance 0 no resample can lose more than all of its right documents");
  assert.ok(estimate.undefinedResamples > 0 && estimate.undefinedResamples < 400);
});

test("flips of a generation benchmark compare correctness and carry the generations before and after", () => {
  const baseline = [gen(0, true), gen(1, false), gen(2, true)];
  const ablated = [gen(2, true, "yes."), gen(1, true, "yes"), gen(0, false, "maybe")];
  const flips = cellFlips(baseline, ablated, "exact_match");
  assert.deepEqual(flips, {
    metric: "exact_match",
    rightToWrong: [
      {
        kind: "generate_until",
        index: 0,
        target: "yes",
        before: { response: "yes", answer: "yes" },
        after: { response: "maybe", answer: "maybe" },
      },
    ],
    wrongToRight: [
      {
        kind: "generate_until",
        index: 1,
        target: "yes",
        before: { response: "no", answer: "no" },
        after: { response: "yes", answer: "yes" },
      },
    ],
  });
});

test("lm-eval's take_first_k, majority_vote and map filters: on several responses, and a map's default of None", () => {
  const pipeline = (...steps: FilterStep[]): FilterPipeline => ({ name: "t", steps });
  const responses = ["B", "A", "B", "C", "A"];
  // Counter.most_common keeps the first seen among equal counts: B (2) before A (2).
  assert.equal(applyFilters(pipeline({ function: "majority_vote" }), responses), "B");
  assert.equal(applyFilters(pipeline({ function: "take_first_k", k: 2 }, { function: "majority_vote" }), responses), "B");
  assert.equal(applyFilters(pipeline({ function: "take_first_k", k: 4 }, { function: "take_first" }), ["x", "y"]), "x");
  const map = (default_value?: unknown) =>
    pipeline({ function: "map", mapping_dict: { yes: 1, no: 0, maybe: true }, ...(default_value === undefined ? {} : { default_value }) });
  assert.deepEqual(
    ["yes", "no", "maybe", "other"].map((r) => applyFilters(map(), [r])),
    ["1", "0", "True", "None"],
  );
  assert.equal(applyFilters(map(-1), ["other"]), "-1");
});
