// Word n-grams of normalised text, for the duplicate and contamination checks of diagnostic
// datasets. Normalisation follows GPT-3's contamination analysis (Brown et al. 2020, appendix C):
// lowercase, punctuation stripped, words split on whitespace.
//
// Words are handled as 32-bit hashes in typed arrays: allocating one string per word (or running
// a Unicode regex over each text) costs more than the whole one-second budget of checking a
// 20,000-item file. Hashes can collide, so every match found through them is confirmed on the
// words themselves before anyone reports it.

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** A growable array of unsigned 32-bit values. */
export class U32Buffer {
  values = new Uint32Array(1024);
  length = 0;

  push(v: number): void {
    if (this.length === this.values.length) {
      const grown = new Uint32Array(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.length++] = v;
  }

  clear(): void {
    this.length = 0;
  }
}

// Character classes: a word character (kept, lowercased), a separator (whitespace), or
// anything else (punctuation and symbols: deleted, so "don't" and "dont" are the same word).
const STRIP = 0;
const WORD = 1;
const SPACE = 2;
const nonAsciiClass = new Uint8Array(65536); // 0: not yet classified, else class + 1

function classOf(code: number): number {
  if (code < 128) return ASCII_CLASS[code]!;
  const cached = nonAsciiClass[code]!;
  if (cached !== 0) return cached - 1;
  const ch = String.fromCharCode(code);
  // Lone surrogates are halves of astral characters (mostly emoji and rare scripts): words.
  const c = code >= 0xd800 && code <= 0xdfff ? WORD : /\s/.test(ch) ? SPACE : /[\p{L}\p{N}\p{M}]/u.test(ch) ? WORD : STRIP;
  nonAsciiClass[code] = c + 1;
  return c;
}

const ASCII_CLASS = (() => {
  const classes = new Uint8Array(128);
  for (let c = 0; c < 128; c++) {
    const isWord = (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
    const isSpace = c === 32 || (c >= 9 && c <= 13);
    classes[c] = isWord ? WORD : isSpace ? SPACE : STRIP;
  }
  return classes;
})();

function hashLowerNonAscii(h: number, code: number): number {
  const lower = String.fromCharCode(code).toLowerCase();
  for (let k = 0; k < lower.length; k++) h = Math.imul(h ^ lower.charCodeAt(k), FNV_PRIME);
  return h;
}

/** Appends the FNV-1a hash of each normalised word of `text` to `out`; returns how many it appended. */
export function appendWordHashes(text: string, out: U32Buffer): number {
  const before = out.length;
  let h = FNV_OFFSET;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const cls = code < 128 ? ASCII_CLASS[code]! : classOf(code);
    if (cls === WORD) {
      if (!inWord) {
        inWord = true;
        h = FNV_OFFSET;
      }
      if (code < 128) h = Math.imul(h ^ (code >= 65 && code <= 90 ? code + 32 : code), FNV_PRIME);
      else h = hashLowerNonAscii(h, code);
    } else if (cls === SPACE && inWord) {
      out.push(h >>> 0);
      inWord = false;
    }
  }
  if (inWord) out.push(h >>> 0);
  return out.length - before;
}

/** The normalised words of `text` as strings: the slow path, for messages and confirmations. */
export function normalizedWords(text: string): string[] {
  const words: string[] = [];
  let word = "";
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const cls = classOf(code);
    if (cls === WORD) word += text[i]!.toLowerCase();
    else if (cls === SPACE && word !== "") {
      words.push(word);
      word = "";
    }
  }
  if (word !== "") words.push(word);
  return words;
}

/** MurmurHash3's 32-bit finaliser: spreads every input bit over the table index bits. */
function mix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * Open-addressing hash map from a pair of 32-bit keys (a 64-bit key) to a non-negative int32,
 * in typed arrays: several times faster than a Map<number, number> at a million entries.
 */
export class PairMap {
  private keysA: Uint32Array;
  private keysB: Uint32Array;
  private values: Int32Array; // -1: empty slot
  private mask: number;
  size = 0;

  constructor(expected = 1024) {
    let capacity = 1024;
    while (capacity < expected * 2) capacity *= 2;
    this.keysA = new Uint32Array(capacity);
    this.keysB = new Uint32Array(capacity);
    this.values = new Int32Array(capacity).fill(-1);
    this.mask = capacity - 1;
  }

  private slotOf(a: number, b: number): number {
    let slot = mix32(a ^ Math.imul(b, 0x9e3779b1)) & this.mask;
    while (this.values[slot] !== -1 && (this.keysA[slot] !== a || this.keysB[slot] !== b)) slot = (slot + 1) & this.mask;
    return slot;
  }

