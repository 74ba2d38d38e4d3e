// Results of a `profile` run from hand-made runner outputs (profile.json, baseline.jsonl, one
// scores file per variant), checked against AIS values worked out by hand.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { formatAisTables } from "../../../src/cli/aisTable";
import { BenchmarkResampler } from "../../../src/core/analysis/bootstrap";
import type { ResolvedBenchmark } from "../../../src/core/config/load";
import type { MultipleChoiceItem, Task } from "../../../src/core/lmeval/task";
import type { ItemRef } from "../../../src/core/plan/job";
import { readProfileOutput, type ProfileInputs, type RunnerManifest } from "../../../src/core/results/profile";
import { buildReport } from "../../../src/core/report/model";
import { RESULTS_SCHEMA_VERSION, type ModelResults, type Results, type VariantResult } from "../../../src/core/results/schema";

const QUANT = "Quantitative Reasoning";
const SPATIAL = "Spatial Reasoning";

/** b1: 4 documents of 2 choices (chance 1/2); b2: 2 documents of 4 choices (chance 1/4). */
const TARGETS: Record<string, number[]> = { b1: [0, 1, 0, 1], b2: [3, 2] };
const CHOICES: Record<string, string[]> = { b1: ["A", "B"], b2: ["A", "B", "C", "D"] };

function benchmark(name: string): ResolvedBenchmark {
  const items: MultipleChoiceItem[] = TARGETS[name]!.map((target, index) => ({
    kind: "multiple_choice",
    index,
    context: `${name} question ${index}`,
    prompt: { description: "", fewshot: [], text: `${name} question ${index}` },
    choices: CHOICES[name]!,
    continuations: CHOICES[name]!.map((c) => ` ${c}`),
    target,
  }));
  return { name, task: { name, file: `/tasks/${name}.yaml`, outputType: "multiple_choice", items } as unknown as Task };
}

const BENCHMARKS = [benchmark("b1"), benchmark("b2")];
const REFS: ItemRef[] = BENCHMARKS.flatMap((b) =>
  b.task.items.map((i) => ({ id: `${b.name}/${i.index}`, benchmark: b.name, index: i.index })),
);

/**
 * A scores line whose argmax is the target when `correct` is 1, else the next choice. Choices
 * of a benchmark have equal byte lengths, so acc_norm picks what acc picks.
 */
function line(id: string, correct: number): string {
  const [name, index] = id.split("/") as [string, string];
  const target = TARGETS[name]![Number(index)]!;
  const n = CHOICES[name]!.length;
  const pick = correct ? target : (target + 1) % n;
  return JSON.stringify({
    id,
    choices: Array.from({ length: n }, (_, c) => ({ logprob: c === pick ? -1 : -5, tokens: 1, greedy: false })),
  });
}

/** Correctness per benchmark document, b1 then b2. */
function scoresFile(b1: number[], b2: number[]): string {
  return [...b1, ...b2].map((c, i) => line(REFS[i]!.id, c)).join("\n") + "\n";
}

// By hand. b1 baseline: 3 of 4 right, acc 0.75, chance 0.5, margin 0.25.
// b2 baseline: 0 of 2 right, below its chance 0.25: AIS undefined there.
const BASELINE = { b1: [1, 1, 1, 0], b2: [0, 0] };
const VARIANTS: {
  ability: string | null;
  selection: "top" | "top_chunked" | "random";
  i: number;
  b1: number[];
  expectedAis: number;
  flips: [number, number];
}[] = [
  { ability: "quant", selection: "top", i: 0, b1: [0, 1, 1, 0], expectedAis: (0.75 - 0.5) / 0.25, flips: [1, 0] }, // 1
  { ability: "quant", selection: "top", i: 1, b1: [0, 0, 1, 1], expectedAis: (0.75 - 0.5) / 0.25, flips: [2, 1] }, // 1
  { ability: "spatial", selection: "top", i: 0, b1: [1, 1, 1, 1], expectedAis: (0.75 - 1) / 0.25, flips: [0, 1] }, // -1
  { ability: "spatial", selection: "top", i: 1, b1: [1, 1, 1, 0], expectedAis: 0, flips: [0, 0] },
  { ability: null, selection: "random", i: 0, b1: [1, 1, 1, 0], expectedAis: 0, flips: [0, 0] },
  { ability: null, selection: "random", i: 1, b1: [1, 0, 1, 0], expectedAis: (0.75 - 0.5) / 0.25, flips: [1, 0] }, // 1
];
const K = [0.001, 0.01];
const P = 35104;

