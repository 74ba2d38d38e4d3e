import assert from "node:assert/strict";
import { test } from "node:test";
import {
  BenchmarkResampler,
  bootstrapGrid,
  bootstrapP,
  drawResamples,
  multiplicity,
  percentile,
  type BootstrapEstimate,
  type Resamples,
} from "../../../src/core/analysis/bootstrap";
import { randomInt, seededRandom } from "../../../src/core/base/random";

/** 0/1 vector from a string like "1101". */
const bits = (pattern: string) => Uint8Array.from(pattern, (c) => (c === "1" ? 1 : 0));

/** `n` items, the first `right` correct. */
function baselineOf(n: number, right: number): Uint8Array {
  return Uint8Array.from({ length: n }, (_, i) => (i < right ? 1 : 0));
}

/** `base` with the listed items' correctness flipped. */
function flipped(base: Uint8Array, items: number[]): Uint8Array {
  const out = Uint8Array.from(base);
  for (const i of items) out[i] = 1 - out[i]!;
  return out;
}

/**
 * The bootstrap by its definition, one resample at a time: expand the multiplicities, recompute
 * baseline, variant and chance means on the resampled items, AIS, then the percentiles.
 */
function referenceInterval(drawn: Resamples, baseline: Uint8Array, lostOf: (item: number) => number, chance: (item: number) => number) {
  const values: number[] = [];
  let undefinedResamples = 0;
  for (let r = 0; r < drawn.resamples; r++) {
    let base = 0,
      lost = 0,
      guess = 0;
    for (let i = 0; i < drawn.items; i++) {
      const m = multiplicity(drawn, i, r);
      base += m * baseline[i]!;
      lost += m * lostOf(i);
      guess += m * chance(i);
    }
    if (base - guess <= 1e-12 * drawn.items) undefinedResamples++;
    else values.push(lost / (base - guess));
  }
  values.sort((x, y) => x - y);
  return { low: percentile(values, 0.025), high: percentile(values, 0.975), undefinedResamples };
}

function assertClose(actual: number, expected: number, label: string): void {
  assert.ok(Math.abs(actual - expected) <= 1e-12, `${label}: ${actual} vs ${expected}`);
}

function assertMatchesReference(estimate: BootstrapEstimate, reference: ReturnType<typeof referenceInterval>): void {
  assert.ok(estimate.interval !== null);
  assertClose(estimate.interval.low, reference.low, "low");
  assertClose(estimate.interval.high, reference.high, "high");
  assert.equal(estimate.undefinedResamples, reference.undefinedResamples);
}

test("mulberry32 reproduces the C reference stream (seed 42) and randomInt stays in range", () => {
  const rand = seededRandom(42);
  assert.deepEqual(
    [rand(), rand(), rand()].map((u) => u * 2 ** 32),
    [2581720956, 1925393290, 3661312704],
  );
  const draws = Array.from({ length: 1000 }, () => randomInt(rand, 7));
  assert.ok(draws.every((d) => Number.isInteger(d) && d >= 0 && d < 7));
  assert.equal(new Set(draws).size, 7);
  assert.throws(() => randomInt(rand, 0), RangeError);
});

test("percentile interpolates between closest ranks (numpy's default, type 7)", () => {
  const sorted = [1, 2, 3, 4];
  assert.equal(percentile(sorted, 0), 1);
  assert.equal(percentile(sorted, 0.5), 2.5);
  assertClose(percentile(sorted, 0.025), 1.075, "2.5%"); // position 3 x 0.025 = 0.075
  assertClose(percentile(sorted, 0.975), 3.925, "97.5%"); // position 2.925
  assert.equal(percentile([5], 0.975), 5);
});

test("every resample draws exactly `items` times, and packing loses no multiplicity", () => {
  for (const [items, lanes] of [
    [1, 53],
    [5, 17],
    [1000, 5],
    [70000, 3],
  ] as const) {
    const drawn = drawResamples(items, { resamples: 7, seed: 3 });
    assert.equal(drawn.lanes, lanes, `lanes for ${items} items`);
    for (let r = 0; r < 7; r++) {
      let total = 0;
      for (let i = 0; i < items; i++) total += multiplicity(drawn, i, r);
      assert.equal(total, items, `resample ${r} of ${items} items`);
    }
  }
});

test("resamples are determined by the seed", () => {
  const a = drawResamples(50, { resamples: 20, seed: 11 });
  assert.deepEqual(a.packed, drawResamples(50, { resamples: 20, seed: 11 }).packed);
  assert.notDeepEqual(a.packed, drawResamples(50, { resamples: 20, seed: 12 }).packed);
  const base = baselineOf(50, 35);
  const ablated = flipped(base, [0, 1, 2, 3, 40]);
  const run = (seed: number) => new BenchmarkResampler(base, 0.25, { resamples: 200, seed }).ais(ablated);
  assert.deepEqual(run(5), run(5));
  assert.notDeepEqual(run(5).interval, run(6).interval);
});

