// A run folder is read with every field type-checked (results/check.ts against
// results.schema.json, results/lineCheck.ts against lines.schema.json): a field of the wrong type
// in results.json, an items file or flips.jsonl is one line naming the file and the field (and the
// line), and results written before optional fields existed still load.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { renderReport } from "../../../src/core/report/index";
import { DamagedRunFileError, loadRun, ReportInputError, RunItems } from "../../../src/core/report/load";
import { checkResults } from "../../../src/core/results/check";
import { flipLinesOfText, itemsOfText } from "../../../src/core/results/lineCheck";
import type { Results } from "../../../src/core/results/schema";
import { fixtureResults, MODEL, MODEL_FOLDER, withChunkedTopSets, withStability, writeFixtureRun } from "../../support/reportFixture";

/** The fixture with stability, chunked sets, a fluency measure, a pair, labels and expects: every optional field there. */
function everyField(): Results {
  const results = withChunkedTopSets(withStability(fixtureResults()));
  const model = results.models[0]!;
  const profile = model.profile!;
  model.special_tokens = { before: [1], after: [], source: "tokenizer" };
  model.benchmarks[0]!.ability = profile.abilities[0]!.name;
  model.benchmarks[0]!.expects = [{ ability: profile.abilities[0]!.name, weight: 0.6 }, { ability: profile.abilities[1]!.name }];
  profile.fluency = { text: "built-in", tokens: 120, loglik_per_token: -2.5, perplexity: 12.18, max_perplexity_ratio: 2 };
  for (const v of profile.variants) v.fluency = { loglik_per_token: -2.6, perplexity: 13.5, perplexity_ratio: 1.11, fluent: true };
  const cell = { ais: 0.1, ci: { low: 0, high: 0.2, confidence: 0.95 }, interference: -0.05, interference_ci: null, significant: false };
  profile.pairs = [
    {
      abilities: [profile.abilities[0]!.name, profile.abilities[1]!.name],
      ability_ids: [profile.abilities[0]!.id, profile.abilities[1]!.id],
      k: 0.01,
      n: 1900,
      scores_file: "runner/pairs/p.jsonl",
      items_file: "pairs/p.items.jsonl",
      benchmarks: model.benchmarks.map((b) => ({ name: b.name, acc: cell, acc_norm: cell })),
    },
  ];
  return results;
}

type FieldAt = readonly (string | number)[];

/** A copy of `results` as a file holds it (JSON), each field at a path set to its value, or removed where it is undefined. */
function edited(changes: readonly (readonly [FieldAt, unknown])[], results: Results = everyField()): unknown {
  const copy = JSON.parse(JSON.stringify(results)) as unknown;
  for (const [at, value] of changes) {
    const parent = at.slice(0, -1).reduce((node, key) => (node as Record<string | number, unknown>)[key], copy) as Record<
      string | number,
      unknown
    >;
    if (value === undefined) delete parent[at.at(-1)!];
    else parent[at.at(-1)!] = value;
  }
  return copy;
}

const PROFILE = ["models", 0, "profile"] as const;

test("every field of a run with every optional part is read, and older results without them still load", () => {
  const results = everyField();
  assert.doesNotThrow(() => checkResults(edited([]), "r.json"));
  // fields added after the first runs: absent in older files
  const profile = results.models[0]!.profile!;
  const removed: FieldAt[] = [
    ["runner_version"],
    ["target"],
    ["models", 0, "special_tokens"],
    ...results.models[0]!.benchmarks.flatMap((_, b) =>
      ["output_type", "ability", "expects", "data_file", "data_sha256", "scored_by"].map((key) => ["models", 0, "benchmarks", b, key]),
    ),
    ...["method", "overlap", "stability", "pairs", "fluency", "candidate_set"].map((key) => [...PROFILE, key]),
    [...PROFILE, "bootstrap", "seed"],
    ...profile.variants.flatMap((v, i) => [
      ...["lowering", "exact_top", "groups", "fluency"].map((key) => [...PROFILE, "variants", i, key]),
      ...v.benchmarks.flatMap((_, b) =>
        ["acc", "acc_norm"].map((m) => [...PROFILE, "variants", i, "benchmarks", b, m, "undefined_resamples"]),
      ),
    ]),
  ];
  const read = checkResults(edited(removed.map((at) => [at, undefined] as const)), "r.json");
  assert.equal(read.models[0]!.profile!.method, "paper", "a profile without method is the paper's");
});

