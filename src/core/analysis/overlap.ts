// Collateral damage between abilities (docs/method.md, "What this project adds"): when two abilities'
// top-k parameter sets overlap, ablating one also ablates part of the other, and their AIS rows
// are not independent. The overlap is reported as the Jaccard index |A n B| / |A u B|.
//
// Sets are ascending arrays of flat parameter indices. An 8B model has more than 2^32
// parameters, so indices are Float64Array (exact up to 2^53) or BigUint64Array, never 32-bit.
// Whichever side computes intersections (here by a linear merge, or the runner in C++ over its
// own storage) can turn counts into Jaccard indices with jaccardFromCounts.

export type SortedIndices = Float64Array | BigUint64Array;

/** Throws unless `indices` is strictly increasing, which the linear merge relies on. */
export function assertStrictlyIncreasing(indices: SortedIndices, name = "index set"): void {
  for (let i = 1; i < indices.length; i++) {
    if (!(indices[i - 1]! < indices[i]!)) {
      throw new RangeError(`${name} must be strictly increasing; position ${i} holds ${indices[i]} after ${indices[i - 1]}`);
    }
  }
}

/** |a n b| of two strictly increasing index arrays of the same type, in one linear merge. */
export function intersectionSize(a: Float64Array, b: Float64Array): number;
export function intersectionSize(a: BigUint64Array, b: BigUint64Array): number;
export function intersectionSize(a: SortedIndices, b: SortedIndices): number;
export function intersectionSize(a: SortedIndices, b: SortedIndices): number {
  if (a.constructor !== b.constructor) throw new TypeError("both index sets must have the same element type");
  let i = 0;
  let j = 0;
  let shared = 0;
  while (i < a.length && j < b.length) {
    const x = a[i]!;
    const y = b[j]!;
    if (x < y) i++;
    else if (y < x) j++;
    else {
      shared++;
      i++;
      j++;
    }
  }
  return shared;
}

/**
 * |A n B| / |A u B|. Two empty sets share no parameter, so their index is 0 rather than 0/0
 * (n = floor(k x parameters) is 0 for a small enough k).
 */
export function jaccardIndex(intersection: number, sizeA: number, sizeB: number): number {
  if (intersection < 0 || intersection > Math.min(sizeA, sizeB)) {
    throw new RangeError(`an intersection of ${intersection} is impossible for sets of ${sizeA} and ${sizeB}`);
  }
  const union = sizeA + sizeB - intersection;
  return union === 0 ? 0 : intersection / union;
}

/** Jaccard matrix from a square matrix of pairwise intersection counts and the set sizes. */
export function jaccardFromCounts(intersections: readonly (readonly number[])[], sizes: readonly number[]): number[][] {
  if (intersections.length !== sizes.length || intersections.some((row) => row.length !== sizes.length)) {
    throw new RangeError(`intersection counts must form a ${sizes.length} x ${sizes.length} matrix, one row and column per set`);
  }
  return intersections.map((row, i) => row.map((count, j) => jaccardIndex(count, sizes[i]!, sizes[j]!)));
}

/** Pairwise intersection counts (the diagonal holds each set's size), each pair merged once. */
export function intersectionCounts(sets: readonly SortedIndices[]): number[][] {
  sets.forEach((set, i) => assertStrictlyIncreasing(set, `index set ${i}`));
  const counts = sets.map(() => new Array<number>(sets.length).fill(0));
  sets.forEach((a, i) => {
    counts[i]![i] = a.length;
    for (let j = i + 1; j < sets.length; j++) counts[i]![j] = counts[j]![i] = intersectionSize(a, sets[j]!);
  });
  return counts;
}

/** Jaccard overlap of every pair of top-k sets, e.g. one set per ability at one k. */
export function jaccardMatrix(sets: readonly SortedIndices[]): number[][] {
  return jaccardFromCounts(
    intersectionCounts(sets),
    sets.map((set) => set.length),
  );
}