  /** The value stored under (a, b), or -1. */
  get(a: number, b = 0): number {
    return this.values[this.slotOf(a >>> 0, b >>> 0)]!;
  }

  set(a: number, b: number, value: number): void {
    a >>>= 0;
    b >>>= 0;
    const slot = this.slotOf(a, b);
    if (this.values[slot] === -1) {
      this.keysA[slot] = a;
      this.keysB[slot] = b;
      this.size++;
    }
    this.values[slot] = value;
    if (this.size * 2 > this.mask) this.grow();
  }

  private grow(): void {
    const [keysA, keysB, values] = [this.keysA, this.keysB, this.values];
    const capacity = values.length * 2;
    this.keysA = new Uint32Array(capacity);
    this.keysB = new Uint32Array(capacity);
    this.values = new Int32Array(capacity).fill(-1);
    this.mask = capacity - 1;
    for (let s = 0; s < values.length; s++) {
      if (values[s] === -1) continue;
      const slot = this.slotOf(keysA[s]!, keysB[s]!);
      this.keysA[slot] = keysA[s]!;
      this.keysB[slot] = keysB[s]!;
      this.values[slot] = values[s]!;
    }
  }
}

// Two independent polynomial hashes of an n-gram of word hashes, rolled along the text; together
// they make a 64-bit key, so distinct n-grams practically never share a key.
const BASE_A = 0x01000193;
const BASE_B = 0x5bd1e995;

function power(base: number, exponent: number): number {
  let p = 1;
  for (let i = 0; i < exponent; i++) p = Math.imul(p, base);
  return p;
}

/**
 * Appends to `outA` (and `outB`, the independent second half, when given) the hash of each
 * n-gram of `words[from..to)`, in order: the n-gram starting at word from + k is entry k.
 * A plain loop rather than a callback per n-gram: the callers differ, and a call site shared by
 * several callbacks is not inlined, which tripled the cost.
 */
export function appendNgramHashes(words: Uint32Array, from: number, to: number, n: number, outA: U32Buffer, outB?: U32Buffer): void {
  const topA = power(BASE_A, n - 1);
  const topB = power(BASE_B, n - 1);
  let a = 0;
  let b = 0;
  for (let i = from; i < to; i++) {
    const w = words[i]!;
    if (i - from >= n) {
      const out = words[i - n]!;
      a = (a - Math.imul(out, topA)) | 0;
      if (outB) b = (b - Math.imul(mix32(out), topB)) | 0;
    }
    a = (Math.imul(a, BASE_A) + w) | 0;
    if (outB) b = (Math.imul(b, BASE_B) + mix32(w)) | 0;
    if (i - from >= n - 1) {
      outA.push(a >>> 0);
      outB?.push(b >>> 0);
    }
  }
}

/** The second, independent half of an n-gram's key, computed afresh for one n-gram. */
function secondHash(words: Uint32Array, start: number, n: number): number {
  let b = 0;
  for (let i = start; i < start + n; i++) b = (Math.imul(b, BASE_B) + mix32(words[i]!)) | 0;
  return b >>> 0;
}

// ---------------------------------------------------------------------------------------------
// Contamination: GPT-3's 13-gram overlap test against benchmark documents.

export interface BenchmarkText {
  benchmark: string;
  docIndex: number;
  text: string;
}

export const CONTAMINATION_NGRAM = 13;

/** Every distinct n-gram of a set of benchmark documents, built once and queried per item. */
export interface BenchmarkNgramIndex {
  n: number;
  texts: readonly BenchmarkText[];
  /**
   * Bit set over the first key half: almost every n-gram of an item is in no benchmark, and one
   * bit test (instead of a hash-table probe) rejects it.
   */
  filter: Uint32Array;
  /** n-gram key -> first entry of its chain. */
  heads: PairMap;
  /** Entries: one per (n-gram, benchmark), at the n-gram's first occurrence in that benchmark. */
  entryText: Int32Array;
  entryWord: Int32Array;
  entryNext: Int32Array;
  entryBenchmark: Int32Array;
}

/** The filter bit of an n-gram: the top bits of its first key half, which mix every word bit. */
function filterBit(a: number, bitsLog: number): number {
  return (a >>> 0) >>> (32 - bitsLog);
}