test("a field of the wrong type anywhere in results.json is one line naming the file and the field", () => {
  const last = everyField().models[0]!.profile!.variants.length - 1;
  const cases: [string, FieldAt, unknown, string][] = [
    [
      "a stability half",
      [...PROFILE, "stability", 0, "halves"],
      ['<meta http-equiv="refresh">', 6],
      "models[0].profile.stability[0].halves[0]: expected a number",
    ],
    [
      "an expected ability's weight",
      ["models", 0, "benchmarks", 0, "expects", 0, "weight"],
      "<form>",
      "models[0].benchmarks[0].expects[0].weight: expected a number",
    ],
    [
      "a Jaccard entry",
      [...PROFILE, "stability", 1, "by_k", 0, "jaccard"],
      "0.5",
      "models[0].profile.stability[1].by_k[0].jaccard: expected a number",
    ],
    ["the perplexity", [...PROFILE, "fluency", "perplexity"], "12", "models[0].profile.fluency.perplexity: expected a number"],
    [
      "a variant's fluency",
      [...PROFILE, "variants", 3, "fluency", "fluent"],
      "yes",
      "models[0].profile.variants[3].fluency.fluent: expected true or false",
    ],
    [
      "a pair's interference",
      [...PROFILE, "pairs", 0, "benchmarks", 1, "acc", "interference"],
      "\\input{/etc/passwd}",
      "models[0].profile.pairs[0].benchmarks[1].acc.interference: expected a number or null",
    ],
    ["special tokens", ["models", 0, "special_tokens", "before"], ["<s>"], "models[0].special_tokens.before[0]: expected a number"],
    [
      "an exact top",
      [...PROFILE, "variants", last, "exact_top", "jaccard"],
      null,
      `models[0].profile.variants[${last}].exact_top.jaccard: expected a number`,
    ],
    [
      "a lowering count",
      [...PROFILE, "variants", 0, "lowering"],
      2.5,
      "models[0].profile.variants[0].lowering: expected a whole number, 0 or more",
    ],
    ["an overlap entry", [...PROFILE, "overlap", 0, "jaccard", 1, 2], "x", "models[0].profile.overlap[0].jaccard[1][2]: expected a number"],
    [
      "an ability's sequences",
      [...PROFILE, "abilities", 1, "sequences"],
      "12",
      "models[0].profile.abilities[1].sequences: expected a number",
    ],
    ["the seed", [...PROFILE, "seed"], "3; rm -rf ~", "models[0].profile.seed: expected a number"],
    [
      "a reason",
      [...PROFILE, "variants", 0, "benchmarks", 1, "acc_norm", "reason"],
      7,
      "models[0].profile.variants[0].benchmarks[1].acc_norm.reason: expected a string",
    ],
    [
      "a selection",
      [...PROFILE, "variants", 0, "selection"],
      "<b>top</b>",
      "models[0].profile.variants[0].selection: expected top, top_chunked, bottom or random",
    ],
    ["the run id", ["run_id"], 20260101, "run_id: expected a string"],
    ["a benchmark's score", ["models", 0, "benchmarks", 1, "acc"], "0.75", "models[0].benchmarks[1].acc: expected a number"],
    ["a missing dtype", ["models", 0, "dtype"], undefined, "models[0].dtype: expected a string"],
    // what JSON.parse makes of 1e999
    ["a number too large for a double", [...PROFILE, "k", 0], Infinity, "models[0].profile.k[0]: expected a number"],
  ];
  for (const [what, at, value, message] of cases) {
    const read = edited([[at, value]]);
    const thrown = (() => {
      try {
        checkResults(read, "r.json");
        return undefined;
      } catch (e) {
        return e;
      }
    })();
    assert.ok(thrown instanceof ReportInputError, `${what}: ${String(thrown)}`);
    assert.equal(thrown.message, `r.json: ${message}`, what);
  }
});

