// The stars of a profile assembled from runner scores: a table of pure-noise cells (variants that
// are exchangeable perturbations of the baseline, so "no effect" is true of every cell) stars
// about 5% of its cells on their raw p and at most the FDR's share after Benjamini-Hochberg; and
// every p and q of a profile recomputed by hand from its items.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ChoiceScore } from "../../../src/core/analysis/accuracy";
import { mcnemarExactP } from "../../../src/core/analysis/mcnemar";
import { adjustedPValues } from "../../../src/core/analysis/multipleComparisons";
import { seededRandom } from "../../../src/core/base/random";
import type { ResolvedBenchmark } from "../../../src/core/config/load";
import type { MultipleChoiceItem, Task } from "../../../src/core/lmeval/task";
import type { ItemRef } from "../../../src/core/plan/job";
import { assembleProfile, type ProfileInputs, type RunnerManifest } from "../../../src/core/results/profile";
import type { RunnerScores } from "../../../src/core/results/items";
import type { CellMetric, ModelProfile } from "../../../src/core/results/schema";

const CHOICES = ["A", "B", "C", "D"];

/** `count` benchmarks of `documents` four-choice documents (chance 1/4), each document's target 0. */
function benchmarks(count: number, documents: number): ResolvedBenchmark[] {
  return Array.from({ length: count }, (_, b) => {
    const name = `bench${b}`;
    const items: MultipleChoiceItem[] = Array.from({ length: documents }, (_, index) => ({
      kind: "multiple_choice",
      index,
      context: `${name} ${index}`,
      prompt: { description: "", fewshot: [], text: `${name} ${index}` },
      choices: CHOICES,
      continuations: CHOICES.map((c) => ` ${c}`),
      target: 0,
    }));
    return { name, task: { name, file: `/tasks/${name}.yaml`, outputType: "multiple_choice", items } as unknown as Task };
  });
}

/** A document's choice scores: the target (0) on top when `right`, else choice 1. */
function scores(right: boolean): ChoiceScore[] {
  return CHOICES.map((_, c) => ({ logprob: c === (right ? 0 : 1) ? -1 : -5, tokens: 1, greedy: false }));
}

interface NoiseTable {
  manifest: RunnerManifest;
  baseline: RunnerScores;
  variants: Map<string, RunnerScores>;
  inputs: ProfileInputs;
}

/**
 * One k, `abilities` top variants and the random control, each an independent perturbation of
 * the baseline: every document's correctness flipped with probability `flip`, right and wrong
 * alike, at a baseline of 1/2 right. So E[right to wrong] = E[wrong to right] in every cell
 * (McNemar's null holds exactly), and every top variant is exchangeable with the control
 * (specificity's null holds too).
 */
function noiseTable(seed: number, abilities: number, bench: ResolvedBenchmark[], flip: number): NoiseTable {
  const rand = seededRandom(seed);
  const refs: ItemRef[] = bench.flatMap((b) =>
    b.task.items.map((i) => ({ id: `${b.name}/${i.index}`, benchmark: b.name, index: i.index })),
  );
  const right = new Map(refs.map((r) => [r.id, rand() < 0.5]));
  const baseline: RunnerScores = new Map(refs.map((r) => [r.id, scores(right.get(r.id)!)]));
  const perturbed = (): RunnerScores => new Map(refs.map((r) => [r.id, scores(rand() < flip ? !right.get(r.id)! : right.get(r.id)!)]));
  const ids = Array.from({ length: abilities }, (_, a) => `a${a}`);
  const entries = [
    ...ids.map((id) => ({ ability: id as string | null, file: `variants/${id}.top.k0.jsonl` })),
    { ability: null, file: "variants/random.k0.jsonl" },
  ];
  const variants = new Map(entries.map((e) => [e.file, perturbed()]));
  const manifest: RunnerManifest = {
    parameters: 100000,
    candidates: { total: 50000 },
    variants: entries.map((e) => ({
      ability: e.ability,
      selection: e.ability === null ? "random" : "top",
      k: 0.01,
      n: 1000,
      file: e.file,
    })),
  };
  const inputs: ProfileInputs = {
    benchmarks: bench,
    refs,
    abilities: ids.map((id) => ({ id, name: `Ability ${id}`, sequences: 10 })),
    k: [0.01],
    selections: ["top", "random"],
    methods: ["signed"],
    seed,
    bootstrap: { resamples: 50, confidence: 0.95 },
    stats: { correction: "bh", threshold: 0.05, minEffect: 0.1 },
  };
  return { manifest, baseline, variants, inputs };
}

function assembled(table: NoiseTable): ModelProfile {
  return assembleProfile(table.manifest, table.baseline, table.variants, table.inputs).profiles[0]!;
}

/** The acc cells of the profile's top variants, and of the random control. */
function accCells(profile: ModelProfile): CellMetric[] {
  return profile.variants.flatMap((v) => v.benchmarks.map((b) => b.acc!));
}

