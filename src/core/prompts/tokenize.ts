// Tokenization the way lm-eval's Hugging Face backend does it, so scores match what users trust.
import { Tokenizer } from "@huggingface/tokenizers";
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { formatProblem } from "../base/problems";
import { isFile } from "../base/fsutil";
import { readGenerationEos } from "../model/modelSettings";
import { pieceEncoder } from "./pieceEncoder";
import { tokenizerPatterns } from "./tokenizerPatterns";
import { tooDeepOffset, TOO_DEEP } from "../base/jsonNesting";
import { pyRstrip } from "../lmeval/pythonString";

export interface ModelTokenizer {
  /** Tokens of a piece of text, without special tokens (continuations, stop strings). */
  encode(text: string): number[];
  /**
   * The special tokens put around a text the model reads from its start (a context, a diagnostic
   * item): the tokenizer's own (its post-processor: BOS for Llama, Mistral, Gemma; none for
   * Qwen), or what the model's `add_bos_token` says. lm-eval's Hugging Face backend encodes
   * contexts with them since lm-eval 0.4.10 (its `add_bos_token` defaults to None: the
   * tokenizer's default). See inputTokens and docs/prompts.md.
   */
  specials: SpecialTokens;
  /**
   * The text at whose start a rendered context already holds BOS, so that the special tokens are
   * not added a second time (lm-eval's `has_bos_prefix`): loglikelihood requests test the text of
   * the prefix token (`tokenizer.decode(prefix_token_id)`), generation requests `bos_token`.
   */
  bosText: { loglikelihood: string; generation?: string };
  /** Token that stands in for an empty context (lm-eval's prefix_token_id: BOS, else EOS). */
  prefixTokenId: number;
  /**
   * Text of generated tokens as lm-eval's Hugging Face backend decodes them (`tok_decode`:
   * special tokens skipped, the tokenizer's own clean-up setting); "" for no tokens.
   */
  decode(ids: readonly number[]): string;
  /** The tokenizer's end-of-sequence token (`eos_token` of tokenizer_config.json), when it has one. */
  eosTokenId?: number;
  /**
   * Further tokens that end a generation: `eos_token_id` of the model's generation_config.json
   * (one id or a list), where Hugging Face's generate() stops too.
   */
  extraEosTokenIds?: number[];
  /**
   * A length p of `text` (0 when none is known) such that, for every string y that begins with
   * text.slice(p), encode(text.slice(0, p) + y) is encode(text.slice(0, p)) then encode(y): the
   * part of a context whose tokens no continuation changes (used by tokenizeChoices).
   */
  stablePrefix?(text: string): number;
}

/** Special tokens before and after a text's own tokens; both empty when none are added. */
export interface SpecialTokens {
  before: number[];
  after: number[];
  /** Where they come from: the tokenizer's post-processor, or the model's `add_bos_token`. */
  source: "tokenizer" | "add_bos_token";
}

export interface TokenizerOptions {
  /**
   * The model's `add_bos_token` (lm-eval's model argument of that name): true adds the
   * tokenizer's special tokens, with BOS in front where its post-processor has none; false adds
   * none (lm-eval before 0.4.10). Unset: the tokenizer's own.
   */
  addBosToken?: boolean;
}

/** Which of lm-eval's encoders a context goes through: they test for BOS in the text differently. */
export type RequestKind = "loglikelihood" | "generation";

