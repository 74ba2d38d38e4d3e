// The whole run's progress and time left, on a recorded stream of the runner's progress events
// (the order `profile` emits them in: load, the baseline's scores, then per ability its importance
// pass, its ranking and its variants, each variant's items scored as `score` progress before its
// `variants` step, the random control's variants last), at constant paces, so the estimate must
// equal the time the run really has left once each kind of work was timed. A resumed run's stream
// reads back the baseline, an ability's rankings and its variants first, with no progress of
// their own, and its estimate must not take that reading for the pace of the work left.
import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { test } from "node:test";
import { progressView } from "../../../src/cli/progress";
import { describeOverall, formatDuration, RunEstimate, type ProgressEvent, type RunPlan } from "../../../src/core/plan/estimate";
import { progressText } from "../../../src/core/plan/progressText";

const ITEMS = 100; // 10 items/s: 10 s for the baseline, 10 s a variant
const SEQUENCES = 40; // 5 sequences/s: 8 s an importance pass
const K = 2;
const PLAN: RunPlan = {
  models: [
    {
      name: "m",
      items: ITEMS,
      abilities: [
        { name: "A", sequences: SEQUENCES },
        { name: "B", sequences: SEQUENCES },
      ],
      variants: 3 * K,
      randomVariants: K,
    },
  ],
};

/** [seconds since the start, event], as the runner would send them. */
function recordedStream(): [number, ProgressEvent][] {
  const out: [number, ProgressEvent][] = [[0, { model: "m", phase: "load", done: 1, total: 1 }]];
  let t = 1;
  for (let i = 0; i <= 10; i++) out.push([t + i, { model: "m", phase: "baseline", done: i * 10, total: ITEMS }]);
  t += 10;
  out.push([t, { model: "m", phase: "variants", done: 0, total: 3 * K }]);
  let variants = 0;
  for (const ability of ["A", "B", null]) {
    if (ability) {
      for (let b = 1; b <= 4; b++) out.push([t + 2 * b, { model: "m", phase: "importance", done: b, total: 4, ability }]);
      t += 8;
      out.push([t, { model: "m", phase: "rank", done: 1, total: 1, ability }]);
    }
    for (let k = 0; k < K; k++) {
      out.push(...variantScores(t));
      t += 10;
      out.push([t, { model: "m", phase: "variants", done: ++variants, total: 3 * K }]);
    }
  }
  return out;
}

/** A variant's items scored from `t` on, 10 a second, as its `score` progress. */
function variantScores(t: number): [number, ProgressEvent][] {
  return Array.from({ length: 11 }, (_, i): [number, ProgressEvent] => [t + i, { model: "m", phase: "score", done: i * 10, total: ITEMS }]);
}

test("at constant paces, once each kind of work was timed, the time left is the run's real remainder", () => {
  const stream = recordedStream();
  const end = stream.at(-1)![0];
  assert.equal(end, 87);
  const estimate = new RunEstimate(PLAN, 0);
  const seen: { t: number; phase: string; remaining?: number; fraction: number }[] = [];
  for (const [t, event] of stream) {
    const o = estimate.update(event, t * 1000);
    seen.push({
      t,
      phase: event.phase,
      fraction: o.fraction,
      ...(o.remainingSeconds !== undefined ? { remaining: o.remainingSeconds } : {}),
    });
    assert.ok(Math.abs(o.elapsedSeconds - t) < 1e-9);
  }
  // before the importance pass was timed, nothing is promised
  assert.ok(seen.filter((s) => s.t <= 11).every((s) => s.remaining === undefined && s.fraction === 0));
  // from the first importance batch on, every estimate is exact
  for (const s of seen.filter((x) => x.t >= 13)) {
    assert.ok(
      s.remaining !== undefined && Math.abs(s.remaining - (end - s.t)) < 1e-6,
      `at ${s.t} s (${s.phase}): ${s.remaining} s left, really ${end - s.t}`,
    );
    assert.ok(Math.abs(s.fraction - s.t / end) < 1e-9);
  }
  assert.equal(seen.at(-1)!.fraction, 1);
});

