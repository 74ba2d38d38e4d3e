// The regular expressions of a tokenizer.json (the `Regex` of Split pre-tokenizers and of Replace
// normalizers, pre-tokenizers and decoders), which run on every text the tokenizer encodes or
// decodes. A model folder comes with a repository as much as the rest of it, and a pattern that
// backtracks catastrophically (`(\w+\s?)*$`) would stall validation, a run and the editor's worker
// on ordinary benchmark text. So each one runs with a time bound (base/boundedRegex.ts), and one
// that passes it is an error at the pattern in tokenizer.json. Two kinds run as they are, since
// the bound costs every encode a watchdog thread: the published tokenizers' patterns (GPT-2,
// Llama 3, Qwen, GPT-4o, DeepSeek, below), which Hugging Face's tokenizers run too, and a single
// run of one character set (`\p{N}{1,3}`), which has nothing to backtrack into.
import type { Tokenizer } from "@huggingface/tokenizers";
import type { JSONPath } from "jsonc-parser";
import { BoundedRegExp, withinTime } from "../base/boundedRegex";
import { parseJsonSource } from "../base/jsonSource";
import { fileProblem, type Problem } from "../base/problems";

/** The Split patterns of published tokenizers, as their tokenizer.json files spell them. */
const PUBLISHED_PATTERNS: ReadonlySet<string> = new Set([
  // GPT-2 (and the models that reuse its byte-level BPE), with and without the last alternative
  "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+",
  "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
  // Llama 3 (cl100k_base)
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  // Qwen2, Qwen2.5, Qwen3: single digits
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  // Qwen3.5: letters with their marks
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  // GPT-4o (o200k_base)
  "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  // DeepSeek V3 and R1 (after their digit and CJK splits, which are single runs: oneCharacterRun)
  "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  // whole words and runs of punctuation
  "\\w+|[^\\w\\s]+",
]);

/**
 * One character class, escape or literal, once or under one quantifier (`\\p{N}{1,3}`, `[a-z]+`):
 * matched in a single pass, with nothing to backtrack into.
 */
const ONE_CHARACTER_RUN =
  /^(?:\[(?:\\.|[^\]\\])*\]|\\[pP]\{[\w=]+\}|\\u\{[0-9a-fA-F]+\}|\\u[0-9a-fA-F]{4}|\\x[0-9a-fA-F]{2}|\\[dDwWsStrn.\\/\-[\]{}()|*+?^$]|[^\\()[\]{}|*+?^$])(?:[*+?]|\{\d+(?:,\d*)?\})?$/;

/** Whether a pattern runs as it is: a published one, or a single run of one character set. */
function trusted(source: string): boolean {
  return PUBLISHED_PATTERNS.has(source) || ONE_CHARACTER_RUN.test(source);
}

/** A tokenizer.json pattern that ran past its time bound, as the problem at the pattern. */
export class TokenizerPatternError extends Error {
  override name = "TokenizerPatternError";
  constructor(readonly problem: Problem) {
    super(problem.message);
  }
}

export interface TokenizerPatterns {
  /** `make()` (the library building the tokenizer), bounded when it runs a normalizer pattern on the added tokens. */
  build<T>(make: () => T): T;
  /** `tokenizer` with each of the file's patterns bounded; an Error where one cannot be. */
  boundTokenizer(tokenizer: Tokenizer): Tokenizer;
  /** `component` (a pre-tokenizer built from the same tokenizer.json) with each of the file's patterns it holds bounded. */
  bound<T extends object>(component: T): T;
}