export async function loadTokenizer(modelDir: string, options: TokenizerOptions = {}): Promise<ModelTokenizer> {
  const tokenizerFile = path.join(modelDir, "tokenizer.json");
  const tokenizerText = await fs.readFile(tokenizerFile, "utf8");
  const tokenizerJson = shallowJson(tokenizerText, tokenizerFile) as object;
  const configFile = path.join(modelDir, "tokenizer_config.json");
  const tokenizerConfig = (await isFile(configFile))
    ? (shallowJson(await fs.readFile(configFile, "utf8"), configFile) as Record<string, unknown>)
    : {};
  // the file's regular expressions run with a time bound (tokenizerPatterns.ts)
  const patterns = tokenizerPatterns(tokenizerJson, tokenizerText, tokenizerFile);
  const tokenizer = patterns.boundTokenizer(patterns.build(() => new Tokenizer(tokenizerJson, tokenizerConfig)));
  const specialId = (key: string) => {
    const token = tokenizerConfig[key];
    const content = typeof token === "string" ? token : (token as { content?: string } | undefined)?.content;
    return content === undefined ? undefined : tokenizer.token_to_id(content);
  };
  const eosTokenId = specialId("eos_token");
  const prefixTokenId = specialId("bos_token") ?? eosTokenId;
  if (prefixTokenId === undefined) throw new Error(`${configFile}: neither bos_token nor eos_token is set`);
  const generation = await readGenerationEos(modelDir);
  if (generation.problems.length > 0) throw new Error(generation.problems.map(formatProblem).join("\n"));
  const plainEncode = (text: string) => tokenizer.encode(text, { add_special_tokens: false }).ids;
  // The same ids, faster, for the tokenizers whose pipeline allows it (prompts/pieceEncoder.ts).
  const fast = pieceEncoder(tokenizerJson, tokenizerConfig, tokenizer, plainEncode, patterns.bound);
  const bosTokenId = specialId("bos_token");
  const specialText = (id: number) => tokenizer.decode([id], { skip_special_tokens: false });
  return {
    encode: fast ? (text) => fast.encode(text) : plainEncode,
    ...(fast ? { stablePrefix: (text: string) => fast.stablePrefix(text) } : {}),
    specials: specialTokens(tokenizer, options.addBosToken, bosTokenId, configFile),
    bosText: {
      loglikelihood: specialText(prefixTokenId),
      ...(bosTokenId !== undefined ? { generation: specialText(bosTokenId) } : {}),
    },
    prefixTokenId,
    // The library refuses an empty id list; no tokens are no text.
    decode: (ids) => (ids.length === 0 ? "" : tokenizer.decode([...ids], { skip_special_tokens: true })),
    ...(eosTokenId !== undefined ? { eosTokenId } : {}),
    ...(generation.eosTokenIds.length > 0 ? { extraEosTokenIds: generation.eosTokenIds } : {}),
  };
}

/** The JSON of a model file, refused when it nests too deep for the library's recursive reading of it (base/jsonNesting.ts). */
function shallowJson(text: string, file: string): unknown {
  if (tooDeepOffset(text) !== undefined) throw new Error(`${file} is ${TOO_DEEP}`);
  return JSON.parse(text);
}

/**
 * The special tokens the tokenizer's post-processor puts around a text (found by encoding a
 * probe with and without them), or those `add_bos_token` asks for.
 */
function specialTokens(
  tokenizer: Tokenizer,
  addBosToken: boolean | undefined,
  bosTokenId: number | undefined,
  configFile: string,
): SpecialTokens {
  if (addBosToken === false) return { before: [], after: [], source: "add_bos_token" };
  const probe = "a b";
  const plain = tokenizer.encode(probe, { add_special_tokens: false }).ids;
  const whole = tokenizer.encode(probe, { add_special_tokens: true }).ids;
  const at = whole.findIndex((_, i) => plain.every((id, j) => whole[i + j] === id));
  if (plain.length === 0 || at < 0) {
    throw new Error(
      `${configFile}: the tokenizer's post-processor changes a text's own tokens, which lm-eval's context split does not allow`,
    );
  }
  const before = whole.slice(0, at);
  const after = whole.slice(at + plain.length);
  if (addBosToken === undefined) return { before, after, source: "tokenizer" };
  if (bosTokenId === undefined) throw new Error(`${configFile}: add_bos_token is true but the tokenizer has no bos_token`);
  return { before: before[0] === bosTokenId ? before : [bosTokenId, ...before], after, source: "add_bos_token" };
}

/**
 * The special tokens lm-eval's backend puts around a context of this kind: the tokenizer's
 * (ModelTokenizer.specials), none when the text already starts with BOS (a chat template that
 * writes it), as `has_bos_prefix` decides.
 */
export function contextSpecials(tokenizer: ModelTokenizer, text: string, kind: RequestKind): { before: number[]; after: number[] } {
  const bos = tokenizer.bosText[kind];
  return bos !== undefined && bos !== "" && text.startsWith(bos) ? { before: [], after: [] } : tokenizer.specials;
}

