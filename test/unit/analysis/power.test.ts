// The power figures of src/core/analysis/power.ts against what they claim: a benchmark of n
// documents whose ablation lowers its accuracy by the minimum detectable drop is detected 80% of
// the time. Simulated with seeded draws: baseline answers Bernoulli(p0), ablated answers an
// independent Bernoulli(p1) at p1 = p0 - drop, McNemar's exact test on the flips at alpha 0.05.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { test } from "node:test";
import { mcnemarExactP } from "../../../src/core/analysis/mcnemar";
import {
  DEFAULT_POWER,
  documentsToDetect,
  minimumDetectableAis,
  minimumDetectableDrop,
  normalQuantile,
  type PowerInputs,
} from "../../../src/core/analysis/power";
import { seededRandom } from "../../../src/core/base/random";
import { parityPython } from "../../support/parityPython";

const ALPHA = 0.05;
/** Simulated benchmarks per setting: the Monte Carlo standard error of a rate near 0.8 is sqrt(0.8 x 0.2 / 4000) = 0.0063. */
const RUNS = 4000;
const SE = Math.sqrt((DEFAULT_POWER * (1 - DEFAULT_POWER)) / RUNS);

/**
 * (n, p0, chance) settings, with the power at the minimum detectable drop computed exactly (every
 * discordant count D ~ Binomial(n, psi) and b | D ~ Binomial(D, p0 q1 / psi) enumerated, not
 * simulated) for McNemar's exact test and for the asymptotic McNemar z test without continuity
 * correction, which the formula is the power of. Measured when this test was written:
 *
 *   n     p0     chance  MDE (AIS)  exact test  z test
 *   100   0.9    0.25    0.230      0.744       0.813
 *   300   0.75   0.25    0.210      0.774       0.798
 *   1000  0.85   0.25    0.079      0.784       0.801
 *   1319  0.412  0       0.129      0.788       0.800
 *
 * The z test reaches 0.80 within 0.013 (the formula's sqrt(2 pm qm) under the null is McNemar's
 * sqrt(p0 q1 + p1 q0) less delta^2 / 2 inside the root, and the normal approximation of b - c at
 * small n). The exact test is conservative, as an exact test of a discrete count is (its size is
 * below 0.05), and loses 1-6 points of power: most at small n, where few documents are discordant.
 */
const SETTINGS: { n: number; p0: number; chance: number; exactPower: number }[] = [
  { n: 100, p0: 0.9, chance: 0.25, exactPower: 0.744 },
  { n: 300, p0: 0.75, chance: 0.25, exactPower: 0.774 },
  { n: 1000, p0: 0.85, chance: 0.25, exactPower: 0.784 },
  { n: 1319, p0: 0.412, chance: 0, exactPower: 0.788 },
];

/** The share of `RUNS` simulated benchmarks in which `reject(b, c)` rejects, b right-to-wrong and c wrong-to-right flips. */
function rejectionRate(n: number, p0: number, p1: number, seed: number, reject: (b: number, c: number) => boolean): number {
  const rand = seededRandom(seed);
  let rejected = 0;
  for (let run = 0; run < RUNS; run++) {
    let b = 0;
    let c = 0;
    for (let i = 0; i < n; i++) {
      const baseline = rand() < p0;
      const ablated = rand() < p1;
      if (baseline && !ablated) b++;
      else if (!baseline && ablated) c++;
    }
    if (reject(b, c)) rejected++;
  }
  return rejected / RUNS;
}

const Z = normalQuantile(1 - ALPHA / 2);

for (const [s, { n, p0, chance, exactPower }] of SETTINGS.entries()) {
  test(`n = ${n}, p0 = ${p0}, chance = ${chance}: a drop of the minimum detectable AIS is detected 80% of the time`, (t) => {
    const inputs: PowerInputs = { documents: n, baseline: p0, chance, alpha: ALPHA };
    const ais = minimumDetectableAis(inputs);
    assert.ok(ais !== null && ais > 0 && ais < 1, `an AIS is detectable: ${ais}`);
    const drop = ais * (p0 - chance);
    assert.ok(Math.abs(drop - minimumDetectableDrop(inputs)!) < 1e-12, "the AIS is the drop as a share of the margin over chance");
    const p1 = p0 - drop;

    // McNemar's exact test, as the cells' stars use it (p below the level). It is conservative:
    // below 0.8 by its discreteness (the table above), never above 0.8 by more than the noise.
    const exact = rejectionRate(n, p0, p1, 1000 + s, (b, c) => mcnemarExactP(b, c) < ALPHA);
    assert.ok(
      Math.abs(exact - exactPower) <= 3.5 * SE,
      `exact test: ${exact} against its enumerated power ${exactPower} (3.5 SE = ${3.5 * SE})`,
    );
    assert.ok(exact >= DEFAULT_POWER - 0.07 && exact <= DEFAULT_POWER + 3.5 * SE, `exact test: rejection rate ${exact}`);

    // The asymptotic test the formula is made for: 0.8 within the noise and the approximation.
    const asymptotic = rejectionRate(n, p0, p1, 2000 + s, (b, c) => b + c > 0 && Math.abs(b - c) / Math.sqrt(b + c) > Z);
    assert.ok(Math.abs(asymptotic - DEFAULT_POWER) <= 3.5 * SE + 0.015, `z test: rejection rate ${asymptotic}`);

    // A drop of half the minimum is detected far less often: the figure is no looser than it says.
    const half = rejectionRate(n, p0, p0 - drop / 2, 3000 + s, (b, c) => mcnemarExactP(b, c) < ALPHA);
    assert.ok(half < 0.4, `half the drop: rejection rate ${half}`);
    t.diagnostic(`MDE ${ais.toFixed(3)}: exact test ${exact}, z test ${asymptotic}, half the drop ${half} (of ${RUNS})`);
  });
}

