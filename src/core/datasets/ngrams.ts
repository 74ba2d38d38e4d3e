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

  slice(from: number, to: number): Uint32Array {
    return this.values.slice(from, to);
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

/**
 * Appends the FNV-1a hash of each normalised word of `text` to `out` and returns how many words
 * it appended; `starts`, when given, receives each word's offset in `text`.
 */
export function appendWordHashes(text: string, out: U32Buffer, starts?: number[]): number {
  const before = out.length;
  let h = FNV_OFFSET;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const cls = classOf(code);
    if (cls === WORD) {
      if (!inWord) {
        inWord = true;
        h = FNV_OFFSET;
        starts?.push(i);
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
    else if (cls === SPACE && word !== "") [words[words.length], word] = [word, ""];
  }
  if (word !== "") words.push(word);
  return words;
}

/** Thomas Wang / MurmurHash3 finaliser: spreads every input bit over the table index bits. */
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
 * Calls `visit(start, a, b)` for each n-gram of `words[from..to)`, with its two hash halves.
 * Returns early, with true, when `visit` returns true.
 */
export function forEachNgram(words: Uint32Array, from: number, to: number, n: number, visit: (start: number, a: number, b: number) => boolean | void): boolean {
  if (to - from < n) return false;
  const topA = power(BASE_A, n - 1);
  const topB = power(BASE_B, n - 1);
  let a = 0;
  let b = 0;
  for (let i = from; i < to; i++) {
    const w = words[i]!;
    const wb = mix32(w);
    if (i - from >= n) {
      const out = words[i - n]!;
      a = (a - Math.imul(out, topA)) | 0;
      b = (b - Math.imul(mix32(out), topB)) | 0;
    }
    a = (Math.imul(a, BASE_A) + w) | 0;
    b = (Math.imul(b, BASE_B) + wb) | 0;
    if (i - from >= n - 1 && visit(i - n + 1 - from, a >>> 0, b >>> 0) === true) return true;
  }
  return false;
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
  benchmarks: readonly string[];
  /** n-gram key -> first entry of its chain. */
  heads: PairMap;
  /** Entries: one per (n-gram, benchmark), at the n-gram's first occurrence in that benchmark. */
  entryText: Int32Array;
  entryWord: Int32Array;
  entryNext: Int32Array;
  entryBenchmark: Int32Array;
}

export function buildBenchmarkIndex(texts: readonly BenchmarkText[], n = CONTAMINATION_NGRAM): BenchmarkNgramIndex {
  const words = new U32Buffer();
  const spans: [number, number][] = texts.map((t) => {
    const from = words.length;
    return [from, from + appendWordHashes(t.text, words)];
  });
  const benchmarks = [...new Set(texts.map((t) => t.benchmark))];
  const benchmarkIds = new Map(benchmarks.map((b, i) => [b, i]));
  const heads = new PairMap(words.length);
  const entryText: number[] = [];
  const entryWord: number[] = [];
  const entryNext: number[] = [];
  const entryBenchmark: number[] = [];
  texts.forEach((t, textIndex) => {
    const benchmark = benchmarkIds.get(t.benchmark)!;
    const [from, to] = spans[textIndex]!;
    forEachNgram(words.values, from, to, n, (start, a, b) => {
      const head = heads.get(a, b);
      for (let e = head; e !== -1; e = entryNext[e]!) if (entryBenchmark[e] === benchmark) return;
      entryText.push(textIndex);
      entryWord.push(start);
      entryBenchmark.push(benchmark);
      entryNext.push(head);
      heads.set(a, b, entryText.length - 1);
    });
  });
  return {
    n, texts, benchmarks, heads,
    entryText: Int32Array.from(entryText),
    entryWord: Int32Array.from(entryWord),
    entryNext: Int32Array.from(entryNext),
    entryBenchmark: Int32Array.from(entryBenchmark),
  };
}

export interface NgramOverlap {
  benchmark: string;
  docIndex: number;
  /** Index of the first shared word in the queried word sequence. */
  start: number;
  /** The shared n-gram, as normalised words. */
  ngram: string;
  /** How many of the queried sequence's n-grams this benchmark shares. */
  count: number;
}

/**
 * The benchmarks that share an n-gram with the word sequence `words[from..to)`, one overlap per
 * benchmark (its first shared n-gram), in order of first occurrence. `wordsOf(start, end)` gives
 * the normalised words of the queried range, used to confirm hash matches.
 */
export function benchmarkOverlaps(
  index: BenchmarkNgramIndex,
  words: Uint32Array,
  from: number,
  to: number,
  wordsOf: () => readonly string[],
): NgramOverlap[] {
  const found = new Map<number, NgramOverlap>();
  let queried: readonly string[] | undefined;
  forEachNgram(words, from, to, index.n, (start, a, b) => {
    for (let e = index.heads.get(a, b); e !== -1; e = index.entryNext[e]!) {
      const benchmark = index.entryBenchmark[e]!;
      const known = found.get(benchmark);
      if (known) {
        known.count++;
        continue;
      }
      queried ??= wordsOf();
      const ngram = queried.slice(start, start + index.n);
      const text = index.texts[index.entryText[e]!]!;
      const docWords = normalizedWordsCached(text);
      const word = index.entryWord[e]!;
      if (!ngram.every((w, k) => w === docWords[word + k])) continue; // a hash collision
      found.set(benchmark, { benchmark: text.benchmark, docIndex: text.docIndex, start, ngram: ngram.join(" "), count: 1 });
    }
  });
  return [...found.values()].sort((x, y) => x.start - y.start);
}

const wordsOfText = new WeakMap<BenchmarkText, string[]>();

function normalizedWordsCached(text: BenchmarkText): string[] {
  let words = wordsOfText.get(text);
  if (!words) wordsOfText.set(text, (words = normalizedWords(text.text)));
  return words;
}

// ---------------------------------------------------------------------------------------------
// Near duplicates: sets of word shingles with a Jaccard similarity above a threshold.

/** The distinct hashes of the word `n`-grams of `words[from..to)`, sorted; a shorter text is one shingle. */
export function shingleSet(words: Uint32Array, from: number, to: number, n: number): Uint32Array {
  if (to <= from) return new Uint32Array(0);
  const hashes: number[] = [];
  if (to - from < n) forEachNgram(words, from, to, to - from, (_s, a) => void hashes.push(a));
  else forEachNgram(words, from, to, n, (_s, a) => void hashes.push(a));
  const sorted = Uint32Array.from(hashes).sort();
  let unique = 0;
  for (let i = 0; i < sorted.length; i++) if (i === 0 || sorted[i] !== sorted[unique - 1]) sorted[unique++] = sorted[i]!;
  return sorted.subarray(0, unique);
}

export function jaccard(x: Uint32Array, y: Uint32Array): number {
  const shared = sharedCount(x, y);
  const union = x.length + y.length - shared;
  return union === 0 ? 1 : shared / union;
}

/** Size of the intersection of two ascending arrays. */
function sharedCount(x: ArrayLike<number>, y: ArrayLike<number>): number {
  let [i, j, shared] = [0, 0, 0];
  while (i < x.length && j < y.length) {
    const [a, b] = [x[i]!, y[j]!];
    if (a === b) [i, j, shared] = [i + 1, j + 1, shared + 1];
    else if (a < b) i++;
    else j++;
  }
  return shared;
}

export interface SimilarPair {
  /** The later set. */
  index: number;
  /** The earliest earlier set similar to it. */
  earlier: number;
  similarity: number;
}

/**
 * For each set, the earliest earlier set whose Jaccard similarity with it is at least
 * `threshold` and that `accept` agrees with: an exact all-pairs similarity join by prefix
 * filtering (Bayardo, Ma and Srikant, "Scaling up all pairs similarity search", WWW 2007).
 * Shingles are ordered rarest first; two sets with Jaccard >= t must share one of the first
 * |x| - ceil(t|x|) + 1 shingles of each, so only sets sharing a rare shingle are ever compared
 * and the work grows with the number of similar pairs, not with the square of the items.
 * Sets listed in `skip` (empty ones, exact duplicates) take no part.
 */
export function similarSets(
  sets: readonly Uint32Array[],
  threshold: number,
  skip: (index: number) => boolean = () => false,
  accept: (index: number, earlier: number) => boolean = () => true,
): SimilarPair[] {
  const counts = shingleCounts(sets, skip);
  const ordered = sets.map((s, i) => (skip(i) ? new Float64Array(0) : rarestFirst(s, counts)));
  // Postings: for each prefix shingle, the sets whose prefix holds it, oldest first, as linked
  // lists in flat arrays; `head` maps a shingle to its list's first posting.
  const head = new PairMap(sets.length * 8);
  const lastOf = new Map<number, number>(); // first posting -> last posting of its list
  const postingSet: number[] = [];
  const postingNext: number[] = [];
  const verified = new Int32Array(sets.length).fill(-1); // the set last compared with each set
  const pairs: SimilarPair[] = [];
  for (let i = 0; i < sets.length; i++) {
    const x = ordered[i]!;
    if (x.length === 0) continue;
    const prefix = prefixLength(x.length, threshold);
    let best: SimilarPair | undefined;
    for (let p = 0; p < prefix; p++) {
      for (let e = head.get(hashOf(x[p]!)); e !== -1; e = postingNext[e]!) {
        const j = postingSet[e]!;
        if (best && j >= best.earlier) break;
        if (verified[j] === i) continue;
        verified[j] = i;
        const y = ordered[j]!;
        if (!lengthsCanMeet(x.length, y.length, threshold)) continue;
        const similarity = jaccardOrdered(x, y);
        if (similarity >= threshold && accept(i, j)) {
          best = { index: i, earlier: j, similarity };
          break;
        }
      }
    }
    if (best) pairs.push(best);
    for (let p = 0; p < prefix; p++) {
      const e = postingSet.push(i) - 1;
      postingNext.push(-1);
      const first = head.get(hashOf(x[p]!));
      if (first === -1) {
        head.set(hashOf(x[p]!), 0, e);
        lastOf.set(e, e);
      } else {
        postingNext[lastOf.get(first)!] = e;
        lastOf.set(first, e);
      }
    }
  }
  return pairs;
}

function hashOf(orderedKey: number): number {
  return orderedKey % 4294967296;
}

function shingleCounts(sets: readonly Uint32Array[], skip: (index: number) => boolean): PairMap {
  let total = 0;
  for (const s of sets) total += s.length;
  const counts = new PairMap(total);
  sets.forEach((s, i) => {
    if (skip(i)) return;
    for (let k = 0; k < s.length; k++) counts.set(s[k]!, 0, Math.max(0, counts.get(s[k]!)) + 1);
  });
  return counts;
}

/** The set's shingles as count * 2^32 + hash, ascending: rarest first, ties by hash, one global order. */
function rarestFirst(set: Uint32Array, counts: PairMap): Float64Array {
  const keys = new Float64Array(set.length);
  for (let k = 0; k < set.length; k++) keys[k] = counts.get(set[k]!) * 4294967296 + set[k]!;
  return keys.sort();
}

function prefixLength(size: number, threshold: number): number {
  return size - Math.ceil(threshold * size - 1e-9) + 1;
}

function lengthsCanMeet(a: number, b: number, threshold: number): boolean {
  return Math.min(a, b) >= Math.ceil(threshold * Math.max(a, b) - 1e-9);
}

function jaccardOrdered(x: Float64Array, y: Float64Array): number {
  const shared = sharedCount(x, y);
  return shared / (x.length + y.length - shared);
}
