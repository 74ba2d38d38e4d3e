import assert from "node:assert/strict";
import { test } from "node:test";
import { intersectionCounts, intersectionSize, jaccardFromCounts, jaccardIndex, jaccardMatrix } from "../../../src/core/analysis/overlap";

test("Jaccard of two index sets by hand", () => {
  // A = {1, 3, 5, 7}, B = {3, 4, 5}: A n B = {3, 5}, A u B = {1, 3, 4, 5, 7} -> 2/5.
  const a = Float64Array.from([1, 3, 5, 7]);
  const b = Float64Array.from([3, 4, 5]);
  assert.equal(intersectionSize(a, b), 2);
  assert.equal(jaccardIndex(2, 4, 3), 0.4);
  assert.deepEqual(jaccardMatrix([a, b]), [
    [1, 0.4],
    [0.4, 1],
  ]);
});

test("indices beyond 2^32 (8B-parameter models) are exact in both element types", () => {
  const big = 2 ** 33;
  // Float64Array: 2^33 and 2^33 + 1 are distinct, as they would not be after a 32-bit wrap.
  assert.equal(intersectionSize(Float64Array.from([big, big + 1, big + 5]), Float64Array.from([big + 1, big + 5, big + 6])), 2);
  const a = BigUint64Array.from([5n, 2n ** 33n, 2n ** 40n + 7n]);
  const b = BigUint64Array.from([2n ** 33n, 2n ** 40n + 7n, 2n ** 50n]);
  assert.equal(intersectionSize(a, b), 2);
  assert.deepEqual(intersectionCounts([a, b]), [
    [3, 2],
    [2, 3],
  ]);
  assert.deepEqual(jaccardMatrix([a, b]), [
    [1, 0.5],
    [0.5, 1],
  ]); // 2 / (3 + 3 - 2)
});

test("Jaccard matrix from intersection counts computed elsewhere", () => {
  // Sizes 10, 20, 5; |A n B| = 5 -> 5/25; |A n C| = 0 -> 0; |B n C| = 5 (C inside B) -> 5/20.
  const counts = [
    [10, 5, 0],
    [5, 20, 5],
    [0, 5, 5],
  ];
  assert.deepEqual(jaccardFromCounts(counts, [10, 20, 5]), [
    [1, 0.2, 0],
    [0.2, 1, 0.25],
    [0, 0.25, 1],
  ]);
  assert.throws(
    () =>
      jaccardFromCounts(
        [
          [10, 11],
          [11, 20],
        ],
        [10, 20],
      ),
    /impossible/,
  );
  assert.throws(() => jaccardFromCounts([[1]], [1, 2]), /matrix/);
});

test("empty sets share nothing, and unsorted or mixed-type input is refused", () => {
  assert.equal(jaccardIndex(0, 0, 0), 0);
  assert.deepEqual(jaccardMatrix([new Float64Array(0), Float64Array.from([1])]), [
    [0, 0],
    [0, 1],
  ]);
  assert.throws(() => jaccardMatrix([Float64Array.from([3, 1])]), /strictly increasing/);
  assert.throws(() => jaccardMatrix([Float64Array.from([1, 1])]), /strictly increasing/);
  assert.throws(() => intersectionSize(Float64Array.from([1]), BigUint64Array.from([1n])), /same element type/);
});
