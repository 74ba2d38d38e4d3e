import assert from "node:assert/strict";
import { test } from "node:test";
import {
  answerPositionBalance,
  binomialUpperTail,
  chiSquareSurvival,
  logGamma,
  longestAnswerBias,
  regularizedGammaQ,
  type HealthItem,
} from "../../../src/core/diagnostic/health";

/** |actual - expected| within `relative` of expected. */
function near(actual: number, expected: number, relative = 1e-9): void {
  assert.ok(Math.abs(actual - expected) <= relative * Math.abs(expected), `${actual} is not ${expected}`);
}

test("log-gamma matches exact values", () => {
  near(logGamma(0.5), Math.log(Math.sqrt(Math.PI)), 1e-12);
  near(logGamma(10), Math.log(362880), 1e-12);
  near(logGamma(100.5), 361.4355404677776, 1e-12);
});

test("chi-square survival function matches scipy.stats.chi2.sf", () => {
  // Reference values from scipy 1.17 (chi2.sf) and closed forms for even degrees of freedom.
  near(chiSquareSurvival(3.84, 1), 0.05004352124870519);
  near(chiSquareSurvival(11.34, 3), 0.010022517616912462);
  near(chiSquareSurvival(23.21, 10), 0.009997418959605042);
  near(chiSquareSurvival(0.5, 7), 0.9994464813904249);
  near(chiSquareSurvival(1e-3, 1), 0.9747728793699604);
  near(chiSquareSurvival(2, 2), Math.exp(-1));
  // Far tails keep their digits (no 1 - (almost 1)).
  near(chiSquareSurvival(180, 3), 8.819945436737102e-39, 1e-8);
  near(chiSquareSurvival(300, 25), 6.01227197360037e-49, 1e-8);
  near(chiSquareSurvival(200, 4), Math.exp(-100) * 101, 1e-8);
  assert.equal(chiSquareSurvival(0, 3), 1);
  near(regularizedGammaQ(1, 2.5), Math.exp(-2.5));
});

test("binomial upper tail matches the direct sum and scipy.stats.binom.sf", () => {
  let direct = 0;
  for (let k = 5; k <= 10; k++) direct += choose(10, k) * 0.3 ** k * 0.7 ** (10 - k);
  near(binomialUpperTail(5, 10, 0.3), direct, 1e-10);
  near(binomialUpperTail(40, 100, 0.25), 0.0006865922079629914, 1e-9);
  near(binomialUpperTail(100, 100, 0.25), 6.223015277861142e-61, 1e-8);
  assert.equal(binomialUpperTail(0, 10, 0.3), 1);
  assert.equal(binomialUpperTail(11, 10, 0.3), 0);
});

function choose(n: number, k: number): number {
  let c = 1;
  for (let i = 1; i <= k; i++) c = (c * (n - k + i)) / i;
  return c;
}

function items(spec: readonly [choices: number, answer: number, count: number][]): HealthItem[] {
  return spec.flatMap(([n, answer, count]) =>
    Array.from({ length: count }, (_, i) => ({ line: i + 1, ability: "A", answer, choices: Array.from({ length: n }, (_, k) => `c${k}`) })),
  );
}

test("answer positions: expected counts for mixed choice counts are sums of 1/n_i", () => {
  // 40 items with 2 choices and 40 with 4: expected A = 40/2 + 40/4 = 30, B = 30, C = D = 10.
  const balanced = items([
    [2, 0, 20],
    [2, 1, 20],
    [4, 0, 10],
    [4, 1, 10],
    [4, 2, 10],
    [4, 3, 10],
  ]);
  const b = answerPositionBalance(balanced)!;
  assert.deepEqual(
    b.cells.map((c) => [c.label, c.observed, c.expected]),
    [
      ["A", 30, 30],
      ["B", 30, 30],
      ["C", 10, 10],
      ["D", 10, 10],
    ],
  );
  assert.equal(b.statistic, 0);
  assert.equal(b.df, 3);
  assert.equal(b.pValue, 1);
});

test("answer positions: a skew is significant; sparse trailing positions are pooled", () => {
  const skewed = answerPositionBalance(items([[4, 0, 60]]))!;
  assert.equal(skewed.statistic, 180);
  assert.equal(skewed.df, 3);
  near(skewed.pValue, 8.819945436737102e-39, 1e-8);
  // Three 26-choice items add 3/26 to each of 26 positions: E..Z are pooled into the last cell.
  const pooled = answerPositionBalance([
    ...items([
      [4, 0, 10],
      [4, 1, 10],
      [4, 2, 10],
      [4, 3, 10],
    ]),
    ...items([[26, 25, 3]]),
  ])!;
  assert.deepEqual(
    pooled.cells.map((c) => c.label),
    ["A", "B", "C", "D-Z"],
  );
  assert.equal(pooled.df, 3);
  assert.equal(answerPositionBalance(items([[4, 0, 8]])), undefined, "too few items to test");
});

test("longest answer: counted only where one choice is strictly longest; binomial test", () => {
  const withLongest = (answer: number): HealthItem => ({ line: 1, ability: "A", answer, choices: ["a", "bb", "cccc", "dd"] });
  const bias = longestAnswerBias([
    ...Array.from({ length: 40 }, () => withLongest(2)),
    ...Array.from({ length: 60 }, () => withLongest(0)),
  ])!;
  assert.equal(bias.eligible, 100);
  assert.equal(bias.longest, 40);
  assert.equal(bias.expected, 25);
  near(bias.pValue, 0.0006865922079629914, 1e-9);
  const tie: HealthItem = { line: 1, ability: "A", answer: 0, choices: ["aa ", "bb", "c"] };
  assert.equal(longestAnswerBias([tie]), undefined, "a shared longest length is not a longest answer");
});
