// The words of a run's progress: one line for the notification, the status bar and the Runs view
// (progressText), the step it names (the variant being scored), and the CLI's lines made of them.
import assert from "node:assert/strict";
import { test } from "node:test";
import { progressView } from "../../../src/cli/progress";
import { finishedVariantLabel, progressStep, progressText, type RunProgress } from "../../../src/core/plan/progressText";
import { buildProgressText, buildSecondsLeft } from "../../../src/core/runner/build";

test("the step: the importance phase names its ability, a profile's scoring names its variant", () => {
  assert.equal(progressStep({ phase: "importance", ability: "Spatial Reasoning" }), "importance · Spatial Reasoning");
  assert.equal(progressStep({ phase: "baseline" }), "baseline");
  assert.equal(progressStep({ phase: "load" }), "loading the weights");
  assert.equal(
    progressStep({ phase: "score", variant: { ability: "Semantic Relationship", method: "signed", selection: "top", k: 0.01024 } }),
    "Semantic Relationship · top · k 0.01024 · signed",
  );
  assert.equal(progressStep({ phase: "score", variant: { ability: null, selection: "random", k: 0.01024 } }), "random control · k 0.01024");
  assert.equal(
    progressStep({ phase: "score", variant: { ability: null, selection: "random", k: 0.01024, draw: 1, draws: 5 } }),
    "random control · draw 2 of 5 · k 0.01024",
    "random_draws: which draw, counted from 1",
  );
  assert.equal(
    progressStep({ phase: "score", variant: { ability: null, selection: "random", k: 0.01024, draw: 0, draws: 1 } }),
    "random control · k 0.01024",
  );
  assert.equal(progressStep({ phase: "score" }), "scoring", "the score subcommand scores no variant");
});

test("one line says the variant being scored, which of how many it is, how far, and the run's share and time left", () => {
  const scoring: RunProgress = {
    model: "demo-llama",
    phase: "score",
    done: 2144,
    total: 2750,
    variant: { ability: "Semantic Relationship", method: "signed", selection: "top", k: 0.01024 },
    variants: { done: 4, total: 24 },
  };
  assert.equal(progressText(scoring), "demo-llama · variant 5/24: Semantic Relationship · top · k 0.01024 · signed · 2144/2750 items");
  assert.equal(
    progressText({ ...scoring, overall: { fraction: 0.342, elapsedSeconds: 62, remainingSeconds: 130 } }),
    "demo-llama · variant 5/24: Semantic Relationship · top · k 0.01024 · signed · 2144/2750 items · 34%, elapsed 1 min 02 s, about 2 min 10 s left",
  );
  // no share before a pace is measured, and never 100% while the run goes on
  assert.equal(
    progressText({ model: "m", phase: "importance", ability: "A", done: 3, total: 8, overall: { fraction: 0, elapsedSeconds: 4 } }),
    "m · importance · A 3/8 · elapsed 4 s, estimating the time left",
  );
  assert.match(
    progressText({
      model: "m",
      phase: "variants",
      done: 24,
      total: 24,
      overall: { fraction: 0.9996, elapsedSeconds: 600, remainingSeconds: 0.2 },
    }),
    /^m · variants 24\/24 · 99%, /,
  );
  // after the runner: the results are read back, for which there is no estimate to give
  assert.equal(
    progressText({ model: "m", phase: "results", done: 0, total: 0, overall: { fraction: 1, elapsedSeconds: 600, remainingSeconds: 0 } }),
    "m · writing the results",
  );
});

test("a variant line says which ability, selection, k and n, and whether it was read back", () => {
  assert.equal(
    finishedVariantLabel({ model: "m", ability: "Spatial Reasoning", selection: "top", k: 0.01, n: 351, resumed: false }),
    "variant Spatial Reasoning · top · k 0.01, n 351",
  );
  assert.equal(
    finishedVariantLabel({ model: "m", ability: null, selection: "random", k: 0.001, n: 35, resumed: true }),
    "variant random control · k 0.001, n 35 (resumed)",
  );
  assert.equal(
    finishedVariantLabel({ model: "m", ability: null, selection: "random", k: 0.001, n: 35, resumed: false, draw: 4, draws: 5 }),
    "variant random control · draw 5 of 5 · k 0.001, n 35",
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
    "m importance · A 0/4\n",
    "m importance · A 1/4\n",
    "m importance · A 2/4\n",
    "m importance · A 3/4\n",
    "m importance · A 4/4\n",
    "m importance · B 0/4\n",
    "m importance · B 1/4\n",
    "m importance · B 2/4\n",
    "m importance · B 3/4\n",
    "m importance · B 4/4\n",
    "m variant A · top · k 0.5, n 3\n",
  ]);
});

test("the runner's build: an estimate from the compile's measured pace, the last build's before it, else none", () => {
  // 6 of 22 steps in 90 s: 16 more at 15 s each
  assert.equal(buildSecondsLeft(100, { done: 6, total: 22, seconds: 90 }, undefined), 240);
  assert.equal(buildSecondsLeft(100, { done: 6, total: 22, seconds: 90 }, 47), 240, "the pace measured beats the last build");
  assert.equal(buildSecondsLeft(10, { done: 0, total: 22, seconds: 3 }, 376), 366, "before a step is done: the last build's length");
  assert.equal(buildSecondsLeft(10, undefined, undefined), undefined, "a first build: no estimate, not a guess");
  assert.equal(buildSecondsLeft(500, undefined, 376), 0);
  assert.equal(buildProgressText({ step: "configure", done: 0, total: 0, elapsedSeconds: 3 }), "configure");
  assert.equal(
    buildProgressText({ step: "compile", done: 6, total: 22, elapsedSeconds: 100, remainingSeconds: 240 }),
    "compile 6/22 · about 4 min 00 s left",
  );
});
