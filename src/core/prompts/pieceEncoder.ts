// A fast `encode` that gives the very ids @huggingface/tokenizers gives, for the tokenizers whose
// pipeline cuts text into pieces that are tokenized independently: each piece's ids are cached,
// and a prefix of a context whose ids nothing after it can change is encoded once per item
// (stablePrefix). Why: lm-eval's context/continuation split encodes the whole context once per
// choice, and the library runs at about a million characters a second, most of it BPE of text
// it has seen before.
//
// What the library does for encode(text, { add_special_tokens: false }) (Tokenizer.encode_text):
//   1. cut the text at added tokens (at each position the longest one); each is one id;
//   2. each other section: the normalizer, then the pre-tokenizer cuts it into words;
//   3. the model (BPE) tokenizes each word on its own, tokens become ids.
// Two ways of cutting a section into pieces keep this exact:
//   "pieces": the pre-tokenizer's first stage is a regex split (Split, or ByteLevel with its regex,
//     as GPT-2, Llama 3, Qwen); the later stages and the model work piece by piece, so a section's
//     ids are its pieces' ids one after the other.
//   "chunks": nothing splits the section (the byte-level tokenizer of the demo models, whose whole
//     text is one BPE word). BPE only ever joins two neighbouring symbols that a merge names, so
//     between two characters that no merge can join (no merge's left side ends with the first,
//     right side starts with the second) the word falls apart into chunks BPE'd on their own.
// Anything else (WordPiece, Unigram, Metaspace, normalizers before a whole-text BPE, fused unknown
// tokens, ...) is left to the library, and so is any text this cannot cut the library's way.
import { ByteLevelPreTokenizer, SequencePreTokenizer, SplitPreTokenizer, type PreTokenizer, type Tokenizer } from "@huggingface/tokenizers";

export interface PieceEncoder {
  mode: "pieces" | "chunks";
  /** The ids of tokenizer.encode(text, { add_special_tokens: false }). */
  encode(text: string): number[];
  /**
   * A length p (0 when none is known) such that, for every string y that begins with
   * text.slice(p), encode(text.slice(0, p) + y) is encode(text.slice(0, p)) then encode(y).
   */
  stablePrefix(text: string): number;
}

type Json = Record<string, unknown>;

/** Distinct pieces kept; the cache starts afresh past this, which changes no result. */
const CACHE_ENTRIES = 1 << 17;
/** Longer pieces are encoded without being kept (as the library's own BPE cache does past 256). */
const CACHE_PIECE_LENGTH = 256;

/** A pre-tokenizer built here from tokenizer.json with the file's patterns given their time bound (tokenizerPatterns.ts). */
export type BoundPatterns = <T extends object>(component: T) => T;

/**
 * The encoder for `tokenizer` (built from `tokenizerJson` and `tokenizerConfig`), or undefined
 * when its pipeline is not one of the two above. `plain` is the library's encode, used for the
 * texts this cannot cut; `bound` bounds the patterns of the pre-tokenizers built here, as the
 * tokenizer's own are.
 */