function fileOf(v: { ability: string | null; selection: string; i: number }): string {
  return v.ability === null ? `variants/random.k${v.i}.jsonl` : `variants/${v.ability}.${v.selection}.k${v.i}.jsonl`;
}

function manifest(variants = VARIANTS): RunnerManifest {
  return {
    parameters: P,
    candidates: { tensors: [{ name: "model.layers.0.mlp.gate_proj.weight", numel: 2048, offset: 0 }], total: 12288 },
    variants: variants.map((v) => ({
      ability: v.ability,
      selection: v.selection,
      k: K[v.i]!,
      n: Math.floor(K[v.i]! * P),
      file: fileOf(v),
      ...(v.ability === null ? {} : { lowering: v.i + (v.ability === "quant" ? 10 : 20) }),
    })),
    overlap: [
      {
        k: 0.001,
        n: 35,
        abilities: ["quant", "spatial"],
        intersections: [
          [35, 5],
          [5, 35],
        ],
      },
      {
        k: 0.01,
        n: 351,
        abilities: ["quant", "spatial"],
        intersections: [
          [351, 351],
          [351, 351],
        ],
      },
    ],
  };
}

const INPUTS: ProfileInputs = {
  benchmarks: BENCHMARKS,
  refs: REFS,
  abilities: [
    { id: "quant", name: QUANT, sequences: 3 },
    { id: "spatial", name: SPATIAL, sequences: 2 },
  ],
  k: K,
  selections: ["top", "random"],
  methods: ["signed"],
  seed: 5,
  bootstrap: { resamples: 200, confidence: 0.9 },
};

let dir: string;
before(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-profile-results-"));
  await fs.mkdir(path.join(dir, "variants"));
  await fs.writeFile(path.join(dir, "profile.json"), JSON.stringify(manifest()));
  await fs.writeFile(path.join(dir, "baseline.jsonl"), scoresFile(BASELINE.b1, BASELINE.b2));
  for (const v of VARIANTS) await fs.writeFile(path.join(dir, fileOf(v)), scoresFile(v.b1, [0, 0]));
});
after(async () => fs.rm(dir, { recursive: true, force: true }));

function variant(results: VariantResult[], ability: string | null, selection: string, k: number): VariantResult {
  const found = results.find((v) => v.ability === ability && v.selection === selection && v.k === k);
  assert.ok(found, `no variant ${ability} ${selection} ${k}`);
  return found;
}

