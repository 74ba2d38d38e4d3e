// Benjamini-Hochberg and Holm by hand, and against statsmodels' multipletests where the parity
// environment has it; a null p is a cell without a test and is not counted.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { test } from "node:test";
import { adjustedPValues } from "../../../src/core/analysis/multipleComparisons";
import { seededRandom } from "../../../src/core/base/random";
import { parityPython, paritySkip } from "../../support/parityPython";

const close = (a: readonly (number | null)[], b: readonly (number | null)[]) =>
  a.length === b.length && a.every((x, i) => (x === null ? b[i] === null : b[i] !== null && Math.abs(x - b[i]!) < 1e-12));

test("BH by hand: q_(i) = min over j >= i of p_(j) m / j; Holm: max over j <= i of p_(j) (m - j + 1)", () => {
  // sorted: 0.01 0.02 0.03 0.04 0.5 (m = 5)
  const p = [0.04, 0.01, 0.5, 0.03, 0.02];
  // BH raw: 0.05 0.05 0.05 0.05 0.5, then the running minimum from the top
  assert.ok(close(adjustedPValues(p, "bh"), [0.05, 0.05, 0.5, 0.05, 0.05]), String(adjustedPValues(p, "bh")));
  // Holm raw: 0.05 0.08 0.09 0.08 0.5, then the running maximum from the bottom
  assert.ok(close(adjustedPValues(p, "holm"), [0.09, 0.05, 0.5, 0.09, 0.08]), String(adjustedPValues(p, "holm")));
  assert.deepEqual(adjustedPValues(p, "none"), p);
});

test("a cell without a p is left out of m and keeps a null q", () => {
  assert.ok(close(adjustedPValues([0.01, null, 0.04], "bh"), [0.02, null, 0.04]));
  assert.deepEqual(adjustedPValues([null, null], "holm"), [null, null]);
  assert.deepEqual(adjustedPValues([], "bh"), []);
});

const skip =
  paritySkip ||
  (() => {
    try {
      execFileSync(parityPython, ["-c", "import statsmodels.stats.multitest"], { stdio: "ignore" });
      return false;
    } catch {
      return "the parity environment has no statsmodels";
    }
  })();

test("equals statsmodels' multipletests (fdr_bh, holm) on random tables with ties", { skip }, () => {
  const rand = seededRandom(7);
  const tables = Array.from({ length: 30 }, (_, t) =>
    Array.from({ length: 5 + t * 7 }, () => (rand() < 0.2 ? Math.round(rand() * 20) / 1000 : rand() < 0.1 ? 1 : rand())),
  );
  const script = [
    "import json, sys",
    "from statsmodels.stats.multitest import multipletests",
    "tables = json.loads(sys.stdin.read())",
    "print(json.dumps([[list(multipletests(t, method=m)[1]) for m in ('fdr_bh', 'holm')] for t in tables]))",
  ].join("\n");
  const answers = JSON.parse(execFileSync(parityPython, ["-c", script], { input: JSON.stringify(tables) }).toString()) as number[][][];
  tables.forEach((p, t) => {
    assert.ok(close(adjustedPValues(p, "bh"), answers[t]![0]!), `table ${t}, BH`);
    assert.ok(close(adjustedPValues(p, "holm"), answers[t]![1]!), `table ${t}, Holm`);
  });
});