test("a table of pure-noise cells stars about 5% of them raw, and at most the FDR's share after Benjamini-Hochberg", (t) => {
  const bench = benchmarks(11, 120);
  let cells = 0;
  let raw = 0;
  let starred = 0;
  let specificityCells = 0;
  let specificityRaw = 0;
  let specificityStarred = 0;
  for (let seed = 1; seed <= 8; seed++) {
    const profile = assembled(noiseTable(seed, 12, bench, 0.3));
    for (const cell of accCells(profile)) {
      assert.equal(cell.test, "mcnemar");
      cells++;
      if (cell.p! < 0.05) raw++;
      if (cell.significant) starred++;
      if (cell.specificity && cell.specificity.p !== null && cell.specificity.p !== undefined) {
        specificityCells++;
        if (cell.specificity.p < 0.05) specificityRaw++;
        if (cell.specificity.significant) specificityStarred++;
      }
    }
  }
  t.diagnostic(
    `AIS cells: ${raw} of ${cells} starred raw, ${starred} after BH; specificity: ${specificityRaw} of ${specificityCells}, ${specificityStarred}`,
  );
  // 8 tables of 13 x 11 cells; McNemar's exact test is a little conservative, so a little under 5% raw
  assert.equal(cells, 8 * 13 * 11);
  const rawShare = raw / cells;
  assert.ok(rawShare > 0.02 && rawShare < 0.08, `raw stars: ${raw} of ${cells} (${(100 * rawShare).toFixed(1)}%)`);
  assert.ok(starred / cells <= 0.05, `starred after BH: ${starred} of ${cells}`);
  assert.ok(starred < raw, `the correction starred fewer (${starred}) than the raw p did (${raw})`);
  assert.equal(specificityCells, 8 * 12 * 11);
  const specificityShare = specificityRaw / specificityCells;
  assert.ok(specificityShare > 0.02 && specificityShare < 0.08, `raw specificity stars: ${specificityRaw} of ${specificityCells}`);
  assert.ok(specificityStarred / specificityCells <= 0.05, `specificity starred after BH: ${specificityStarred}`);
});

test("every p and q of a profile recomputed by hand from its items: McNemar on the flips, BH over the table", () => {
  const table = noiseTable(3, 4, benchmarks(3, 200), 0.1);
  // real effects, so the table has stars to check: ability a0 turns 40 right answers of bench0
  // wrong (still above chance), a1 every right answer of bench1 (to 0 right: saturated)
  const hurt = (file: string, benchmark: string, count: number) => {
    const scored = new Map(table.variants.get(file)!);
    const right = table.inputs.refs.filter(
      (r) => r.benchmark === benchmark && (table.baseline.get(r.id) as ChoiceScore[])[0]!.logprob === -1,
    );
    for (const ref of right.slice(0, count)) scored.set(ref.id, scores(false));
    if (count >= right.length)
      for (const ref of table.inputs.refs.filter((r) => r.benchmark === benchmark)) scored.set(ref.id, scores(false));
    table.variants.set(file, scored);
  };
  hurt("variants/a0.top.k0.jsonl", "bench0", 40);
  hurt("variants/a1.top.k0.jsonl", "bench1", Infinity);
  const profile = assembled(table);
  const right = (s: RunnerScores, id: string) => (s.get(id) as ChoiceScore[])[0]!.logprob === -1;
  const expected: number[] = [];
  const cells: CellMetric[] = [];
  for (const v of profile.variants) {
    const scoresOf = table.variants.get(v.scores_file.replace(/^runner\//, ""))!;
    for (const b of v.benchmarks) {
      const ids = table.inputs.refs.filter((r) => r.benchmark === b.name).map((r) => r.id);
      const lost = ids.filter((id) => right(table.baseline, id) && !right(scoresOf, id)).length;
      const gained = ids.filter((id) => !right(table.baseline, id) && right(scoresOf, id)).length;
      assert.deepEqual(b.acc!.flips, { right_to_wrong: lost, wrong_to_right: gained });
      expected.push(mcnemarExactP(lost, gained));
      cells.push(b.acc!);
    }
  }
  cells.forEach((cell, i) => assert.ok(Math.abs(cell.p! - expected[i]!) < 1e-15, `cell ${i}: p ${cell.p} against ${expected[i]}`));
  const q = adjustedPValues(expected, "bh");
  cells.forEach((cell, i) => {
    assert.ok(Math.abs(cell.q! - q[i]!) < 1e-15, `cell ${i}: q ${cell.q} against ${q[i]}`);
    assert.equal(cell.significant, q[i]! < 0.05);
  });
  const real = profile.variants[0]!.benchmarks[0]!.acc!;
  assert.ok(real.significant && !real.saturated, "the real effect is starred");
  assert.equal(real.specificity!.test, "mcnemar");
  const broken = profile.variants[1]!.benchmarks[1]!.acc!;
  assert.ok(broken.saturated && broken.significant, "bench1 driven to 0 right, below chance: saturated, and starred");
  assert.equal(broken.specificity!.value, null, "its specificity is not defined");
  assert.match(broken.specificity!.reason!, /^saturated: not defined/);
  assert.deepEqual(profile.stats, { correction: "bh", threshold: 0.05, min_effect: 0.1 });
});