export function buildBenchmarkIndex(texts: readonly BenchmarkText[], n = CONTAMINATION_NGRAM): BenchmarkNgramIndex {
  const words = new U32Buffer();
  const [gramsA, gramsB] = [new U32Buffer(), new U32Buffer()];
  const benchmarkIds = new Map<string, number>();
  const totalChars = texts.reduce((sum, t) => sum + t.text.length, 0);
  const heads = new PairMap(totalChars / 5); // about one n-gram per word: sized once, never grown
  const entryText: number[] = [];
  const entryWord: number[] = [];
  const entryNext: number[] = [];
  const entryBenchmark: number[] = [];
  // About one n-gram per word of 5+ characters; 4 bits per character are >= 20 bits per n-gram,
  // so about 5% of absent n-grams pass the filter at worst.
  let bitsLog = 16;
  while (2 ** bitsLog < totalChars * 4 && bitsLog < 31) bitsLog++;
  const filter = new Uint32Array(2 ** bitsLog / 32);
  for (let textIndex = 0; textIndex < texts.length; textIndex++) {
    const t = texts[textIndex]!;
    if (!benchmarkIds.has(t.benchmark)) benchmarkIds.set(t.benchmark, benchmarkIds.size);
    const benchmark = benchmarkIds.get(t.benchmark)!;
    words.clear();
    gramsA.clear();
    gramsB.clear();
    appendWordHashes(t.text, words);
    appendNgramHashes(words.values, 0, words.length, n, gramsA, gramsB);
    for (let k = 0; k < gramsA.length; k++) {
      const a = gramsA.values[k]!;
      const b = gramsB.values[k]!;
      const bit = filterBit(a, bitsLog);
      filter[bit >>> 5]! |= 1 << (bit & 31);
      const head = heads.get(a, b);
      let known = false;
      for (let e = head; e !== -1 && !known; e = entryNext[e]!) known = entryBenchmark[e] === benchmark;
      if (known) continue;
      entryText.push(textIndex);
      entryWord.push(k);
      entryBenchmark.push(benchmark);
      entryNext.push(head);
      heads.set(a, b, entryText.length - 1);
    }
  }
  return {
    n, texts, filter, heads,
    entryText: Int32Array.from(entryText),
    entryWord: Int32Array.from(entryWord),
    entryNext: Int32Array.from(entryNext),
    entryBenchmark: Int32Array.from(entryBenchmark),
  };
}

export interface NgramOverlap {
  benchmark: string;
  docIndex: number;
  /** Index of the first shared word within the text. */
  start: number;
  /** The shared n-gram, as normalised words. */
  ngram: string;
  /** How many of the text's n-grams this benchmark shares. */
  count: number;
}

/**
 * The benchmarks that share an n-gram with a text (its word hashes: `appendWordHashes`): one
 * overlap per benchmark, at the first shared n-gram, in order of position. `wordsOf()` gives the
 * text's normalised words, used only to confirm a hash match (rare) before reporting it.
 */
export function benchmarkOverlaps(index: BenchmarkNgramIndex, words: Uint32Array, wordsOf: () => readonly string[]): NgramOverlap[] {
  const { n, filter } = index;
  const bitsLog = Math.log2(filter.length * 32);
  const topA = power(BASE_A, n - 1);
  let a = 0;
  let found: Map<string, NgramOverlap> | undefined;
  let textWords: readonly string[] | undefined;
  for (let i = 0; i < words.length; i++) {
    if (i >= n) a = (a - Math.imul(words[i - n]!, topA)) | 0;
    a = (Math.imul(a, BASE_A) + words[i]!) | 0;
    if (i < n - 1) continue;
    const bit = filterBit(a, bitsLog);
    if ((filter[bit >>> 5]! & (1 << (bit & 31))) === 0) continue;
    const start = i - n + 1;
    for (let e = index.heads.get(a >>> 0, secondHash(words, start, n)); e !== -1; e = index.entryNext[e]!) {
      const text = index.texts[index.entryText[e]!]!;
      found ??= new Map();
      const known = found.get(text.benchmark);
      if (known) {
        known.count++;
        continue;
      }
      textWords ??= wordsOf();
      const ngram = textWords.slice(start, start + n);
      const docWords = normalizedWordsCached(text);
      const at = index.entryWord[e]!;
      if (!ngram.every((w, j) => w === docWords[at + j])) continue; // a hash collision
      found.set(text.benchmark, { benchmark: text.benchmark, docIndex: text.docIndex, start, ngram: ngram.join(" "), count: 1 });
    }
  }
  return found ? [...found.values()] : [];
}

const wordsOfText = new WeakMap<BenchmarkText, string[]>();

function normalizedWordsCached(text: BenchmarkText): string[] {
  let words = wordsOfText.get(text);
  if (!words) wordsOfText.set(text, (words = normalizedWords(text.text)));
  return words;
}

// ---------------------------------------------------------------------------------------------
// Near duplicates: sets of word shingles with a Jaccard similarity above a threshold.

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