export function pieceEncoder(
  tokenizerJson: object,
  tokenizerConfig: Json,
  tokenizer: Tokenizer,
  plain: (text: string) => number[],
  bound: BoundPatterns,
): PieceEncoder | undefined {
  const json = tokenizerJson as Json;
  const bpe = asJson(json.model);
  const model = tokenizer.model;
  // tokenizer_config.json options the library applies before the normalizer.
  if (tokenizerConfig.remove_space || tokenizerConfig.do_lowercase_and_remove_accent) return undefined;
  // fuse_unk joins unknown tokens across words, so words would not be independent.
  if (!model || bpe?.type !== "BPE" || bpe.fuse_unk || !keepsTokens(json.post_processor)) return undefined;
  const normalizer = json.normalizer == null ? null : tokenizer.normalizer;
  const added = addedTokens(json.added_tokens, normalizer !== null);
  if (!added) return undefined;
  const cut = pieceCutter(json.pre_tokenizer, bound) ?? (normalizer === null ? chunkCutter(json.pre_tokenizer, bpe) : undefined);
  if (!cut) return undefined;

  const cache = new Map<string, number[]>();
  // One-unit pieces (every character, for the demo models) by char code: faster than the map.
  const unitCache: (number[] | undefined)[] = [];
  // Tokens become ids as Tokenizer.encode maps them; added tokens are in tokens_to_ids too.
  const toId = (token: string) => (model.tokens_to_ids.get(token) ?? model.unk_token_id) as number;
  const encodePiece = (piece: string) => model(cut.rest ? cut.rest.pre_tokenize(piece) : [piece]).map(toId);
  const pieceIds = (piece: string): number[] => {
    if (piece.length === 1) return (unitCache[piece.charCodeAt(0)] ??= encodePiece(piece));
    let ids = cache.get(piece);
    if (ids === undefined) {
      ids = encodePiece(piece);
      if (piece.length <= CACHE_PIECE_LENGTH) {
        if (cache.size >= CACHE_ENTRIES) cache.clear();
        cache.set(piece, ids);
      }
    }
    return ids;
  };
  const encodeSection = (section: string, out: number[]) => {
    const text = normalizer ? normalizer(section) : section;
    if (text === "") return;
    // The library takes a normalized section that reads as an added token for that token (an
    // unnormalized one never does: it would have been cut out as the token).
    const id = normalizer ? added.ids.get(text) : undefined;
    if (id !== undefined) out.push(id);
    else {
      cut.forEachPiece(text, (piece) => {
        const ids = pieceIds(piece);
        for (let k = 0; k < ids.length; k++) out.push(ids[k]!);
      });
    }
  };
  return {
    mode: cut.mode,
    encode(text) {
      const sections = added.sections(text);
      if (!sections) return plain(text);
      const out: number[] = [];
      for (const section of sections) {
        if (typeof section === "number") out.push(section);
        else encodeSection(section, out);
      }
      return out;
    },
    stablePrefix: (text) => (cut.mode === "chunks" && !added.strips ? cut.lastFreeCut(text, added.crosses) : 0),
  };
}

function asJson(value: unknown): Json | undefined {
  return typeof value === "object" && value !== null ? (value as Json) : undefined;
}

/**
 * Whether the post-processor leaves tokens as they are when no special tokens are added (encode
 * runs it with add_special_tokens false): true of the kinds whose template only adds special tokens.
 */
function keepsTokens(config: unknown): boolean {
  const pp = asJson(config);
  if (!pp) return true;
  switch (pp.type) {
    case "ByteLevel":
    case "BertProcessing":
    case "RobertaProcessing":
      return true;
    case "TemplateProcessing": {
      const single = Array.isArray(pp.single) ? (pp.single as Json[]) : [];
      const sequences = single.filter((item) => "Sequence" in item);
      return sequences.length === 1 && asJson(sequences[0]!.Sequence)?.id === "A";
    }
    case "Sequence":
      return Array.isArray(pp.processors) && pp.processors.every(keepsTokens);
    default:
      return false;
  }
}

interface AddedTokens {
  /** Content -> id, the last token of a content winning as in the library's map. */
  ids: Map<string, number>;
  /** Whether some added token strips the whitespace beside it (lstrip, rstrip). */
  strips: boolean;
  /** The text cut at added tokens as the library cuts it: text sections and ids; undefined where a token strips whitespace. */
  sections(text: string): (string | number)[] | undefined;
  /** Whether an added token could begin before `at` and end after it, whatever follows text.slice(0, at). */
  crosses(text: string, at: number): boolean;
}