test("the fast paired bootstrap equals the bootstrap computed by its definition", () => {
  // 40 items of 2 to 5 choices; baseline right on 26; the ablation loses 5 and gains 2.
  const base = baselineOf(40, 26);
  const chance = Float64Array.from({ length: 40 }, (_, i) => 1 / (2 + (i % 4)));
  const lostItems = [0, 3, 7, 12, 20];
  const gainedItems = [30, 35];
  const ablated = flipped(base, [...lostItems, ...gainedItems]);
  const options = { resamples: 300, seed: 9 };
  const estimate = new BenchmarkResampler(base, chance, options).ais(ablated);
  const lostOf = (i: number) => (lostItems.includes(i) ? 1 : gainedItems.includes(i) ? -1 : 0);
  assertMatchesReference(
    estimate,
    referenceInterval(drawResamples(40, options), base, lostOf, (i) => chance[i]!),
  );
  // Point estimate on all items: baseline 26/40, ablated 23/40, chance = mean of 1/2, 1/3, 1/4, 1/5.
  const meanChance = (1 / 2 + 1 / 3 + 1 / 4 + 1 / 5) / 4;
  assert.ok(estimate.estimate.defined);
  assertClose(estimate.estimate.value, (26 / 40 - 23 / 40) / (26 / 40 - meanChance), "point estimate");
});

test("the interval contains the point estimate in an ordinary case", () => {
  // 400 items, baseline 0.6, the ablation loses 40 and gains 10: AIS = (30/400) / (0.6 - 0.25) = 0.2142...
  const base = baselineOf(400, 240);
  const ablated = flipped(base, [...Array.from({ length: 40 }, (_, i) => i * 5), ...Array.from({ length: 10 }, (_, i) => 300 + i * 7)]);
  const result = new BenchmarkResampler(base, 0.25, { seed: 1 }).ais(ablated);
  assert.ok(result.estimate.defined && result.interval !== null);
  assertClose(result.estimate.value, 30 / 400 / 0.35, "AIS");
  assert.ok(result.interval.low < result.estimate.value && result.estimate.value < result.interval.high, JSON.stringify(result.interval));
  assert.equal(result.resamples, 1000);
  assert.equal(result.interval.confidence, 0.95);
  assert.equal(result.significant, true);
  assert.equal(result.note, undefined);
});

test("a cell with no flipped item has the degenerate interval [0, 0] and is not significant", () => {
  const base = baselineOf(100, 70);
  const result = new BenchmarkResampler(base, 0.25, { resamples: 100 }).ais(Uint8Array.from(base));
  assert.deepEqual(result.estimate, { defined: true, value: 0 });
  assert.deepEqual(result.interval, { low: 0, high: 0, confidence: 0.95 });
  assert.equal(result.significant, false);
});

test("equal losses and gains straddle 0: not significant; a large loss is", () => {
  const base = baselineOf(200, 120);
  const resampler = new BenchmarkResampler(base, 0.25, { seed: 4 });
  const balanced = resampler.ais(flipped(base, [0, 1, 2, 3, 150, 151, 152, 153]));
  assert.deepEqual(balanced.estimate, { defined: true, value: 0 });
  assert.ok(balanced.interval !== null && balanced.interval.low < 0 && balanced.interval.high > 0);
  assert.equal(balanced.significant, false);
  // Losing 60 of 120 right answers: AIS = (60/200) / (0.6 - 0.25) = 0.857..., far from 0.
  const large = resampler.ais(
    flipped(
      base,
      Array.from({ length: 60 }, (_, i) => i * 2),
    ),
  );
  assert.ok(large.interval !== null && large.interval.low > 0.5);
  assert.equal(large.significant, true);
});

test("a baseline at chance gives no estimate and no interval; resamples at chance are counted, not dropped silently", () => {
  // 2-choice items, baseline 5/10 = chance.
  const atChance = new BenchmarkResampler(baselineOf(10, 5), 0.5, { resamples: 50 }).ais(baselineOf(10, 4));
  assert.equal(atChance.estimate.defined, false);
  assert.equal(atChance.interval, null);
  assert.equal(atChance.significant, false);
  // Baseline 6/10 against chance 0.5: many small resamples fall to or below chance.
  const base = baselineOf(10, 6);
  const ablated = flipped(base, [0]);
  const options = { resamples: 400, seed: 2 };
  const thin = new BenchmarkResampler(base, 0.5, options).ais(ablated);
  const reference = referenceInterval(
    drawResamples(10, options),
    base,
    (i) => (i === 0 ? 1 : 0),
    () => 0.5,
  );
  assert.ok(reference.undefinedResamples > 0);
  assertMatchesReference(thin, reference);
  assert.match(thin.note ?? "", new RegExp(`^${reference.undefinedResamples} of 400 resamples`));
});

