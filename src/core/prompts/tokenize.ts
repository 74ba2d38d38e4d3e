// Tokenization the way lm-eval's Hugging Face backend does it, so scores match what users trust.
import { Tokenizer } from "@huggingface/tokenizers";
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { isFile } from "../fsutil";

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
  return {
    // lm-eval's HF backend encodes without special tokens by default (add_bos_token=False).
    encode: (text) => tokenizer.encode(text, { add_special_tokens: false }).ids,
    encodeSequence: (text) => tokenizer.encode(text, { add_special_tokens: true }).ids,
    prefixTokenId,
    // The library refuses an empty id list; no tokens are no text.
    decode: (ids) => (ids.length === 0 ? "" : tokenizer.decode([...ids], { skip_special_tokens: true })),
    ...(eosTokenId !== undefined ? { eosTokenId } : {}),
  };
}

export interface TokenizedRequest {
  context: number[];
  continuation: number[];
}

/**
 * lm-eval's split: trailing spaces of the context move to the continuation, the whole string
 * is encoded once and the continuation is what follows the context's tokens, so merges across
 * the boundary are tokenized as the model saw them in training.
 */
export function tokenizeRequest(tokenizer: ModelTokenizer, context: string, continuation: string): TokenizedRequest {
  if (context === "") {
    return { context: [tokenizer.prefixTokenId], continuation: tokenizer.encode(continuation) };
  }
  const trailing = context.length - context.trimEnd().length;
  const ctx = trailing > 0 ? context.slice(0, -trailing) : context;
  const cont = trailing > 0 ? context.slice(-trailing) + continuation : continuation;
  const whole = tokenizer.encode(ctx + cont);
  const contextTokens = tokenizer.encode(ctx);
  const continuationTokens = whole.slice(contextTokens.length);
  return { context: contextTokens.length > 0 ? contextTokens : [tokenizer.prefixTokenId], continuation: continuationTokens };
}
