// McNemar's exact test: by hand on small counts, and against scipy's binomtest and statsmodels'
// mcnemar(exact=True) where the parity environment has them.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { test } from "node:test";
import { halfBinomialCdf, mcnemarExactP } from "../../../src/core/analysis/mcnemar";
import { parityPython, paritySkip } from "../../support/parityPython";

test("by hand: p = min(1, 2 P(X <= min(b, c))), X ~ Binomial(b + c, 1/2)", () => {
  assert.equal(mcnemarExactP(0, 0), 1);
  // 5 flips one way, none the other: 2 * (1/2)^5
  assert.equal(mcnemarExactP(5, 0), 2 / 32);
  assert.equal(mcnemarExactP(0, 5), 2 / 32);
  // 6 and 2: 2 * (1 + 8 + 28) / 256
  assert.ok(Math.abs(mcnemarExactP(6, 2) - (2 * 37) / 256) < 1e-15);
  // as many either way: the test can say nothing
  assert.equal(mcnemarExactP(7, 7), 1);
  assert.throws(() => mcnemarExactP(-1, 2), RangeError);
  assert.throws(() => mcnemarExactP(1.5, 2), RangeError);
});

test("the binomial tail in log space stays exact where 2^-n underflows a double", () => {
  // n = 3000: (1/2)^3000 is 0 in a double, the tail up to the median is about 1/2
  const tail = halfBinomialCdf(1500, 3000);
  assert.ok(tail > 0.5 && tail < 0.52, String(tail));
  assert.equal(halfBinomialCdf(-1, 10), 0);
  assert.equal(halfBinomialCdf(10, 10), 1);
});

const reference = paritySkip || (hasScipy() ? false : "the parity environment has no scipy and statsmodels");

function hasScipy(): boolean {
  try {
    execFileSync(parityPython, ["-c", "import scipy.stats, statsmodels.stats.contingency_tables"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

test("equals scipy's binomtest and statsmodels' exact McNemar on 200 pairs of counts up to 2500 flips", { skip: reference }, () => {
  const pairs: [number, number][] = [];
  for (let i = 0; i < 200; i++) {
    const n = i < 150 ? i : 100 + (i - 150) * 50;
    const b = Math.floor((n * ((i * 37) % 101)) / 100);
    pairs.push([b, n - b]);
  }
  const script = [
    "import json, sys",
    "from scipy.stats import binomtest",
    "from statsmodels.stats.contingency_tables import mcnemar",
    "pairs = json.loads(sys.stdin.read())",
    "out = []",
    "for b, c in pairs:",
    "    s = mcnemar([[0, b], [c, 0]], exact=True).pvalue if b + c > 0 else 1.0",
    "    out.append([binomtest(b, b + c, 0.5).pvalue if b + c > 0 else 1.0, float(s)])",
    "print(json.dumps(out))",
  ].join("\n");
  const answers = JSON.parse(execFileSync(parityPython, ["-c", script], { input: JSON.stringify(pairs) }).toString()) as [number, number][];
  pairs.forEach(([b, c], i) => {
    const ours = mcnemarExactP(b, c);
    for (const theirs of answers[i]!)
      assert.ok(Math.abs(ours - theirs) <= 1e-12 + 1e-9 * theirs, `b = ${b}, c = ${c}: ${ours} against ${theirs}`);
  });
});
