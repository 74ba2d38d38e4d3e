import assert from "node:assert/strict";
import { test } from "node:test";
import { argmax, benchmarkAccuracy, scoreItem } from "../../../src/core/analysis/accuracy";
import { parseEventLine } from "../../../src/core/launch/events";

const choice = (logprob: number) => ({ logprob, tokens: 1, greedy: false });

test("argmax breaks ties toward the lowest index", () => {
  assert.equal(argmax([1, 3, 3]), 1);
  assert.equal(argmax([-2, -2]), 0);
});

test("acc takes the summed log-probability, acc_norm the log-probability per UTF-8 byte", () => {
  // "a" (1 byte) at -2 vs "ééé" (6 bytes) at -3: acc picks 0, acc_norm picks 1 (-0.5 per byte).
  const item = scoreItem("b", 0, 1, ["a", "ééé"], [choice(-2), choice(-3)]);
  assert.deepEqual(item.choiceBytes, [1, 6]);
  assert.equal(item.prediction, 0);
  assert.equal(item.predictionNorm, 1);
  const acc = benchmarkAccuracy([item, scoreItem("b", 1, 0, ["x", "y", "z"], [choice(-1), choice(-5), choice(-9)])]);
  assert.deepEqual(acc, { items: 2, acc: 0.5, acc_norm: 1, chance: (1 / 2 + 1 / 3) / 2 });
});

test("a stdout line that is not an event becomes a warning", () => {
  assert.deepEqual(parseEventLine('{"type":"progress","phase":"score","done":1,"total":2}'), {
    type: "progress",
    phase: "score",
    done: 1,
    total: 2,
  });
  assert.equal(parseEventLine("Segmentation fault").type, "warning");
  assert.equal(parseEventLine("[1,2]").type, "warning");
});