test("AIS per (ability, selection, k, benchmark) equals the hand-computed values", async () => {
  const assembled = await readProfileOutput(dir, INPUTS);
  const profile = assembled.profiles[0]!;
  const { baseline, variantItems } = assembled;
  assert.equal(profile.parameters, P);
  assert.equal(profile.candidates, 12288);
  assert.deepEqual(profile.abilities, [
    { name: QUANT, id: "quant", sequences: 3 },
    { name: SPATIAL, id: "spatial", sequences: 2 },
  ]);
  assert.deepEqual(profile.bootstrap, { resamples: 200, confidence: 0.9, seed: 5 });
  assert.equal(baseline.length, 6);
  // Config order: abilities, then selections, then k; the random control last.
  // the runner's count of weights that lower their ability's loss is carried per variant, never invented for the control
  assert.deepEqual(
    profile.variants.map((v) => v.lowering),
    [10, 11, 20, 21, undefined, undefined],
  );
  assert.deepEqual(
    profile.variants.map((v) => `${v.ability_id} ${v.selection} ${v.k}`),
    ["quant top 0.001", "quant top 0.01", "spatial top 0.001", "spatial top 0.01", "null random 0.001", "null random 0.01"],
  );
  for (const expected of VARIANTS) {
    const name = expected.ability === "quant" ? QUANT : expected.ability === "spatial" ? SPATIAL : null;
    const v = variant(profile.variants, name, expected.selection, K[expected.i]!);
    assert.equal(v.n, Math.floor(K[expected.i]! * P));
    assert.equal(v.scores_file, `runner/${fileOf(expected)}`);
    assert.equal(v.items_file, fileOf(expected).replace(/\.jsonl$/, ".items.jsonl"));
    assert.equal(variantItems.get(v.items_file)!.length, 6);
    const [b1, b2] = v.benchmarks;
    assert.equal(b1!.name, "b1");
    for (const metric of ["acc", "acc_norm"] as const) {
      const cell = b1![metric]!;
      assert.equal(cell.baseline, 0.75);
      assert.equal(cell.chance, 0.5);
      assert.equal(cell.ablated, expected.b1.reduce((a, b) => a + b, 0) / 4);
      assert.equal(cell.ais, expected.expectedAis, `${name} ${expected.selection} k${expected.i} ${metric}`);
      assert.deepEqual(cell.flips, { right_to_wrong: expected.flips[0], wrong_to_right: expected.flips[1] });
      // The interval is the paired bootstrap's with the config's seed, resamples and confidence.
      const resampler = new BenchmarkResampler(Uint8Array.from(BASELINE.b1), Float64Array.from([0.5, 0.5, 0.5, 0.5]), {
        resamples: 200,
        seed: 5,
        confidence: 0.9,
      });
      const reference = resampler.ais(Uint8Array.from(expected.b1));
      assert.deepEqual(cell.ci, reference.interval);
      assert.equal(cell.significant, reference.significant);
      assert.equal(cell.significant, cell.ci !== null && (cell.ci.low > 0 || cell.ci.high < 0));
      // b2's baseline (0) is below chance (0.25): no number, a reason.
      const undefinedCell = b2![metric]!;
      assert.equal(undefinedCell.ais, null);
      assert.match(undefinedCell.reason!, /baseline score 0\.0000 is below chance \(0\.2500\)/);
      assert.equal(undefinedCell.ci, null);
      assert.equal(undefinedCell.significant, false);
    }
  }
});

test("specificity is AIS(top) - AIS(random) at the same k, on top variants only", async () => {
  const profile = (await readProfileOutput(dir, INPUTS)).profiles[0]!;
  const spec = (ability: string, k: number) => variant(profile.variants, ability, "top", k).benchmarks[0]!.acc!.specificity!;
  assert.equal(spec(SPATIAL, 0.001).value, -1 - 0);
  // A top cell or a control at chance (AIS 1 here) is saturated: the difference is not defined.
  for (const [ability, k] of [
    [QUANT, 0.001],
    [QUANT, 0.01],
    [SPATIAL, 0.01],
  ] as const) {
    assert.equal(spec(ability, k).value, null, `${ability} at k = ${k}`);
    assert.match(spec(ability, k).reason ?? "", /^saturated: not defined/);
  }
  const resampler = new BenchmarkResampler(Uint8Array.from(BASELINE.b1), Float64Array.from([0.5, 0.5, 0.5, 0.5]), {
    resamples: 200,
    seed: 5,
    confidence: 0.9,
  });
  assert.deepEqual(spec(SPATIAL, 0.001).ci, resampler.specificity(Uint8Array.from([1, 1, 1, 1]), Uint8Array.from([1, 1, 1, 0])).interval);
  // one control of 0/1 scores: McNemar's exact test on the one document the two variants score apart
  assert.equal(spec(SPATIAL, 0.001).test, "mcnemar");
  assert.equal(spec(SPATIAL, 0.001).p, 1);
  assert.equal(variant(profile.variants, null, "random", 0.001).benchmarks[0]!.acc!.specificity, undefined);
  // Without a random control there is nothing to compare with.
  const other = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-profile-results-top-"));
  try {
    await fs.cp(dir, other, { recursive: true });
    await fs.writeFile(path.join(other, "profile.json"), JSON.stringify(manifest(VARIANTS.filter((v) => v.selection === "top"))));
    const noRandom = await readProfileOutput(other, { ...INPUTS, selections: ["top"] });
    assert.equal(variant(noRandom.profiles[0]!.variants, QUANT, "top", 0.001).benchmarks[0]!.acc!.specificity, undefined);
  } finally {
    await fs.rm(other, { recursive: true, force: true });
  }
});

