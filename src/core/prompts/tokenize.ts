// Tokenization the way lm-eval's Hugging Face backend does it, so scores match what users trust.
import { Tokenizer } from "@huggingface/tokenizers";
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { formatProblem } from "../problems";
import { isFile } from "../fsutil";
import { readGenerationEos } from "../model/modelSettings";
import { pieceEncoder } from "./pieceEncoder";
import { pyRstrip } from "../lmeval/pythonString";

export interface ModelTokenizer {
  /** Tokens of a piece of text, without special tokens (lm-eval's loglikelihood requests). */
  encode(text: string): number[];
  /**
   * Tokens of a whole text the model reads on its own (a rendered diagnostic item): with the
   * special tokens the tokenizer's post-processor adds, as `tokenizer(text)` does in Hugging
   * Face's default (BOS for Llama, nothing for tokenizers that add none).
   */
  encodeSequence(text: string): number[];
  /** Token that stands in for an empty context (lm-eval uses the EOT token; BOS where it exists). */
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

export async function loadTokenizer(modelDir: string): Promise<ModelTokenizer> {
  const tokenizerJson = JSON.parse(await fs.readFile(path.join(modelDir, "tokenizer.json"), "utf8")) as object;
  const configFile = path.join(modelDir, "tokenizer_config.json");
  const tokenizerConfig = (await isFile(configFile)) ? (JSON.parse(await fs.readFile(configFile, "utf8")) as Record<string, unknown>) : {};
  const tokenizer = new Tokenizer(tokenizerJson, tokenizerConfig);
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
  // lm-eval's HF backend encodes without special tokens by default (add_bos_token=False).
  const plainEncode = (text: string) => tokenizer.encode(text, { add_special_tokens: false }).ids;
  // The same ids, faster, for the tokenizers whose pipeline allows it (prompts/pieceEncoder.ts).
  const fast = pieceEncoder(tokenizerJson, tokenizerConfig, tokenizer, plainEncode);
  return {
    encode: fast ? (text) => fast.encode(text) : plainEncode,
    ...(fast ? { stablePrefix: (text: string) => fast.stablePrefix(text) } : {}),
    encodeSequence: (text) => tokenizer.encode(text, { add_special_tokens: true }).ids,
    prefixTokenId,
    // The library refuses an empty id list; no tokens are no text.
    decode: (ids) => (ids.length === 0 ? "" : tokenizer.decode([...ids], { skip_special_tokens: true })),
    ...(eosTokenId !== undefined ? { eosTokenId } : {}),
    ...(generation.eosTokenIds.length > 0 ? { extraEosTokenIds: generation.eosTokenIds } : {}),
  };
}

export interface TokenizedRequest {
  context: number[];
  continuation: number[];
}

/**
 * lm-eval's split (`_encode_pair`): trailing spaces of the context move to the continuation, the
 * whole string is encoded once and the continuation is what follows the context's tokens, so
 * merges across the boundary are tokenized as the model saw them in training. The reference
 * for tokenizeChoices, which gives the same tokens faster.
 */
export function tokenizeRequest(tokenizer: ModelTokenizer, context: string, continuation: string): TokenizedRequest {
  if (context === "") {
    return { context: [tokenizer.prefixTokenId], continuation: tokenizer.encode(continuation) };
  }
  const { ctx, moved } = moveTrailingSpace(context);
  const whole = tokenizer.encode(ctx + moved + continuation);
  const contextTokens = tokenizer.encode(ctx);
  const continuationTokens = whole.slice(contextTokens.length);
  return { context: contextTokens.length > 0 ? contextTokens : [tokenizer.prefixTokenId], continuation: continuationTokens };
}

/**
 * tokenizeRequest for each continuation of one context, token for token, with less work: the
 * context is encoded once, and each choice encodes only the context after its stable prefix
 * (ModelTokenizer.stablePrefix) with the continuation. With p the stable prefix,
 * encode(ctx + x) = encode(ctx[:p]) + encode(ctx[p:] + x) and encode(ctx) = encode(ctx[:p]) +
 * encode(ctx[p:]), so what follows the context's tokens in the first is what follows
 * encode(ctx[p:]) in encode(ctx[p:] + x). The requests share one context array.
 */
export function tokenizeChoices(tokenizer: ModelTokenizer, context: string, continuations: readonly string[]): TokenizedRequest[] {
  if (context === "") return continuations.map((c) => tokenizeRequest(tokenizer, context, c));
  const { ctx, moved } = moveTrailingSpace(context);
  const contextTokens = tokenizer.encode(ctx);
  const stable = ctx === "" ? 0 : (tokenizer.stablePrefix?.(ctx) ?? 0);
  const tail = ctx.slice(stable);
  const tailTokens = stable > 0 ? tokenizer.encode(tail).length : contextTokens.length;
  const shared = contextTokens.length > 0 ? contextTokens : [tokenizer.prefixTokenId];
  return continuations.map((c) => ({ context: shared, continuation: tokenizer.encode(tail + moved + c).slice(tailTokens) }));
}

/** lm-eval's `n_spaces`: the context's trailing whitespace, which goes with the continuation. */
function moveTrailingSpace(context: string): { ctx: string; moved: string } {
  const trailing = context.length - pyRstrip(context).length;
  return trailing > 0 ? { ctx: context.slice(0, -trailing), moved: context.slice(-trailing) } : { ctx: context, moved: "" };
}