/**
 * Tokens of a whole text the model reads from its start, as lm-eval's `tok_encode` (and, for
 * generation, `tok_batch_encode`) gives them: the text's tokens inside its special tokens.
 */
export function inputTokens(tokenizer: ModelTokenizer, text: string, kind: RequestKind = "loglikelihood"): number[] {
  const { before, after } = contextSpecials(tokenizer, text, kind);
  return [...before, ...tokenizer.encode(text), ...after];
}

export interface TokenizedRequest {
  context: number[];
  continuation: number[];
}

/**
 * lm-eval's split (`_encode_pair`): trailing spaces of the context move to the continuation, the
 * whole string is encoded once (with the context's special tokens, inputTokens) and the
 * continuation is what follows the context's tokens, so merges across the boundary are tokenized
 * as the model saw them in training. An empty context is lm-eval's prefix token, unless the
 * continuation starts with that very token, which then serves as the context. The reference for
 * tokenizeChoices, which gives the same tokens faster.
 */
export function tokenizeRequest(tokenizer: ModelTokenizer, context: string, continuation: string): TokenizedRequest {
  if (context === "") return emptyContextRequest(tokenizer, continuation);
  const { ctx, moved } = moveTrailingSpace(context);
  const whole = inputTokens(tokenizer, ctx + moved + continuation);
  const contextTokens = inputTokens(tokenizer, ctx);
  const continuationTokens = whole.slice(contextTokens.length);
  return { context: contextTokens.length > 0 ? contextTokens : [tokenizer.prefixTokenId], continuation: continuationTokens };
}

/** lm-eval's `loglikelihood` for an empty context: BOS (or EOS) as the context, the continuation without special tokens. */
function emptyContextRequest(tokenizer: ModelTokenizer, continuation: string): TokenizedRequest {
  const tokens = tokenizer.encode(continuation);
  return tokens[0] === tokenizer.prefixTokenId
    ? { context: tokens.slice(0, 1), continuation: tokens.slice(1) }
    : { context: [tokenizer.prefixTokenId], continuation: tokens };
}

/**
 * tokenizeRequest for each continuation of one context, token for token, with less work: the
 * context is encoded once, and each choice encodes only the context after its stable prefix
 * (ModelTokenizer.stablePrefix) with the continuation. With p the stable prefix and B, A the
 * special tokens before and after, the whole is B + encode(ctx[:p]) + encode(ctx[p:] + x) + A and
 * the context B + encode(ctx[:p]) + encode(ctx[p:]) + A, so what follows the context's tokens in
 * the first is what follows encode(ctx[p:]) + A in encode(ctx[p:] + x) + A. The requests share
 * one context array.
 */
export function tokenizeChoices(tokenizer: ModelTokenizer, context: string, continuations: readonly string[]): TokenizedRequest[] {
  if (context === "") return continuations.map((c) => tokenizeRequest(tokenizer, context, c));
  const { ctx, moved } = moveTrailingSpace(context);
  // The whole string starts as the context does, so both get the same special tokens.
  const { before, after } = contextSpecials(tokenizer, ctx, "loglikelihood");
  const plainContext = tokenizer.encode(ctx);
  const stable = ctx === "" ? 0 : (tokenizer.stablePrefix?.(ctx) ?? 0);
  const tail = ctx.slice(stable);
  const tailTokens = stable > 0 ? tokenizer.encode(tail).length : plainContext.length;
  const contextTokens = [...before, ...plainContext, ...after];
  const shared = contextTokens.length > 0 ? contextTokens : [tokenizer.prefixTokenId];
  return continuations.map((c) => ({
    context: shared,
    continuation: [...tokenizer.encode(tail + moved + c), ...after].slice(tailTokens + after.length),
  }));
}

/** lm-eval's `n_spaces`: the context's trailing whitespace, which goes with the continuation. */
function moveTrailingSpace(context: string): { ctx: string; moved: string } {
  const trailing = context.length - pyRstrip(context).length;
  return trailing > 0 ? { ctx: context.slice(0, -trailing), moved: context.slice(-trailing) } : { ctx: context, moved: "" };
}