test("overlap: Jaccard of the top sets from the runner's intersection counts, with ability names", async () => {
  const profile = (await readProfileOutput(dir, INPUTS)).profiles[0]!;
  assert.deepEqual(profile.overlap[0], {
    k: 0.001,
    n: 35,
    abilities: [QUANT, SPATIAL],
    intersections: [
      [35, 5],
      [5, 35],
    ],
    jaccard: [
      [1, 5 / 65],
      [5 / 65, 1],
    ],
  });
  assert.deepEqual(profile.overlap[1]!.jaccard, [
    [1, 1],
    [1, 1],
  ]);
});

test("a manifest that lacks a variant of the job, or names an unknown ability, is refused", async () => {
  const other = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-profile-results-bad-"));
  try {
    await fs.cp(dir, other, { recursive: true });
    await fs.writeFile(path.join(other, "profile.json"), JSON.stringify(manifest(VARIANTS.slice(1))));
    await assert.rejects(readProfileOutput(other, INPUTS), /profile\.json lacks 1 variant\(s\) of the job: quant top k=0\.001/);
    const moral = { ...VARIANTS[5]!, ability: "moral", selection: "top" as const };
    await fs.writeFile(path.join(other, fileOf(moral)), scoresFile(moral.b1, [0, 0]));
    await fs.writeFile(path.join(other, "profile.json"), JSON.stringify(manifest([...VARIANTS.slice(0, 5), moral])));
    await assert.rejects(readProfileOutput(other, INPUTS), /names ability `moral`, which is not in the job/);
    await fs.rm(path.join(other, "profile.json"));
    await assert.rejects(readProfileOutput(other, INPUTS), /manifest is missing or unreadable/);
  } finally {
    await fs.rm(other, { recursive: true, force: true });
  }
});

test("the AIS table: abilities down, benchmarks across, * for starred cells, sat. for saturated ones, n/a with its reason", async () => {
  const { profiles, baseline } = await readProfileOutput(dir, INPUTS);
  const profile = profiles[0]!;
  const model: ModelResults = {
    name: "tiny",
    path: "/m",
    dtype: "float32",
    profile,
    benchmarks: BENCHMARKS.map((b) => ({ name: b.name, task_file: b.task.file, items: 0, acc: 0, acc_norm: 0, chance: 0 })),
  };
  assert.equal(baseline.length, 6);
  // The CLI prints the report model that `bprof report` renders.
  const results: Results = {
    schema: "bprof.results",
    schema_version: RESULTS_SCHEMA_VERSION,
    run_id: "r",
    created: "c",
    config_file: "/c.bprof.yaml",
    models: [model],
  };
  const report = await buildReport({ dir, resultsFile: path.join(dir, "results.json"), results });
  const text = formatAisTables(report.models[0]!);
  const blocks = text.trimEnd().split("\n\n");
  assert.equal(blocks.length, 2);
  const lines = blocks[0]!.split("\n");
  // the star is the profile's correction (Benjamini-Hochberg by default), and quant's b1 cell is saturated (ablated 0.5 = chance)
  assert.equal(
    lines[0],
    "tiny: AIS (acc) at k = 0.001 (n = 35 of 35104 parameters, signed importance), 90% CI; " +
      "* = Benjamini-Hochberg q < 0.05 over each table (false discovery rate 0.05); sat. = saturated (the ablated score at chance: its AIS at the ceiling)",
  );
  assert.match(lines[1]!, /^ability\s+b1\s+b2$/);
  const cellOf = (ability: string, k: number) => variant(profile.variants, ability, "top", k).benchmarks[0]!.acc!;
  const quant = cellOf(QUANT, 0.001);
  assert.equal(quant.saturated, true);
  // marked beside its star (4 documents: none here): its AIS 1 is the ceiling; its specificity is then not defined, a reason numbered after the AIS cells'
  assert.match(
    lines[2]!,
    new RegExp(
      `^Quantitative Reasoning\\s+ 1\\.000 \\[${quant.ci!.low.toFixed(3)}, ${quant.ci!.high.toFixed(3)}\\]( \\*)? sat\\.\\s+n/a \\(1\\)$`,
    ),
  );
  assert.match(lines[3]!, /^Spatial Reasoning\s+-1\.000 \[.*\]( \*)?\s+n\/a \(1\)$/);
  assert.match(lines[4]!, /^random \(control\)\s+ 0\.000/);
  assert.match(lines[5]!, /^ {2}\(1\) AIS is undefined: the baseline score 0\.0000 is below chance \(0\.2500\)/);
  // The reason numbers are the report's own.
  const section = report.models[0]!.profile!.sections[0]!;
  assert.equal(section.rows[0]!.cells[1]!.reason, 1);
  assert.ok(lines[5]!.endsWith(section.reasons[0]!));
  assert.equal(section.rows[0]!.cells[0]!.significant, false);
  assert.match(section.reasons[section.rows[0]!.cells[0]!.specificity!.reason! - 1]!, /^saturated: not defined/);
  assert.ok(section.rows[0]!.cells[0]!.specificity!.reason! > 1, "the specificity's reason after the AIS cells'");
  // 10 and 20 of the 35 zeroed weights lower their ability's loss (the runner's counts, as given above)
  assert.equal(lines[6], "top sets: 29-57% of the zeroed weights lower their own ability's loss when zeroed (first order, -theta x g < 0)");
});