test("specificity is AIS(top) - AIS(control) with an interval on the same resamples", () => {
  // 100 items, baseline 0.8 (chance 0.25, margin 0.55). Top loses 20 items: AIS 0.2/0.55.
  // The random control loses 4, of which 2 are also lost by top, and gains 1: AIS 0.03/0.55.
  const base = baselineOf(100, 80);
  const top = flipped(
    base,
    Array.from({ length: 20 }, (_, i) => i),
  );
  const control = flipped(base, [0, 1, 50, 51, 90]);
  const options = { resamples: 300, seed: 8 };
  const resampler = new BenchmarkResampler(base, 0.25, options);
  const result = resampler.specificity(top, control);
  assert.ok(result.estimate.defined);
  assertClose(result.estimate.value, (0.2 - 0.03) / 0.55, "specificity");
  const perItem = (i: number) => base[i]! - top[i]! - (base[i]! - control[i]!);
  assertMatchesReference(
    result,
    referenceInterval(drawResamples(100, options), base, perItem, () => 0.25),
  );
  assert.equal(result.significant, true);
  // Against itself as control, specificity is exactly 0 in every resample.
  const self = resampler.specificity(top, top);
  assert.deepEqual(self.interval, { low: 0, high: 0, confidence: 0.95 });
  assert.equal(self.significant, false);
});

test("bootstrapGrid gives each cell what its benchmark's resampler gives alone", () => {
  const small = baselineOf(60, 40);
  const other = bits("1".repeat(30) + "0".repeat(30)); // same size as `small`: shares its resamples
  const large = baselineOf(90, 50);
  const cells = [
    { benchmark: "small", ablated: flipped(small, [0, 1, 2]), ability: "Deductive Reasoning" },
    { benchmark: "other", ablated: flipped(other, [0, 59]), ability: "Deductive Reasoning" },
    { benchmark: "large", ablated: flipped(large, [5, 6]), control: flipped(large, [7]), ability: "Temporal Reasoning" },
  ];
  const options = { resamples: 200, seed: 21 };
  const grid = bootstrapGrid(
    [
      { name: "small", baseline: small, chance: 0.25 },
      { name: "other", baseline: other, chance: 0.25 },
      { name: "large", baseline: large, chance: 0.25 },
    ],
    cells,
    options,
  );
  assert.equal(grid[0]!.cell.ability, "Deductive Reasoning");
  assert.deepEqual(grid[0]!.ais, new BenchmarkResampler(small, 0.25, options).ais(cells[0]!.ablated));
  assert.deepEqual(grid[1]!.ais, new BenchmarkResampler(other, 0.25, options).ais(cells[1]!.ablated));
  assert.deepEqual(grid[2]!.specificity, new BenchmarkResampler(large, 0.25, options).specificity(cells[2]!.ablated, cells[2]!.control!));
  assert.equal(grid[0]!.specificity, null);
  assert.throws(() => bootstrapGrid([], [cells[0]!], options), /not in the grid/);
});

test("inputs that are not per-item correctness of the same items are refused", () => {
  const resampler = new BenchmarkResampler(baselineOf(10, 6), 0.25, { resamples: 10 });
  assert.throws(() => resampler.ais(baselineOf(9, 6)), /9 items/);
  assert.throws(() => resampler.ais(Uint8Array.from([2, 0, 0, 0, 0, 0, 0, 0, 0, 0])), /must lie in \[0, 1\]/);
  assert.throws(() => new BenchmarkResampler(baselineOf(10, 6), [0.25], {}), /chance has 1 values/);
  assert.throws(() => new BenchmarkResampler(new Uint8Array(0), 0.25), /0 items/);
  assert.throws(() => new BenchmarkResampler(baselineOf(10, 6), 0.25, { seed: 2 }, drawResamples(10, { seed: 1 })), /different seed/);
});

test("the bootstrap p: twice the smaller share of resamples on either side of 0, with the +1 that keeps it above 0", () => {
  // 3 of 9 at or below 0, 7 at or above (one is 0): 2 (1 + 3) / 10
  assert.equal(bootstrapP([-0.2, -0.1, 0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6]), (2 * 4) / 10);
  // all above: the smallest p 9 resamples can give, 2/10
  assert.equal(bootstrapP([1, 2, 3, 4, 5, 6, 7, 8, 9]), 2 / 10);
  assert.equal(bootstrapP([-1, 1]), 1);
});