test("normalQuantile gives the standard normal's quantiles", () => {
  assert.ok(Math.abs(normalQuantile(0.975) - 1.959963984540054) < 1e-8);
  assert.ok(Math.abs(normalQuantile(0.8) - 0.8416212335729143) < 1e-8);
  assert.equal(normalQuantile(0.5), 0);
  for (const q of [1e-6, 0.01, 0.02425, 0.3, 0.9])
    assert.ok(Math.abs(normalQuantile(q) + normalQuantile(1 - q)) < 1e-8, `symmetric at ${q}`);
  for (const q of [0, 1, -0.1, 1.5, Number.NaN]) assert.throws(() => normalQuantile(q), RangeError);
});

/** Whether the parity venv's Python imports scipy; false, or why not. */
function scipySkip(): string | false {
  if (!existsSync(parityPython)) return `no ${parityPython} (scripts/parity-env.sh makes it)`;
  const probe = spawnSync(parityPython, ["-c", "import scipy"], { encoding: "utf8", timeout: 60_000 });
  return probe.status === 0 ? false : `the parity venv's Python has no scipy: ${probe.stderr.trim().split("\n").at(-1) ?? ""}`;
}

test("normalQuantile agrees with scipy.stats.norm.ppf to 1e-9 relative, tails included", { skip: scipySkip() }, () => {
  const points = [
    1e-10,
    1e-6,
    0.001,
    0.01,
    0.02,
    0.02425,
    0.025,
    0.1,
    0.2,
    0.3,
    0.45,
    0.5,
    0.55,
    0.7,
    0.8,
    0.9,
    0.95,
    0.975,
    0.99,
    0.999,
    1 - 1e-6,
  ];
  const script = `import json, sys\nfrom scipy.stats import norm\nprint(json.dumps([float(norm.ppf(q)) for q in json.loads(sys.argv[1])]))`;
  const run = spawnSync(parityPython, ["-c", script, JSON.stringify(points)], { encoding: "utf8", timeout: 60_000 });
  assert.equal(run.status, 0, run.stderr);
  const expected = JSON.parse(run.stdout) as number[];
  points.forEach((q, i) => {
    const want = expected[i]!;
    const got = normalQuantile(q);
    // Acklam's approximation: relative error below 1.15e-9 (absolute near 0, where the quantile is 0)
    assert.ok(Math.abs(got - want) <= 1.2e-9 * Math.max(1, Math.abs(want)), `q = ${q}: ${got} against scipy's ${want}`);
  });
});

test("documentsToDetect inverts minimumDetectableAis: its count detects the effect, one document fewer does not", () => {
  const cases: [Omit<PowerInputs, "documents">, number][] = [
    [{ baseline: 0.9, chance: 0.25 }, 0.1],
    [{ baseline: 0.7, chance: 0.25 }, 0.2],
    [{ baseline: 0.412, chance: 0 }, 0.061],
    [{ baseline: 0.5, chance: 0 }, 0.5],
    [{ baseline: 0.6, chance: 0.5 }, 0.3],
    [{ baseline: 0.85, chance: 0.25, alpha: 0.01, power: 0.9 }, 0.1],
  ];
  for (const [inputs, effect] of cases) {
    const n = documentsToDetect(inputs, effect);
    assert.ok(n !== null && n > 1, `${JSON.stringify(inputs)}: ${n}`);
    const at = minimumDetectableAis({ ...inputs, documents: n });
    const fewer = minimumDetectableAis({ ...inputs, documents: n - 1 });
    assert.ok(at !== null && at <= effect + 1e-9, `${n} documents detect ${at}, want <= ${effect}`);
    assert.ok(fewer === null || fewer > effect, `${n - 1} documents detect ${fewer}, want > ${effect}`);
  }
});

test("no AIS is defined at a baseline at or below chance, and none is detectable from too few documents", () => {
  assert.equal(minimumDetectableAis({ documents: 1000, baseline: 0.25, chance: 0.25 }), null);
  assert.equal(minimumDetectableAis({ documents: 1000, baseline: 0.2, chance: 0.25 }), null);
  assert.equal(documentsToDetect({ baseline: 0.25, chance: 0.25 }, 0.1), null);
  assert.equal(minimumDetectableAis({ documents: 3, baseline: 0.65, chance: 0.3 }), null);
  assert.equal(minimumDetectableAis({ documents: 0, baseline: 0.65, chance: 0.3 }), null);
  // more documents, a smaller figure
  const figures = [100, 400, 1600].map((documents) => minimumDetectableAis({ documents, baseline: 0.7, chance: 0.25 })!);
  assert.ok(figures[0]! > figures[1]! && figures[1]! > figures[2]!, figures.join(", "));
  // quadrupling the documents about halves the drop
  assert.ok(Math.abs(figures[1]! / figures[2]! - 2) < 0.1, figures.join(", "));
});
