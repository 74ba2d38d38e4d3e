// Near duplicates among diagnostic items: sets of word shingles with a Jaccard similarity above a
// threshold, joined by prefix filtering on the word hashes of wordHashes.ts.
import { PairMap, U32Buffer, appendNgramHashes } from "./wordHashes";

const shingleScratch = new U32Buffer();

/**
 * A set of 32-bit hashes reused call after call, emptied by starting a new generation rather than
 * by writing: the joins below build one per set, and sorting each set instead costs more than
 * the rest of a near-duplicate check together.
 */
class ScratchHashSet {
  private keys = new Uint32Array(256);
  private stamps = new Int32Array(256);
  private generation = 0;

  /** Empties the set, sized for `capacity` values. */
  reset(capacity: number): void {
    if (capacity * 2 > this.keys.length) {
      const size = 1 << Math.ceil(Math.log2(capacity * 2));
      [this.keys, this.stamps, this.generation] = [new Uint32Array(size), new Int32Array(size), 0];
    }
    if (++this.generation === 0x7fffffff) {
      this.stamps.fill(0);
      this.generation = 1;
    }
  }

  /** Adds `hash`; false when it was there already. */
  add(hash: number): boolean {
    const mask = this.keys.length - 1;
    // The hashes are well mixed in every bit (see `bucketOf`): their low bits index the table.
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      if (this.stamps[slot] !== this.generation) {
        this.stamps[slot] = this.generation;
        this.keys[slot] = hash;
        return true;
      }
      if (this.keys[slot] === hash) return false;
    }
  }

  has(hash: number): boolean {
    const mask = this.keys.length - 1;
    for (let slot = hash & mask; this.stamps[slot] === this.generation; slot = (slot + 1) & mask) if (this.keys[slot] === hash) return true;
    return false;
  }
}

const seenShingles = new ScratchHashSet();

/**
 * The shingle set (distinct hashes of word n-grams, in no particular order) of
 * `words[from..to)`. A range shorter than n words is one shingle, itself; an empty range is an
 * empty set.
 */
export function shingleSet(words: Uint32Array, from: number, to: number, n: number): Uint32Array {
  if (to <= from) return new Uint32Array(0);
  shingleScratch.clear();
  appendNgramHashes(words, from, to, Math.min(n, to - from), shingleScratch);
  const v = shingleScratch.values;
  seenShingles.reset(shingleScratch.length);
  let kept = 0;
  for (let k = 0; k < shingleScratch.length; k++) if (seenShingles.add(v[k]!)) v[kept++] = v[k]!;
  return v.slice(0, kept);
}

/** |x ∩ y| / |x ∪ y| of two shingle sets. */
export function jaccard(x: Uint32Array, y: Uint32Array): number {
  const shared = sharedCount(x, y);
  const union = x.length + y.length - shared;
  return union === 0 ? 1 : shared / union;
}

function sharedCount(x: Uint32Array, y: Uint32Array): number {
  const [small, large] = x.length <= y.length ? [x, y] : [y, x];
  seenShingles.reset(small.length);
  for (let k = 0; k < small.length; k++) seenShingles.add(small[k]!);
  let shared = 0;
  for (let k = 0; k < large.length; k++) if (seenShingles.has(large[k]!)) shared++;
  return shared;
}

export interface SimilarPair {
  /** The later range. */
  index: number;
  /** The earliest earlier range similar to it. */
  earlier: number;
  similarity: number;
}

/**
 * Approximate shingle frequencies are counted in 2^18 buckets (512 KB): small enough to stay in
 * cache (an 8 MB table made each count a cache miss and doubled the join's time), large enough
 * that a shingle shared by dozens of items stands out from the few rare ones sharing its bucket.
 */
const BUCKET_BITS = 18;

const NO_SHINGLES = new Uint32Array(0);

/**
 * For each word range `words[from[i]..to[i])`, the earliest earlier range whose shingle set
 * (word n-grams) has a Jaccard similarity of at least `threshold` with its own and that
 * `accept` agrees with. Ranges for which `skip` is true take no part; empty ranges neither.
 */
export function similarSets(
  words: Uint32Array,
  from: Int32Array,
  to: Int32Array,
  n: number,
  threshold: number,
  skip: (index: number) => boolean = () => false,
  accept: (index: number, earlier: number) => boolean = () => true,
): SimilarPair[] {
  const sets = Array.from(from, (f, i) => (skip(i) ? NO_SHINGLES : shingleSet(words, f, to[i]!, n)));
  return joinSimilarSets(sets, threshold, accept);
}

/**
 * For each shingle set (distinct hashes: `shingleSet`), the earliest earlier set with
 * a Jaccard similarity of at least `threshold` that `accept` agrees with. Empty sets take no part.
 * The sets are the callers' to keep: an editor re-checking a file keeps those of unchanged lines.
 *
 * An exact all-pairs similarity join by prefix filtering (Bayardo, Ma and Srikant, "Scaling up
 * all pairs similarity search", WWW 2007): under any one total order of shingles, two sets with
 * Jaccard >= t share one of the first |x| - ceil(t|x|) + 1 shingles of each. Ordering rare
 * shingles first keeps the indexed prefixes rare, so only sets sharing a rare shingle are ever
 * compared and the work grows with the number of similar pairs, not with the square of the
 * sets. The order is (approximate frequency, hash): the frequency is counted per hash bucket
 * rather than per shingle, which costs no hash table and cannot make the join miss a pair,
 * since correctness needs only that the order be the same for all sets.
 */