function addedTokens(config: unknown, hasNormalizer: boolean): AddedTokens | undefined {
  const list = (Array.isArray(config) ? config : []) as {
    id: number;
    content: string;
    lstrip?: boolean;
    rstrip?: boolean;
    special?: boolean;
    normalized?: boolean;
  }[];
  // With a normalizer, tokens marked normalized are looked for in normalized text, a second cut
  // this does not make (AddedToken's default for `normalized` is !special).
  if (hasNormalizer && list.some((t) => t.normalized ?? !(t.special ?? false))) return undefined;
  const ids = new Map(list.map((t) => [t.content, t.id]));
  // The library's trie never matches an empty content.
  const contents = [...ids.keys()].filter((c) => c !== "").sort((a, b) => b.length - a.length);
  // A content's last token is the one the library's map keeps.
  const stripping = new Set(
    [...new Map(list.map((t) => [t.content, t])).values()].filter((t) => t.lstrip || t.rstrip).map((t) => t.content),
  );
  const strips = list.some((t) => t.lstrip || t.rstrip);
  if (contents.length === 0) return { ids, strips, sections: (text) => [text], crosses: () => false };
  // Longest first: at the leftmost position where one matches, the first alternative that
  // matches is the longest, as the library's trie walk (DictionarySplitter) takes it.
  const pattern = new RegExp(contents.map((c) => c.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|"), "g");
  const prefixes = new Set(contents.flatMap((c) => Array.from({ length: c.length - 1 }, (_, n) => c.slice(0, n + 1))));
  const firstUnits = new Set(contents.map((c) => c.charCodeAt(0)));
  const longest = contents[0]!.length;
  return {
    ids,
    strips,
    sections(text) {
      const out: (string | number)[] = [];
      let start = 0;
      pattern.lastIndex = 0;
      for (let match = pattern.exec(text); match; match = pattern.exec(text)) {
        if (stripping.has(match[0])) return undefined;
        if (match.index > start) out.push(text.slice(start, match.index));
        out.push(ids.get(match[0])!);
        start = match.index + match[0].length;
      }
      if (start < text.length) out.push(start === 0 ? text : text.slice(start));
      return out;
    },
    crosses(text, at) {
      for (let from = Math.max(0, at - longest + 1); from < at; from++) {
        if (firstUnits.has(text.charCodeAt(from)) && prefixes.has(text.slice(from, at))) return true;
      }
      return false;
    },
  };
}

interface Cutter {
  mode: "pieces" | "chunks";
  /** Calls `visit` with each piece of one (normalized) section, in order. */
  forEachPiece(text: string, visit: (piece: string) => void): void;
  /** What the library's pre-tokenizer still does to each piece before BPE; undefined for nothing. */
  rest?: PreTokenizer;
  /** Chunks only: the last position of `text` where a cut is free (see PieceEncoder.stablePrefix), or 0. */
  lastFreeCut(text: string, crosses: (text: string, at: number) => boolean): number;
}

/** The pre-tokenizer's stages, a Sequence opened; undefined for a stage that is not an object. */
function stagesOf(config: unknown): Json[] | undefined {
  const pre = asJson(config);
  if (!pre) return [];
  const stages = pre.type === "Sequence" ? ((Array.isArray(pre.pretokenizers) ? pre.pretokenizers : []) as unknown[]) : [pre];
  return stages.every((s) => asJson(s) !== undefined) ? (stages as Json[]) : undefined;
}

function mentions(config: unknown, type: string): boolean {
  return JSON.stringify(config ?? null).includes(`"type":"${type}"`);
}

/**
 * Pieces: a first stage that splits by a regex. The later stages must not depend on which
 * section they are in (only Metaspace does: `prepend_scheme: first`).
 */
function pieceCutter(config: unknown, bound: BoundPatterns): Cutter | undefined {
  const [first, ...later] = stagesOf(config) ?? [];
  if (!first || mentions(later, "Metaspace")) return undefined;
  const rest = (stages: Json[]) =>
    stages.length > 0 ? bound(new SequencePreTokenizer({ type: "Sequence", pretokenizers: stages } as never)) : undefined;
  const lastFreeCut = () => 0;
  if (first.type === "Split") {
    const split = bound(new SplitPreTokenizer(first as never));
    // pre_tokenize_text: pre_tokenize without its .flat() copy of a list of strings.
    return {
      mode: "pieces",
      forEachPiece: (text, visit) => split.pre_tokenize_text(text).forEach((piece) => visit(piece)),
      rest: rest(later),
      lastFreeCut,
    };
  }
  if (first.type === "ByteLevel") {
    const byteLevel = new ByteLevelPreTokenizer(first as never);
    if (!byteLevel.use_regex || byteLevel.add_prefix_space) return undefined;
    // ByteLevel with its regex is the regex's matches, each mapped to byte characters: the same
    // ByteLevel without the regex maps each piece.
    const forEachPiece = (text: string, visit: (piece: string) => void) => text.match(byteLevel.pattern)?.forEach((piece) => visit(piece));
    return { mode: "pieces", forEachPiece, rest: rest([{ ...first, use_regex: false }, ...later]), lastFreeCut };
  }
  return undefined;
}

/**
 * Chunks: no pre-tokenizer, or ByteLevel without its regex and without a prefix space (each
 * character's bytes mapped on their own), and a BPE whose result on a word is its merges' alone
 * (ignore_merges would keep a whole word found in the vocabulary; word suffixes mark word ends).
 */
function chunkCutter(config: unknown, bpe: Json): Cutter | undefined {
  if (bpe.ignore_merges || bpe.end_of_word_suffix || bpe.continuing_subword_suffix) return undefined;
  const stages = stagesOf(config);
  if (!stages || stages.length > 1) return undefined;
  let rest: PreTokenizer | undefined;
  if (stages.length === 1) {
    if (stages[0]!.type !== "ByteLevel") return undefined;
    const byteLevel = new ByteLevelPreTokenizer(stages[0] as never);
    if (byteLevel.use_regex || byteLevel.add_prefix_space) return undefined;
    rest = byteLevel;
  }
  // The first and last BPE symbol (code point) each character turns into.
  const ends = new Map<number, [string, string]>();
  const endsOf = (codePoint: number): [string, string] => {
    let e = ends.get(codePoint);
    if (!e) {
      const symbols = Array.from(rest ? rest.pre_tokenize(String.fromCodePoint(codePoint)).join("") : String.fromCodePoint(codePoint));
      ends.set(codePoint, (e = [symbols[0]!, symbols[symbols.length - 1]!]));
    }
    return e;
  };
  const joinable = joinableEnds(bpe.merges);
  const free = (before: number, after: number) => joinable.size === 0 || !joinable.has(endsOf(before)[1] + "\u0000" + endsOf(after)[0]);

  return {
    mode: "chunks",
    rest,
    forEachPiece(text, visit) {
      let start = 0;
      let previous = -1;
      for (let i = 0; i < text.length;) {
        const codePoint = text.codePointAt(i)!;
        if (previous >= 0 && free(previous, codePoint)) {
          visit(text.slice(start, i));
          start = i;
        }
        previous = codePoint;
        i += codePoint > 0xffff ? 2 : 1;
      }
      if (start < text.length) visit(text.slice(start));
    },
    lastFreeCut(text, crosses) {
      for (let at = text.length - 1; at > 0; at--) {
        if (isLowSurrogate(text.charCodeAt(at)) && isHighSurrogate(text.charCodeAt(at - 1))) continue;
        const before = text.codePointAt(
          isLowSurrogate(text.charCodeAt(at - 1)) && at >= 2 && isHighSurrogate(text.charCodeAt(at - 2)) ? at - 2 : at - 1,
        )!;
        if (free(before, text.codePointAt(at)!) && !crosses(text, at)) return at;
      }
      return 0;
    },
  };
}

/** Pairs (last symbol of a merge's left side, first symbol of its right side), as "a\0b". */
function joinableEnds(merges: unknown): Set<string> {
  const pairs = new Set<string>();
  for (const merge of Array.isArray(merges) ? (merges as unknown[]) : []) {
    // The library's reading of a merge: a pair, or "a b" split at its first space.
    const [left, right] = Array.isArray(merge) ? (merge as string[]) : String(merge).split(" ", 2);
    if (!left || !right) continue;
    pairs.add(Array.from(left).at(-1)! + "\u0000" + Array.from(right)[0]!);
  }
  return pairs;
}

const isHighSurrogate = (unit: number) => unit >= 0xd800 && unit <= 0xdbff;
const isLowSurrogate = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff;
