// Words and word n-grams of normalised text as hashes, what the contamination check
// (contamination.ts) and the near-duplicate check (nearDuplicates.ts) of diagnostic datasets are
// built on. Normalisation follows GPT-3's contamination analysis (Brown et al. 2020, appendix C):
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
export const NGRAM_BASE_A = 0x01000193;
const BASE_B = 0x5bd1e995;

export function ngramPower(base: number, exponent: number): number {
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
  const topA = ngramPower(NGRAM_BASE_A, n - 1);
  const topB = ngramPower(BASE_B, n - 1);
  let a = 0;
  let b = 0;
  for (let i = from; i < to; i++) {
    const w = words[i]!;
    if (i - from >= n) {
      const out = words[i - n]!;
      a = (a - Math.imul(out, topA)) | 0;
      if (outB) b = (b - Math.imul(mix32(out), topB)) | 0;
    }
    a = (Math.imul(a, NGRAM_BASE_A) + w) | 0;
    if (outB) b = (Math.imul(b, BASE_B) + mix32(w)) | 0;
    if (i - from >= n - 1) {
      outA.push(a >>> 0);
      outB?.push(b >>> 0);
    }
  }
}

/** The second, independent half of an n-gram's key, computed afresh for one n-gram. */
export function ngramSecondHash(words: Uint32Array, start: number, n: number): number {
  let b = 0;
  for (let i = start; i < start + n; i++) b = (Math.imul(b, BASE_B) + mix32(words[i]!)) | 0;
  return b >>> 0;
}