test("top_chunked: each set's Jaccard index against the exact top n, its own n, and the reports' comparison", async () => {
  const other = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-profile-results-chunked-"));
  try {
    await fs.cp(dir, other, { recursive: true });
    // quant's chunked sets: 36 weights sharing 30 with the exact top 35 at k = 0.001, the exact top 351 plus one at k = 0.01
    const chunkedOf = (ability: string, i: number) => ({
      ability,
      selection: "top_chunked" as const,
      i,
      b1: [1, 1, 0, 0],
      expectedAis: 0,
      flips: [0, 0] as [number, number],
    });
    const chunked = [chunkedOf("quant", 0), chunkedOf("quant", 1), chunkedOf("spatial", 0), chunkedOf("spatial", 1)];
    const shared: Record<string, [number, number, number]> = {
      "quant 0": [36, 35, 30],
      "quant 1": [352, 351, 351],
      "spatial 0": [35, 35, 0],
      "spatial 1": [351, 351, 351],
    };
    const m = manifest([...VARIANTS, ...chunked]);
    for (const v of m.variants) {
      if (v.selection !== "top_chunked") continue;
      const [n, topN, common] = shared[`${v.ability} ${K.indexOf(v.k)}`]!;
      Object.assign(v, { n, top_n: topN, shared_with_top: common, lowering: 3 });
    }
    for (const v of chunked) await fs.writeFile(path.join(other, fileOf(v)), scoresFile(v.b1, [0, 0]));
    await fs.writeFile(path.join(other, "profile.json"), JSON.stringify(m));
    const profile = (await readProfileOutput(other, { ...INPUTS, selections: ["top", "top_chunked", "random"] })).profiles[0]!;
    // config order: per ability its top variants, then its chunked ones; the control last
    assert.deepEqual(profile.variants.map((v) => `${v.ability_id} ${v.selection} ${v.k}`).slice(0, 4), [
      "quant top 0.001",
      "quant top 0.01",
      "quant top_chunked 0.001",
      "quant top_chunked 0.01",
    ]);
    const quant0 = variant(profile.variants, QUANT, "top_chunked", 0.001);
    assert.equal(quant0.n, 36);
    assert.deepEqual(quant0.exact_top, { n: 35, shared: 30, jaccard: 30 / (36 + 35 - 30) });
    assert.deepEqual(variant(profile.variants, QUANT, "top_chunked", 0.01).exact_top, { n: 351, shared: 351, jaccard: 351 / 352 });
    assert.equal(variant(profile.variants, SPATIAL, "top_chunked", 0.001).exact_top!.jaccard, 0);
    assert.equal(variant(profile.variants, QUANT, "top", 0.001).exact_top, undefined);
    // AIS of a chunked set: b1 right 2 of 4 against 3 of 4, margin 0.25
    assert.equal(quant0.benchmarks[0]!.acc!.ais, 1);
    // only the exact top sets are compared with the random control
    assert.equal(quant0.benchmarks[0]!.acc!.specificity, undefined);

    const model: ModelResults = {
      name: "tiny",
      path: "/m",
      dtype: "float32",
      profile,
      benchmarks: BENCHMARKS.map((b) => ({ name: b.name, task_file: b.task.file, items: 0, acc: 0, acc_norm: 0, chance: 0 })),
    };
    const results: Results = {
      schema: "bprof.results",
      schema_version: RESULTS_SCHEMA_VERSION,
      run_id: "r",
      created: "c",
      config_file: "/c.bprof.yaml",
      models: [model],
    };
    const report = await buildReport({ dir: other, resultsFile: path.join(other, "results.json"), results }, { k: 0.001 });
    const section = report.models[0]!.profile!.sections[0]!;
    // the section's n is floor(k x P), not a chunked set's size
    assert.equal(section.n, 35);
    assert.deepEqual(
      section.rows.map((r) => r.label),
      [QUANT, SPATIAL, `${QUANT} (top, chunked)`, `${SPATIAL} (top, chunked)`, "random (control)"],
    );
    assert.deepEqual(section.chunked, [
      { ability: QUANT, chunkedN: 36, topN: 35, shared: 30, jaccard: 30 / 41 },
      { ability: SPATIAL, chunkedN: 35, topN: 35, shared: 0, jaccard: 0 },
    ]);
    // a chunked set's lowering share is of its own size
    assert.deepEqual(section.rows[2]!.lowering, { count: 3, share: 3 / 36 });
    const text = formatAisTables(report.models[0]!);
    assert.match(
      text,
      /top_chunked \(the released code's chunked rule\) against the exact top n = 35 at k = 0\.001:\n {2}Quantitative Reasoning\s+chunked 36\s+shared 30\s+Jaccard 0\.732\n {2}Spatial Reasoning\s+chunked 35\s+shared 0\s+Jaccard 0\.000/,
    );
  } finally {
    await fs.rm(other, { recursive: true, force: true });
  }
});

test("stability: the halves' shared counts become each ability's Jaccard index per k, under its name", async () => {
  const other = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-profile-results-stability-"));
  try {
    await fs.cp(dir, other, { recursive: true });
    const m = { ...manifest(), stability: [{ ability: "quant", halves: [2, 1], n: [35, 351], shared: [5, 300] }] };
    await fs.writeFile(path.join(other, "profile.json"), JSON.stringify(m));
    const profile = (await readProfileOutput(other, INPUTS)).profiles[0]!;
    assert.deepEqual(profile.stability, [
      {
        ability: QUANT,
        ability_id: "quant",
        halves: [2, 1],
        by_k: [
          { k: 0.001, n: 35, shared: 5, jaccard: 5 / 65 },
          { k: 0.01, n: 351, shared: 300, jaccard: 300 / 402 },
        ],
      },
    ]);
    // a run without it has none
    assert.equal((await readProfileOutput(dir, INPUTS)).profiles[0]!.stability, undefined);
    await fs.writeFile(
      path.join(other, "profile.json"),
      JSON.stringify({ ...m, stability: [{ ability: "quant", halves: [2, 1], n: [35], shared: [5] }] }),
    );
    await assert.rejects(readProfileOutput(other, INPUTS), /the stability of `quant` does not hold two halves and one count per k/);
  } finally {
    await fs.rm(other, { recursive: true, force: true });
  }
});