export function joinSimilarSets(
  sets: readonly Uint32Array[],
  threshold: number,
  accept: (index: number, earlier: number) => boolean = () => true,
  prefixOf?: (index: number) => Float64Array,
): SimilarPair[] {
  const count = sets.length;
  let total = 0;
  for (const set of sets) total += set.length;
  const order = prefixOf ? undefined : shingleOrder(sets);
  const prefix = new Float64Array(64);

  // Postings: for each shingle, the sets whose prefix holds it, oldest first (linked lists).
  const firstPosting = new PairMap(total * (1 - threshold) + count); // prefixes: sized once
  const postingRange: number[] = [];
  const postingNext: number[] = [];
  const lastPosting: number[] = []; // per list, by its first posting
  const compared = new Int32Array(count).fill(-1); // the set each set was last compared with
  const pairs: SimilarPair[] = [];
  for (let i = 0; i < count; i++) {
    const set = sets[i]!;
    const size = set.length;
    if (size === 0) continue;
    const p = prefixLength(size, threshold);
    let prefixKeys: Float64Array;
    if (prefixOf) prefixKeys = prefixOf(i);
    else {
      prefixKeys = p <= prefix.length ? prefix : new Float64Array(p);
      smallestKeys(set, 0, size, order!, prefixKeys, p);
    }
    let best: SimilarPair | undefined;
    for (let k = 0; k < p; k++) {
      for (let e = firstPosting.get(hashOfKey(prefixKeys[k]!)); e !== -1; e = postingNext[e]!) {
        const j = postingRange[e]!;
        if (best && j >= best.earlier) break;
        if (compared[j] === i) continue;
        compared[j] = i;
        if (!lengthsCanMeet(size, sets[j]!.length, threshold)) continue;
        const similarity = jaccard(set, sets[j]!);
        if (similarity >= threshold && accept(i, j)) best = { index: i, earlier: j, similarity };
      }
    }
    if (best) pairs.push(best);
    for (let k = 0; k < p; k++) {
      const hash = hashOfKey(prefixKeys[k]!);
      const e = postingRange.push(i) - 1;
      postingNext.push(-1);
      lastPosting.push(e);
      const first = firstPosting.get(hash);
      if (first === -1) firstPosting.set(hash, 0, e);
      else {
        postingNext[lastPosting[first]!] = e;
        lastPosting[first] = e;
      }
    }
  }
  return pairs;
}

/**
 * The order the join takes shingles in: approximate frequency (counts per hash bucket, saturating
 * at 65535), then hash. Any one order gives the join's exact result; one counted on the sets
 * themselves keeps the prefixes rare and so the join fast. An editor keeps one order for many
 * checks, so each set's prefix is computed once (`prefixKeys`).
 */
export type ShingleOrder = Uint16Array;

export function shingleOrder(sets: readonly Uint32Array[]): ShingleOrder {
  const frequency = new Uint16Array(1 << BUCKET_BITS);
  for (const set of sets) {
    for (let k = 0; k < set.length; k++) {
      const bucket = bucketOf(set[k]!);
      if (frequency[bucket]! < 65535) frequency[bucket]!++;
    }
  }
  return frequency;
}

/** The keys of a set's prefix under `order`: its first |set| - ceil(t|set|) + 1 shingles. */
export function prefixKeys(set: Uint32Array, order: ShingleOrder, threshold: number): Float64Array {
  if (set.length === 0) return new Float64Array(0);
  const p = prefixLength(set.length, threshold);
  const keys = new Float64Array(p);
  smallestKeys(set, 0, set.length, order, keys, p);
  return keys;
}

// The n-gram hashes are sums of products of well-mixed word hashes: their top bits mix every
// input bit, so they index tables directly.
function bucketOf(hash: number): number {
  return hash >>> (32 - BUCKET_BITS);
}

/** Order key of a shingle: approximate frequency, then hash. */
function keyOf(hash: number, frequency: Uint16Array): number {
  return frequency[bucketOf(hash)]! * 4294967296 + hash;
}

function hashOfKey(key: number): number {
  return key % 4294967296;
}

/** The `p` smallest order keys of `values[from..to)`, ascending, into `out` (insertion into a short list). */
function smallestKeys(values: Uint32Array, from: number, to: number, frequency: Uint16Array, out: Float64Array, p: number): void {
  let filled = 0;
  for (let k = from; k < to; k++) {
    const key = keyOf(values[k]!, frequency);
    if (filled === p && key >= out[p - 1]!) continue;
    let q = filled < p ? filled++ : p - 1;
    while (q > 0 && out[q - 1]! > key) {
      out[q] = out[q - 1]!;
      q--;
    }
    out[q] = key;
  }
}

function prefixLength(size: number, threshold: number): number {
  return size - Math.ceil(threshold * size - 1e-9) + 1;
}

function lengthsCanMeet(a: number, b: number, threshold: number): boolean {
  return Math.min(a, b) >= Math.ceil(threshold * Math.max(a, b) - 1e-9);
}