test("every line of an items file and of flips.jsonl is checked: file:line: field: expected ...", () => {
  const choice = {
    benchmark: "b",
    index: 0,
    target: 0,
    choices: [{ logprob: -1 }, { logprob: -2 }],
    choiceBytes: [1, 1],
    prediction: 0,
    predictionNorm: 0,
  };
  const generated = { kind: "generate_until", benchmark: "b", index: 1, target: "4", answer: "4", correct: true, response: "4" };
  const lines = (...rows: unknown[]) => rows.map((r) => JSON.stringify(r)).join("\n") + "\n";
  assert.equal(itemsOfText(lines(choice, generated), "i.jsonl").length, 2);
  const itemCases: [unknown, string][] = [
    [{ ...choice, choices: [{ logprob: "-1" }] }, "i.jsonl:2: choices[0].logprob: expected a number"],
    [{ ...choice, index: "<script>" }, "i.jsonl:2: index: expected a number"],
    [{ ...choice, prediction: "\\write18{id}" }, "i.jsonl:2: prediction: expected a number"],
    [{ ...generated, target: 4 }, "i.jsonl:2: target: expected a string"],
    [{ ...generated, correct: "yes" }, "i.jsonl:2: correct: expected true or false"],
    [{ ...generated, filters: [{ name: "f", answer: 1, correct: true }] }, "i.jsonl:2: filters[0].answer: expected a string"],
    [[1, 2], "i.jsonl:2: expected an object"],
  ];
  for (const [line, message] of itemCases) {
    assert.throws(
      () => itemsOfText(lines(choice, line), "i.jsonl"),
      (e: Error) => e instanceof DamagedRunFileError && e.message === message,
      message,
    );
  }
  assert.throws(() => itemsOfText(`${JSON.stringify(choice)}\n{ not json\n`, "i.jsonl"), { message: "i.jsonl:2: not a JSON line" });

  const flip = { variant: "variants/a.top.k0.items.jsonl", benchmark: "b", metric: "acc", index: 3, direction: "wrong_to_right" };
  const choiceFlip = {
    ...flip,
    target: 1,
    baselinePrediction: 0,
    ablatedPrediction: 1,
    baselineLogprobs: [-1, -3],
    ablatedLogprobs: [-3, -1],
    choiceBytes: [3, 2],
  };
  const generatedFlip = {
    ...flip,
    metric: "exact_match",
    kind: "generate_until",
    target: "t",
    baselineAnswer: "a",
    ablatedAnswer: "b",
    baselineResponse: "a",
    ablatedResponse: "b",
  };
  assert.equal(flipLinesOfText(lines(choiceFlip, generatedFlip), "flips.jsonl").length, 2);
  const flipCases: [unknown, string][] = [
    [{ ...choiceFlip, baselineLogprobs: "-1,-3" }, "flips.jsonl:1: baselineLogprobs: expected an array"],
    [{ ...choiceFlip, index: "<meta http-equiv=refresh content=0>" }, "flips.jsonl:1: index: expected a number"],
    [{ ...choiceFlip, target: "<form>" }, "flips.jsonl:1: target: expected a number"],
    [{ ...choiceFlip, ablatedPrediction: "\\input{/etc/passwd}" }, "flips.jsonl:1: ablatedPrediction: expected a number"],
    [{ ...choiceFlip, metric: "f1" }, "flips.jsonl:1: metric: expected acc, acc_norm or exact_match"],
    [{ ...choiceFlip, direction: "sideways" }, "flips.jsonl:1: direction: expected right_to_wrong or wrong_to_right"],
    [{ ...generatedFlip, ablatedResponse: ["x"] }, "flips.jsonl:1: ablatedResponse: expected a string"],
  ];
  for (const [line, message] of flipCases) {
    assert.throws(
      () => flipLinesOfText(lines(line), "flips.jsonl"),
      (e: Error) => e instanceof DamagedRunFileError && e.message === message,
      message,
    );
  }
});

test("a damaged flips.jsonl stops a report (bad input); a missing items file only leaves the documents out", async () => {
  const dir = await writeFixtureRun();
  try {
    const modelDir = path.join(dir, "models", MODEL_FOLDER);
    const run = await loadRun(dir);
    await fs.rm(path.join(modelDir, "variants", "commonsense-and-causal-reasoning.top.k1.items.jsonl"));
    const missing = await renderReport(run, { format: "md" });
    assert.equal(missing.warnings.length, 1, "a missing file is a warning");
    await fs.writeFile(
      path.join(modelDir, "flips.jsonl"),
      JSON.stringify({ variant: "v", benchmark: "logiqa", metric: "acc", index: "<form>", direction: "wrong_to_right" }) + "\n",
    );
    for (const format of ["md", "html", "json"] as const) {
      await assert.rejects(renderReport(run, { format, script: "" }), (e: Error) => {
        assert.ok(e instanceof DamagedRunFileError, String(e));
        assert.equal(e.message, `${path.join(modelDir, "flips.jsonl")}:1: index: expected a number`);
        return true;
      });
    }
    await assert.rejects(new RunItems(dir).recordedFlips(MODEL), /flips\.jsonl:1: index: expected a number/);
  } finally {
    await fs.rm(path.dirname(path.dirname(dir)), { recursive: true, force: true });
  }
});

test("results.json that is a link to itself, or not a regular file, is bad input naming it", async () => {
  const dir = await writeFixtureRun();
  try {
    const file = path.join(dir, "results.json");
    await fs.rm(file);
    await fs.symlink("results.json", file);
    for (const target of [dir, file]) {
      await assert.rejects(loadRun(target), (e: Error) => {
        assert.ok(e instanceof ReportInputError, String(e));
        assert.match(e.message, /results\.json \(it is a link that leads to itself, or through too many links: ELOOP\)$/);
        return true;
      });
    }
    await fs.rm(file);
    await fs.mkdir(file);
    await assert.rejects(loadRun(dir), /results\.json \(it is a folder\)|results\.json is not a regular file/);
  } finally {
    await fs.rm(path.dirname(path.dirname(dir)), { recursive: true, force: true });
  }
});