test("the variants' pace comes from the baseline's per item until a variant is timed, then from the variants", () => {
  const estimate = new RunEstimate(PLAN, 0);
  for (const [t, event] of recordedStream().filter(([t]) => t <= 19)) estimate.update(event, t * 1000);
  // importance of B (8 s) and 6 variants at the baseline's 0.1 s per item (10 s each)
  assert.equal(estimate.update({ model: "m", phase: "rank", done: 1, total: 1, ability: "A" }, 19_000).remainingSeconds, 68);
  // a first variant that took 20 s instead: the other five at that pace
  estimate.update({ model: "m", phase: "score", done: ITEMS, total: ITEMS }, 39_000);
  const slower = estimate.update({ model: "m", phase: "variants", done: 1, total: 6 }, 39_000);
  assert.equal(slower.remainingSeconds, 8 + 5 * 20);
});

test("a resumed run counts what it reads back at its own pace: nothing is promised until computed work is timed, then the promise holds", () => {
  // the baseline, A's rankings and A's two variants are on disk: the runner reads them back in a
  // second, with no progress but the variants' steps; then B's importance pass and four variants
  // are computed at the paces above (2 s a batch, 10 s a variant)
  const stream: [number, ProgressEvent][] = [
    [0, { model: "m", phase: "variants", done: 0, total: 6 }],
    [0.5, { model: "m", phase: "variants", done: 1, total: 6 }],
    [1, { model: "m", phase: "variants", done: 2, total: 6 }],
  ];
  let t = 1;
  for (let b = 1; b <= 4; b++) stream.push([t + 2 * b, { model: "m", phase: "importance", done: b, total: 4, ability: "B" }]);
  t += 8;
  stream.push([t, { model: "m", phase: "rank", done: 1, total: 1, ability: "B" }]);
  for (let v = 3; v <= 6; v++) {
    stream.push(...variantScores(t));
    t += 10;
    stream.push([t, { model: "m", phase: "variants", done: v, total: 6 }]);
  }
  const end = t;
  assert.equal(end, 49);
  const estimate = new RunEstimate(PLAN, 0);
  for (const [at, event] of stream) {
    const o = estimate.update(event, at * 1000);
    // reading back took a second for two variants: never the pace of the four left to compute
    if (at < 10) assert.equal(o.remainingSeconds, undefined, `at ${at} s (${event.phase} ${event.done})`);
    else
      assert.ok(
        o.remainingSeconds !== undefined && Math.abs(o.remainingSeconds - (end - at)) < 1e-6,
        `at ${at} s (${event.phase} ${event.done}): ${o.remainingSeconds} s left, really ${end - at}`,
      );
  }
  assert.deepEqual(estimate.readBackPace(), { work: 2, secondsPer: 0.5 });
});

test("durations read as a person says them; logs get a line per tenth of the run", () => {
  assert.equal(formatDuration(42.4), "42 s");
  assert.equal(formatDuration(192), "3 min 12 s");
  assert.equal(formatDuration(3 * 3600 + 4 * 60 + 59), "3 h 04 min");
  assert.equal(describeOverall({ fraction: 0, elapsedSeconds: 5 }), "elapsed 5 s, estimating the time left");

  let written = "";
  const log = new Writable({ write: (chunk, _encoding, done) => ((written += String(chunk)), done()) }) as unknown as NodeJS.WriteStream;
  const view = progressView(log);
  const estimate = new RunEstimate(PLAN, 0);
  for (const [t, event] of recordedStream()) view.update({ ...event, overall: estimate.update(event, t * 1000) });
  const tenths = written.split("\n").filter((l) => l.startsWith("run "));
  // one line for each tenth an event reaches (a 10 s variant can take the run past two at once)
  const percents = tenths.map((l) => Number(/^run (\d+)%/.exec(l)![1]));
  assert.deepEqual(
    percents,
    [...percents].sort((a, b) => a - b),
  );
  assert.equal(new Set(percents).size, percents.length);
  assert.ok(percents.length >= 8 && percents[0] === 10 && percents.at(-1) === 100, percents.join(" "));
  assert.match(tenths[0]!, /^run 10%: elapsed 13 s, about 1 min 14 s left$/);
});

test("a progress line gives the run's share only once a pace is measured", () => {
  const step = { model: "m", phase: "baseline", done: 40, total: 100 };
  assert.equal(
    progressText({ ...step, overall: { fraction: 0, elapsedSeconds: 4 } }),
    "m · baseline 40/100 · elapsed 4 s, estimating the time left",
  );
  assert.equal(
    progressText({ ...step, overall: { fraction: 0.25, elapsedSeconds: 4, remainingSeconds: 12 } }),
    "m · baseline 40/100 · 25%, elapsed 4 s, about 12 s left",
  );
  assert.equal(progressText(step), "m · baseline 40/100");
});
