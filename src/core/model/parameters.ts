// Parameter counts of a Llama-style model from its config.json alone, so a config can be checked
// (is k small enough for the MLP candidates?) before any weight is read. The runner counts the
// same way from the tensors themselves (PROTOCOL.md, "Rankings"): every parameter once, a tied
// embedding once; the candidates are the gate/up/down weight matrices of the included layers.
import { promises as fs } from "node:fs";
import * as path from "node:path";

export interface ParameterCount {
  /** Every parameter of the model, a tied embedding counted once: P of n = floor(k x P). */
  total: number;
  layers: number;
  /** gate + up + down weights of one layer: 3 x hidden x intermediate. */
  mlpPerLayer: number;
}

/** Candidates of the importance ranking: the MLP weights of layers front .. L - back - 1. */
export function candidateCount(count: ParameterCount, frontRemoval = 0, backRemoval = 0): number {
  return Math.max(0, count.layers - frontRemoval - backRemoval) * count.mlpPerLayer;
}

/** n = floor(k x P), the parameters a variant at k zeroes. */
export function selectedCount(k: number, total: number): number {
  return Math.floor(k * total);
}

function positiveInteger(raw: Record<string, unknown>, key: string, fallback?: number): number | undefined {
  const value = raw[key] ?? fallback;
  return typeof value === "number" && Number.isSafeInteger(value) && value > 0 ? value : undefined;
}

/**
 * Counts of a Hugging Face Llama config (llama, mistral, qwen2 and the like share the layout):
 * embeddings V x H, lm_head V x H unless tied, per layer q/k/v/o projections, 3 x H x I MLP
 * weights and two norms, and the final norm; biases when `attention_bias` / `mlp_bias` say so.
 * Undefined when a size it needs is missing, so a caller can skip the check instead of guessing.
 */
export function llamaParameterCount(raw: Record<string, unknown>): ParameterCount | undefined {
  const vocab = positiveInteger(raw, "vocab_size");
  const hidden = positiveInteger(raw, "hidden_size");
  const intermediate = positiveInteger(raw, "intermediate_size");
  const layers = positiveInteger(raw, "num_hidden_layers");
  const heads = positiveInteger(raw, "num_attention_heads");
  if (!vocab || !hidden || !intermediate || !layers || !heads) return undefined;
  const kvHeads = positiveInteger(raw, "num_key_value_heads", heads);
  const headDim = positiveInteger(raw, "head_dim", Number.isInteger(hidden / heads) ? hidden / heads : undefined);
  if (!kvHeads || !headDim) return undefined;
  const q = heads * headDim;
  const kv = kvHeads * headDim;
  const attention = hidden * q + 2 * hidden * kv + q * hidden + (raw["attention_bias"] === true ? q + 2 * kv + hidden : 0);
  const mlpPerLayer = 3 * hidden * intermediate;
  const mlpBiases = raw["mlp_bias"] === true ? 2 * intermediate + hidden : 0;
  const perLayer = attention + mlpPerLayer + mlpBiases + 2 * hidden;
  const embeddings = vocab * hidden * (raw["tie_word_embeddings"] === true ? 1 : 2);
  return { total: embeddings + layers * perLayer + hidden, layers, mlpPerLayer };
}

/** The counts of a model folder, or undefined when its config.json is unreadable or incomplete. */
export async function readParameterCount(modelDir: string): Promise<ParameterCount | undefined> {
  try {
    const raw = JSON.parse(await fs.readFile(path.join(modelDir, "config.json"), "utf8")) as unknown;
    return typeof raw === "object" && raw !== null && !Array.isArray(raw) ? llamaParameterCount(raw as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
