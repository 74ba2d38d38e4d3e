// What scoring needs from a model folder beyond the weights: the longest sequence the model reads
// (lm-eval's HFLM.max_length) and the tokens that end a generation (generation_config.json).
import * as path from "node:path";
import type { Problem } from "../base/problems";
import { isFile } from "../base/fsutil";
import { readJsonSource } from "../base/jsonSource";

/** lm-eval's HFLM._DEFAULT_MAX_LENGTH: the window of a model whose files name none. */
export const DEFAULT_MAX_LENGTH = 2048;

/** transformers' "no limit" model_max_length (int(1e30)); lm-eval falls back to its default for it. */
const TOKENIZER_INFINITY = 1e30;

export interface MaxLength {
  value: number;
  /** Where it comes from, for messages: "the config's max_length", "config.json max_position_embeddings", ... */
  from: string;
}

/**
 * The longest sequence the model reads, as lm-eval's HFLM.max_length: the config's `max_length`
 * when set, else the first of config.json's n_positions, max_position_embeddings, n_ctx, else
 * tokenizer_config.json's model_max_length (unless it is transformers' "no limit"), else 2048.
 * Files that cannot be read count as absent (the folder checks report them).
 */
export async function resolveMaxLength(modelDir: string, configured?: number): Promise<MaxLength> {
  if (configured !== undefined) return { value: configured, from: "the config's `max_length`" };
  const config = await readObject(path.join(modelDir, "config.json"));
  for (const key of ["n_positions", "max_position_embeddings", "n_ctx"]) {
    const value = config?.[key];
    if (Number.isSafeInteger(value) && (value as number) > 0) return { value: value as number, from: `config.json \`${key}\`` };
  }
  const tokenizerConfig = await readObject(path.join(modelDir, "tokenizer_config.json"));
  const modelMax = tokenizerConfig?.model_max_length;
  if (typeof modelMax === "number" && Number.isSafeInteger(modelMax) && modelMax > 0 && modelMax < TOKENIZER_INFINITY) {
    return { value: modelMax, from: "tokenizer_config.json `model_max_length`" };
  }
  return { value: DEFAULT_MAX_LENGTH, from: `lm-eval's default (${DEFAULT_MAX_LENGTH}: the model's files name no window)` };
}

/**
 * The extra end-of-sequence tokens of generation_config.json: its `eos_token_id`, a token id or a
 * list of them (Llama 3 instruct models list <|end_of_text|>, <|eom_id|>, <|eot_id|>). Hugging
 * Face's generate(), which lm-eval's generate_until calls, stops at any of them. None when the
 * file or the field is absent; a problem in the file when the field is not ids.
 */
export async function readGenerationEos(modelDir: string): Promise<{ eosTokenIds: number[]; problems: Problem[] }> {
  const file = path.join(modelDir, "generation_config.json");
  if (!(await isFile(file))) return { eosTokenIds: [], problems: [] };
  const { source, problems } = await readJsonSource(file);
  if (!source) return { eosTokenIds: [], problems };
  if (typeof source.value !== "object" || source.value === null || Array.isArray(source.value)) {
    return { eosTokenIds: [], problems: [source.at([], "model.generation-config", "generation_config.json must be a JSON object")] };
  }
  const value = (source.value as Record<string, unknown>).eos_token_id;
  if (value === undefined || value === null) return { eosTokenIds: [], problems: [] };
  const isId = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
  if (isId(value)) return { eosTokenIds: [value], problems: [] };
  if (Array.isArray(value) && value.every(isId)) return { eosTokenIds: [...new Set(value)], problems: [] };
  return {
    eosTokenIds: [],
    problems: [source.at(["eos_token_id"], "model.generation-config", "`eos_token_id` must be a token id or a list of token ids")],
  };
}

async function readObject(file: string): Promise<Record<string, unknown> | undefined> {
  if (!(await isFile(file))) return undefined;
  const { source } = await readJsonSource(file);
  const value = source?.value;
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}
