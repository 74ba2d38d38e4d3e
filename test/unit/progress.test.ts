// Progress lines of `bprof run`: the phase with its ability, and finished variants.
import assert from "node:assert/strict";
import { test } from "node:test";
import { progressView } from "../../src/cli/progress";
import { finishedVariantLabel, phaseLabel } from "../../src/core/run";

test("the importance phase names its ability; other phases stand alone", () => {
  assert.equal(
    phaseLabel({ model: "m", phase: "importance", done: 1, total: 4, ability: "Spatial Reasoning" }),
    "importance (Spatial Reasoning)",
  );
  assert.equal(phaseLabel({ model: "m", phase: "baseline", done: 1, total: 4 }), "baseline");
});

test("a variant line says which ability, selection, k and n, and whether it was read back", () => {
  assert.equal(
    finishedVariantLabel({ model: "m", ability: "Spatial Reasoning", selection: "top", k: 0.01, n: 351, resumed: false }),
    "variant Spatial Reasoning top k=0.01 n=351",
  );
  assert.equal(
    finishedVariantLabel({ model: "m", ability: null, selection: "random", k: 0.001, n: 35, resumed: true }),
    "variant random control k=0.001 n=35 (resumed)",
  );
});

test("plain lines: one per phase (and ability) and decile, one per variant", () => {
  const written: string[] = [];
  const stream = { isTTY: false, write: (s: string) => written.push(s) } as unknown as NodeJS.WriteStream;
  const view = progressView(stream);
  for (const ability of ["A", "B"])
    for (let done = 0; done <= 4; done++) view.update({ model: "m", phase: "importance", ability, done, total: 4 });
  view.variant({ model: "m", ability: "A", selection: "top", k: 0.5, n: 3, resumed: false });
  assert.deepEqual(written, [
    "m importance (A) 0/4\n",
    "m importance (A) 1/4\n",
    "m importance (A) 2/4\n",
    "m importance (A) 3/4\n",
    "m importance (A) 4/4\n",
    "m importance (B) 0/4\n",
    "m importance (B) 1/4\n",
    "m importance (B) 2/4\n",
    "m importance (B) 3/4\n",
    "m importance (B) 4/4\n",
    "m variant A top k=0.5 n=3\n",
  ]);
});
