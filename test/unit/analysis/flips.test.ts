import assert from "node:assert/strict";
import { test } from "node:test";
import { scoreItem, type ScoredItem } from "../../../src/core/analysis/accuracy";
import { cellFlips } from "../../../src/core/analysis/flips";

const choice = (logprob: number) => ({ logprob, tokens: 1, greedy: false });

/** A 3-choice item with the given per-choice log-likelihoods; choice texts are 1, 2 and 4 bytes long. */
function item(index: number, target: number, logprobs: number[]): ScoredItem {
  return scoreItem("b", index, target, ["a", "bb", "cccc"], logprobs.map(choice));
}

test("flips list exactly the documents whose correctness changed, with scores before and after", () => {
  const baseline = [
    item(10, 0, [-1, -3, -5]), // right
    item(11, 1, [-1, -3, -5]), // wrong
    item(12, 2, [-6, -5, -1]), // right
    item(13, 0, [-3, -1, -5]), // wrong
  ];
  // The variant lists documents in another order: 10 turns wrong, 11 turns right, 12 stays right
  // with other scores, 13 stays wrong with another wrong answer.
  const ablated = [item(13, 0, [-3, -5, -1]), item(12, 2, [-4, -4, -2]), item(11, 1, [-4, -1, -5]), item(10, 0, [-2, -1, -5])];
  const flips = cellFlips(baseline, ablated, "acc");
  assert.deepEqual(flips, {
    metric: "acc",
    rightToWrong: [
      {
        index: 10,
        target: 0,
        choiceBytes: [1, 2, 4],
        before: { prediction: 0, logprobs: [-1, -3, -5] },
        after: { prediction: 1, logprobs: [-2, -1, -5] },
      },
    ],
    wrongToRight: [
      {
        index: 11,
        target: 1,
        choiceBytes: [1, 2, 4],
        before: { prediction: 0, logprobs: [-1, -3, -5] },
        after: { prediction: 1, logprobs: [-4, -1, -5] },
      },
    ],
  });
});

test("flips follow the metric: an item can flip under acc_norm and not under acc", () => {
  // Per byte, [-2, -3, -4] reads [-2, -1.5, -1]: acc picks 0, acc_norm picks 2.
  const baseline = [item(0, 2, [-2, -3, -4])];
  const ablated = [item(0, 2, [-2, -3, -9])]; // per byte [-2, -1.5, -2.25]: acc_norm now picks 1
  assert.deepEqual(cellFlips(baseline, ablated, "acc"), { metric: "acc", rightToWrong: [], wrongToRight: [] });
  const norm = cellFlips(baseline, ablated, "acc_norm");
  assert.equal(norm.rightToWrong.length, 1);
  assert.deepEqual(norm.rightToWrong[0]!.before.prediction, 2);
  assert.deepEqual(norm.rightToWrong[0]!.after.prediction, 1);
  assert.deepEqual(norm.wrongToRight, []);
});

test("an ablation that changes nothing has no flips", () => {
  const baseline = [item(0, 0, [-1, -2, -3]), item(1, 2, [-1, -2, -3])];
  assert.deepEqual(cellFlips(baseline, baseline, "acc"), { metric: "acc", rightToWrong: [], wrongToRight: [] });
});