/** The patterns of `tokenizerJson` (the parsed `text` of `file`) that get a bound: those not `trusted`. */
export function tokenizerPatterns(tokenizerJson: object, text: string, file: string): TokenizerPatterns {
  const unknown = unknownPatterns(tokenizerJson);
  const timedOut = (at: JSONPath) => (matched: string) => new TokenizerPatternError(patternProblem(text, file, at, matched.length));
  const bound = <T extends object>(component: T, reached = new Set<object>()): T => {
    for (const holder of patternHolders(component)) {
      const at = unknown.get(holder.config);
      if (!at || !(holder.pattern instanceof RegExp)) continue;
      if (!(holder.pattern instanceof BoundedRegExp)) holder.pattern = new BoundedRegExp(holder.pattern, timedOut(at));
      reached.add(holder.config);
    }
    return component;
  };
  return {
    build(make) {
      // the library normalizes the added tokens while it builds, through the normalizer's patterns
      const first = [...unknown.values()].find((at) => at[0] === "normalizer");
      // the build's own work grows with the file: a second, and a microsecond a character
      return first ? withinTime(1000 + Math.ceil(text.length / 1000), make, () => timedOut(first)("")) : make();
    },
    boundTokenizer(tokenizer) {
      const reached = new Set<object>();
      for (const component of [tokenizer.normalizer, tokenizer.pre_tokenizer, tokenizer.decoder]) if (component) bound(component, reached);
      const missed = [...unknown].find(([config]) => !reached.has(config));
      if (missed) throw new Error(`${file}: the pattern at ${missed[1].join(".")} cannot be given a time limit`);
      return tokenizer;
    },
    bound: (component) => bound(component),
  };
}

/** The Split and Replace components of the normalizer, pre-tokenizer and decoder whose `Regex` is not `trusted`, with its path. */
function unknownPatterns(tokenizerJson: object): Map<object, JSONPath> {
  const found = new Map<object, JSONPath>();
  const visit = (config: unknown, at: JSONPath) => {
    if (typeof config !== "object" || config === null) return;
    const component = config as { type?: unknown; pattern?: { Regex?: unknown } };
    const regex = component.pattern?.Regex;
    if ((component.type === "Split" || component.type === "Replace") && typeof regex === "string" && !trusted(regex))
      found.set(config, [...at, "pattern", "Regex"]);
    // a Sequence's stages, as the library reads them
    for (const key of ["normalizers", "pretokenizers", "decoders"]) {
      const stages = (config as Record<string, unknown>)[key];
      if (Array.isArray(stages)) stages.forEach((stage, i) => visit(stage, [...at, key, i]));
    }
  };
  for (const key of ["normalizer", "pre_tokenizer", "decoder"]) visit((tokenizerJson as Record<string, unknown>)[key], [key]);
  return found;
}

interface PatternHolder {
  config: object;
  pattern: unknown;
}

/** The library's objects under `root` that hold a compiled pattern and the config it came from. */
function patternHolders(root: object): PatternHolder[] {
  const holders: PatternHolder[] = [];
  const seen = new Set<unknown>();
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    // the library's components are callable objects: functions with fields
    if ((typeof node !== "object" && typeof node !== "function") || node === null || seen.has(node) || node instanceof RegExp) continue;
    seen.add(node);
    const fields = node as Record<string, unknown>;
    if (typeof fields.config === "object" && fields.config !== null && "pattern" in fields) holders.push(node as PatternHolder);
    // not into `config`: the file's own JSON, which holds no compiled pattern
    for (const [key, value] of Object.entries(fields)) if (key !== "config") stack.push(value);
  }
  return holders;
}

/** The problem at the pattern (the `Regex` string at `at`) of a match that ran past its bound on a text of `length` characters. */
function patternProblem(text: string, file: string, at: JSONPath, length: number): Problem {
  const on = length > 0 ? `on a text of ${length} characters` : "on the tokenizer's added tokens";
  const message =
    `this pattern ran past its time limit ${on}: it backtracks catastrophically (a quantified group whose ` +
    "repetitions can match the same text, such as `(a+)+` or `(\\w+\\s?)*`); write it so that each character can be matched one way";
  const source = parseJsonSource(text, file).source;
  return source?.at(at, "model.tokenizer-pattern", message) ?? fileProblem(file, "model.tokenizer-pattern", message);
}
