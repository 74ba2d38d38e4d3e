import assert from "node:assert/strict";
import { test } from "node:test";
import { scoreItem, type ScoredItem } from "../../../src/core/analysis/accuracy";
import {
  abilityImpactOfItems,
  abilityImpactScore,
  alignedVariant,
  chancePerItem,
  scoreVector,
  meanOf,
} from "../../../src/core/analysis/ais";

const choice = (logprob: number) => ({ logprob, tokens: 1, greedy: false });

/** A 4-choice item of document `index` whose answer is `target`; the model prefers choice `picked`. */
function item(index: number, target: number, picked: number): ScoredItem {
  const logprobs = [-4, -4, -4, -4].map((lp, c) => (c === picked ? -1 : lp));
  return scoreItem("b", index, target, ["a", "b", "c", "d"], logprobs.map(choice));
}

test("AIS is the share of the above-chance margin an ablation removes (worked by hand)", () => {
  // Baseline 0.75 on a 4-choice benchmark (chance 0.25): margin 0.5. Ablated 0.5: removed 0.25 of it -> 0.5.
  assert.deepEqual(abilityImpactScore({ baseline: 0.75, ablated: 0.5, chance: 0.25 }), { defined: true, value: 0.5 });
  // Ablating everything down to chance removes the whole margin.
  assert.deepEqual(abilityImpactScore({ baseline: 0.75, ablated: 0.25, chance: 0.25 }), { defined: true, value: 1 });
  // An ablation that helps (0.75 -> 0.875) is interference: (0.75 - 0.875) / 0.5 = -0.25.
  assert.deepEqual(abilityImpactScore({ baseline: 0.75, ablated: 0.875, chance: 0.25 }), { defined: true, value: -0.25 });
  // Exact-match generation: chance 0, so AIS is the relative drop, (0.5 - 0.25) / 0.5.
  assert.deepEqual(abilityImpactScore({ baseline: 0.5, ablated: 0.25, chance: 0 }), { defined: true, value: 0.5 });
});

test("AIS is undefined at chance and below, and the reason gives the numbers", () => {
  const at = abilityImpactScore({ baseline: 0.25, ablated: 0.2, chance: 0.25 });
  assert.equal(at.defined, false);
  assert.ok(!at.defined && /at chance/.test(at.reason) && at.reason.includes("0.2500"), !at.defined ? at.reason : "");
  const below = abilityImpactScore({ baseline: 0.2, ablated: 0.1, chance: 0.25 });
  assert.ok(!below.defined && /below chance/.test(below.reason) && below.reason.includes("0.2000") && below.reason.includes("0.2500"));
  // 1/3 accuracy against a chance that is a float mean of thirds: at chance, not 1e15.
  const thirds = meanOf([1 / 3, 1 / 3, 1 / 3, 1 / 3, 1 / 3, 1 / 3, 1 / 3]);
  assert.equal(abilityImpactScore({ baseline: 1 / 3, ablated: 0, chance: thirds }).defined, false);
  assert.throws(() => abilityImpactScore({ baseline: Number.NaN, ablated: 0, chance: 0 }), /finite/);
});

test("correctness vectors follow the chosen metric", () => {
  // acc picks "a" (-2) over "ééé" (-3); acc_norm picks "ééé" (-0.5 per byte): target 1 is right only under acc_norm.
  const items = [scoreItem("b", 0, 1, ["a", "ééé"], [choice(-2), choice(-3)]), item(1, 2, 2)];
  assert.deepEqual(scoreVector(items, "acc"), Uint8Array.from([0, 1]));
  assert.deepEqual(scoreVector(items, "acc_norm"), Uint8Array.from([1, 1]));
  assert.deepEqual(chancePerItem(items), Float64Array.from([1 / 2, 1 / 4]));
});

test("AIS from scored items matches documents by index, whatever order the variant is in", () => {
  // Baseline right on 0, 1, 2 (0.75); the variant loses document 1 (0.5); chance 0.25 -> AIS 0.5.
  const baseline = [item(0, 0, 0), item(1, 1, 1), item(2, 2, 2), item(3, 3, 0)];
  const ablated = [item(3, 3, 0), item(2, 2, 2), item(1, 1, 3), item(0, 0, 0)];
  assert.deepEqual(
    alignedVariant(baseline, ablated).map((i) => i.index),
    [0, 1, 2, 3],
  );
  assert.deepEqual(abilityImpactOfItems(baseline, ablated, "acc"), { defined: true, value: 0.5 });
  assert.throws(() => alignedVariant(baseline, ablated.slice(1)), /same documents/);
  assert.throws(() => alignedVariant(baseline, [item(0, 0, 0), item(0, 0, 0), item(2, 2, 2), item(3, 3, 0)]), /twice/);
  assert.throws(() => alignedVariant(baseline, [item(0, 0, 0), item(1, 1, 1), item(2, 2, 2), item(4, 3, 0)]), /no score for document 3/);
  assert.throws(() => alignedVariant(baseline, [item(0, 0, 0), item(1, 2, 1), item(2, 2, 2), item(3, 3, 0)]), /target/);
});
