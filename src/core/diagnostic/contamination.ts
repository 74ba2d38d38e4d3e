// Contamination: GPT-3's 13-gram overlap test (Brown et al. 2020, appendix C) between diagnostic
// items and the profile's benchmark documents, on the word hashes of wordHashes.ts.
import {
  NGRAM_BASE_A,
  PairMap,
  U32Buffer,
  appendNgramHashes,
  appendWordHashes,
  ngramPower,
  ngramSecondHash,
  normalizedWords,
} from "./wordHashes";

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
    n,
    texts,
    filter,
    heads,
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
  const topA = ngramPower(NGRAM_BASE_A, n - 1);
  let a = 0;
  let found: Map<string, NgramOverlap> | undefined;
  let textWords: readonly string[] | undefined;
  for (let i = 0; i < words.length; i++) {
    if (i >= n) a = (a - Math.imul(words[i - n]!, topA)) | 0;
    a = (Math.imul(a, NGRAM_BASE_A) + words[i]!) | 0;
    if (i < n - 1) continue;
    const bit = filterBit(a, bitsLog);
    if ((filter[bit >>> 5]! & (1 << (bit & 31))) === 0) continue;
    const start = i - n + 1;
    for (let e = index.heads.get(a >>> 0, ngramSecondHash(words, start, n)); e !== -1; e = index.entryNext[e]!) {
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
