// The Wilson interval and Cohen's kappa by hand, and against statsmodels where the parity
// environment has it (proportion_confint(method="wilson"), cohens_kappa of the contingency table).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import test from "node:test";
import { cohensKappa, wilsonProportion } from "../../../src/core/analysis/agreement";
import { parityPython, paritySkip } from "../../support/parityPython";

test("46 of 50 labels right: p = 0.92, Wilson 95% bounds 0.8116 and 0.9685 (worked by hand)", () => {
  // z = 1.95996, z^2/n = 0.076829; centre (0.92 + 0.038415) / 1.076829 = 0.890031;
  // half 1.820126 * sqrt(0.92 * 0.08 / 50 + 0.076829 / 200) = 0.078414
  const w = wilsonProportion(46, 50);
  assert.equal(w.rate, 0.92);
  assert.ok(Math.abs(w.low! - 0.81162) < 1e-4, `low ${w.low}`);
  assert.ok(Math.abs(w.high! - 0.96845) < 1e-4, `high ${w.high}`);
});

test("every label right keeps the upper bound at 1 and the lower one below; none reviewed has no figure", () => {
  const all = wilsonProportion(20, 20);
  assert.equal(all.high, 1);
  assert.ok(all.low! > 0.8 && all.low! < 0.85, `20 of 20: low ${all.low}`); // 20 / (20 + z^2) = 0.8389
  assert.equal(wilsonProportion(0, 5).low, 0);
  assert.deepEqual(wilsonProportion(0, 0), { k: 0, n: 0, rate: null, low: null, high: null });
  assert.throws(() => wilsonProportion(3, 2), RangeError);
});

test("Cohen's kappa of ten items judged by two reviewers, worked by hand: (0.6 - 0.48) / 0.52", () => {
  const pairs = [
    ...Array.from({ length: 5 }, () => ["accept", "accept"] as const),
    ["accept", "reject"],
    ["accept", "correct:1"],
    ["reject", "reject"],
    ["reject", "accept"],
    ["reject", "correct:1"],
  ] as [string, string][];
  // A: accept 7, reject 3; B: accept 6, reject 2, correct:1 2; chance 0.7 * 0.6 + 0.3 * 0.2 = 0.48
  const k = cohensKappa(pairs);
  assert.equal(k.n, 10);
  assert.equal(k.observed, 0.6);
  assert.ok(Math.abs(k.expected! - 0.48) < 1e-12);
  assert.ok(Math.abs(k.kappa! - 0.12 / 0.52) < 1e-12);
});

test("kappa is 1 for full agreement over two categories, and undefined when both give one category throughout", () => {
  assert.equal(
    cohensKappa([
      ["accept", "accept"],
      ["reject", "reject"],
    ]).kappa,
    1,
  );
  const one = cohensKappa([
    ["accept", "accept"],
    ["accept", "accept"],
  ]);
  assert.equal(one.kappa, null);
  assert.equal(one.observed, 1);
  assert.equal(cohensKappa([]).kappa, null);
});

const skip =
  paritySkip ||
  (() => {
    try {
      execFileSync(parityPython, ["-c", "import statsmodels.stats.proportion, statsmodels.stats.inter_rater"], { stdio: "ignore" });
      return false;
    } catch {
      return "the parity environment has no statsmodels";
    }
  })();

test("equals statsmodels' Wilson interval and Cohen's kappa", { skip }, () => {
  const counts = [
    [0, 1],
    [1, 1],
    [3, 7],
    [46, 50],
    [185, 200],
    [1844, 2000],
    [0, 40],
    [40, 40],
  ];
  const tables = [
    [
      [5, 1, 1],
      [1, 1, 1],
      [0, 0, 0],
    ],
    [
      [30, 4],
      [6, 10],
    ],
    [
      [12, 3, 0, 1],
      [2, 20, 1, 0],
      [0, 1, 5, 2],
      [1, 0, 0, 7],
    ],
  ];
  const script = [
    "import json, sys",
    "from statsmodels.stats.proportion import proportion_confint",
    "from statsmodels.stats.inter_rater import cohens_kappa",
    "counts, tables = json.loads(sys.stdin.read())",
    "print(json.dumps([[list(proportion_confint(k, n, alpha=0.05, method='wilson')) for k, n in counts], [cohens_kappa(t).kappa for t in tables]]))",
  ].join("\n");
  const [bounds, kappas] = JSON.parse(
    execFileSync(parityPython, ["-c", script], { input: JSON.stringify([counts, tables]) }).toString(),
  ) as [number[][], number[]];
  counts.forEach(([k, n], i) => {
    const w = wilsonProportion(k!, n!);
    assert.ok(Math.abs(w.low! - bounds[i]![0]!) < 1e-8, `${k} of ${n}: low ${w.low} vs ${bounds[i]![0]}`);
    assert.ok(Math.abs(w.high! - bounds[i]![1]!) < 1e-8, `${k} of ${n}: high ${w.high} vs ${bounds[i]![1]}`);
  });
  tables.forEach((t, i) => {
    // the table's cell [a][b] counts items reviewer A put in category a and reviewer B in b
    const pairs = t.flatMap((row, a) =>
      row.flatMap((count, b) => Array.from({ length: count }, () => [`c${a}`, `c${b}`] as [string, string])),
    );
    assert.ok(Math.abs(cohensKappa(pairs).kappa! - kappas[i]!) < 1e-12, `table ${i}: ${cohensKappa(pairs).kappa} vs ${kappas[i]}`);
  });
});
