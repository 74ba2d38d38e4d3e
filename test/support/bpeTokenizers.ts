// Small BPE tokenizers in Hugging Face's tokenizer.json format, trained here on made-up text, in
// the pipeline shapes real models use (GPT-2, Llama 3, the demo models' byte level, ...), so the
// tokenizer code can be checked against @huggingface/tokenizers without downloading a model.
import { bytesToUnicode } from "../../scripts/lib/byteTokenizer";
import { seededRandom } from "../../src/core/base/random";

const WORDS = (
  "the of and to in is was for on that with as by at from his it an were are which this be " +
  "question answer choice model token river stone bridge winter garden mirror pencil seven " +
  "don't it's they're I'll we've she'd can't 1999 2024 3.14 42 x+y=z (a) [b] {c} e.g. i.e. " +
  "café naïve Zürich déjà-vu 東京 日本語 🙂 👍🏽 ñandú Ελλάδα Москва"
).split(" ");

/** Deterministic text in the words above, with the spacing and punctuation benchmarks have. */
export function sampleText(random: () => number, words: number): string {
  const seps = [" ", " ", " ", " ", ", ", ". ", "\n", "  ", "? ", ": "];
  let out = "";
  for (let i = 0; i < words; i++) {
    out += WORDS[Math.floor(random() * WORDS.length)]!;
    out += seps[Math.floor(random() * seps.length)]!;
  }
  return out;
}

/** The project's seeded mulberry32 stream, under the name these tests use. */
export const seeded = seededRandom;

/**
 * `count` BPE merges learned from `words` (each a list of symbols), the most frequent pair first,
 * ties broken by the pair's text so the result is the same on every machine.
 */
export function learnMerges(words: string[][], count: number): [string, string][] {
  const merges: [string, string][] = [];
  const current = words.map((w) => [...w]);
  for (let m = 0; m < count; m++) {
    const counts = new Map<string, number>();
    for (const w of current)
      for (let i = 0; i + 1 < w.length; i++) {
        const key = w[i] + "\u0000" + w[i + 1];
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
    let best: string | undefined;
    for (const [key, n] of counts) if (best === undefined || n > counts.get(best)! || (n === counts.get(best)! && key < best)) best = key;
    if (best === undefined || counts.get(best)! < 2) break;
    const [a, b] = best.split("\u0000") as [string, string];
    merges.push([a, b]);
    for (const w of current)
      for (let i = 0; i + 1 < w.length; i++) {
        if (w[i] === a && w[i + 1] === b) w.splice(i, 2, a + b);
      }
  }
  return merges;
}

const GPT2_PATTERN = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;
export const LLAMA3_SPLIT =
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

const byteChars = bytesToUnicode();
const toByteChars = (text: string) => Array.from(Buffer.from(text, "utf8"), (b) => byteChars[b]!);

export interface TokenizerFiles {
  tokenizerJson: Record<string, unknown>;
  tokenizerConfig: Record<string, unknown>;
}

export interface AddedTokenSpec {
  content: string;
  special?: boolean;
  lstrip?: boolean;
  rstrip?: boolean;
  normalized?: boolean;
}

interface Options {
  /** What the merges are learned on: GPT-2's regex pieces, or whole lines (merges across words). */
  learnOn: "pieces" | "lines";
  preTokenizer: unknown;
  merges?: number;
  ignoreMerges?: boolean;
  normalizer?: unknown;
  added?: AddedTokenSpec[];
}

/** A byte-level BPE (GPT-2's alphabet) with merges learned on sampleText. */
export function byteLevelBpe(options: Options): TokenizerFiles {
  const random = seeded(7);
  const corpus = Array.from({ length: 300 }, () => sampleText(random, 12));
  const words = options.learnOn === "pieces" ? corpus.flatMap((line) => line.match(GPT2_PATTERN) ?? []) : corpus;
  const merges = learnMerges(words.map(toByteChars), options.merges ?? 400);
  const vocab: Record<string, number> = {};
  byteChars.forEach((c, b) => (vocab[c] = b));
  for (const [a, b] of merges) vocab[a + b] ??= Object.keys(vocab).length;
  return withAddedTokens(
    {
      version: "1.0",
      truncation: null,
      padding: null,
      added_tokens: [],
      normalizer: options.normalizer ?? null,
      pre_tokenizer: options.preTokenizer,
      post_processor: { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true },
      decoder: { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true },
      model: {
        type: "BPE",
        dropout: null,
        unk_token: null,
        continuing_subword_prefix: null,
        end_of_word_suffix: null,
        fuse_unk: false,
        byte_fallback: false,
        ignore_merges: options.ignoreMerges ?? false,
        vocab,
        merges,
      },
    },
    options.added ?? [{ content: "<|endoftext|>", special: true }],
  );
}

/**
 * A BPE over raw characters with no pre-tokenizer (the whole text is one word), an unknown token
 * for characters outside its alphabet or, with byteFallback, <0xNN> byte tokens.
 */
export function rawCharBpe(options: { byteFallback: boolean }): TokenizerFiles {
  const random = seeded(11);
  const corpus = Array.from({ length: 200 }, () => sampleText(random, 12));
  const alphabet = [...new Set(corpus.join("").replace(/[^\x20-\x7e\n]/g, ""))].sort();
  const merges = learnMerges(
    corpus.map((line) => Array.from(line).filter((c) => alphabet.includes(c))),
    300,
  );
  const vocab: Record<string, number> = { "<unk>": 0 };
  if (options.byteFallback)
    for (let b = 0; b < 256; b++) vocab[`<0x${b.toString(16).toUpperCase().padStart(2, "0")}>`] = Object.keys(vocab).length;
  for (const c of alphabet) vocab[c] = Object.keys(vocab).length;
  for (const [a, b] of merges) vocab[a + b] ??= Object.keys(vocab).length;
  return withAddedTokens(
    {
      version: "1.0",
      truncation: null,
      padding: null,
      added_tokens: [{ id: 0, content: "<unk>", single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }],
      normalizer: null,
      pre_tokenizer: null,
      post_processor: null,
      decoder: null,
      model: {
        type: "BPE",
        dropout: null,
        unk_token: "<unk>",
        continuing_subword_prefix: null,
        end_of_word_suffix: null,
        fuse_unk: false,
        byte_fallback: options.byteFallback,
        ignore_merges: false,
        vocab,
        merges,
      },
    },
    [
      { content: "<s>", special: true },
      { content: "</s>", special: true },
    ],
  );
}

/** Appends added tokens after the vocabulary, with <s>/BOS-like config entries for loadTokenizer. */
function withAddedTokens(tokenizerJson: Record<string, unknown>, added: AddedTokenSpec[]): TokenizerFiles {
  const model = tokenizerJson.model as { vocab: Record<string, number> };
  let next = Math.max(...Object.values(model.vocab)) + 1;
  const list = tokenizerJson.added_tokens as Record<string, unknown>[];
  for (const t of added) {
    list.push({
      id: next++,
      content: t.content,
      single_word: false,
      lstrip: t.lstrip ?? false,
      rstrip: t.rstrip ?? false,
      normalized: t.normalized ?? false,
      special: t.special ?? true,
    });
  }
  const first = (list.find((t) => t.special) ?? list[0])!.content as string;
  return { tokenizerJson, tokenizerConfig: { bos_token: first, eos_token: first, clean_up_tokenization_spaces: false } };
}
