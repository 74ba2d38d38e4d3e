// Parameter counts of a model of a family the runner loads, from its config.json alone, so a
// config can be checked (is k small enough for the MLP candidates?) before any weight is read.
// Each family's biases and norms follow native-runner/src/config.cpp. The runner counts the same way from the tensors themselves (PROTOCOL.md, "Rankings"): every parameter once, a tied
// embedding once; the candidates are the gate/up/down weight matrices of the included layers.
import { promises as fs, readFileSync } from "node:fs";
import * as path from "node:path";

export interface ParameterCount {
  /** Every parameter of the model, a tied embedding counted once: P of n = floor(k x P). */
  total: number;
  layers: number;
  /** gate + up + down weights of one layer: 3 x hidden x intermediate (a mixture of experts: of every expert). */
  mlpPerLayer: number;
  /** q + k + v + o projection weights of one layer (no biases, no norms). */
  attentionPerLayer: number;
}

/** The sizes of a model plan/devicePlan.ts needs beside its counts. */
export interface ModelShape {
  count: ParameterCount;
  hidden: number;
  vocab: number;
  heads: number;
  tied: boolean;
  /** The MLP width one token goes through: intermediate_size, or a mixture's experts per token x their size. */
  activeIntermediate: number;
  /** MLP weights one token multiplies by in a layer: of a mixture of experts, its routed experts' and the router. */
  activeMlpPerLayer: number;
}

/**
 * Candidates of the importance ranking: the MLP weights of layers front .. L - back - 1, and with
 * `ablation.candidates: all` their attention projection weights too.
 */
export function candidateCount(count: ParameterCount, frontRemoval = 0, backRemoval = 0, set: "mlp" | "all" = "mlp"): number {
  const perLayer = count.mlpPerLayer + (set === "all" ? count.attentionPerLayer : 0);
  return Math.max(0, count.layers - frontRemoval - backRemoval) * perLayer;
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
 * What a family's layer holds beyond the shared Llama layout, as native-runner/src/config.cpp
 * decides it per model_type (and transformers' modeling files do): the defaults of the sizes a
 * config.json may leave out, and which biases and norms each layer has. A model_type missing here
 * is one the runner refuses; its count is undefined.
 */
interface FamilyCounts {
  /** num_key_value_heads when config.json leaves it out (null always means num_attention_heads). */
  kvHeads?: number;
  /** head_dim when config.json leaves it out; else hidden_size / num_attention_heads. */
  headDim?: number;
  /** Bias on q/k/v and on o_proj. */
  attentionBias: (raw: Record<string, unknown>) => { qkv: boolean; o: boolean };
  mlpBias: (raw: Record<string, unknown>) => boolean;
  /** q_norm and k_norm: an RMSNorm weight of head_dim each per layer ("whole": of the q and k projections' sizes). */
  qkNorm: boolean | "whole";
  /** RMSNorm weights of hidden_size per layer: 2, or 4 with norms both before and after attention and MLP. */
  layerNorms?: number;
  /** tie_word_embeddings when config.json leaves it out. */
  tied?: boolean;
  /**
   * A mixture of experts: the experts of each layer's MLP and their intermediate size (each a
   * SwiGLU MLP without biases, all candidates), beside a router of experts x hidden (not one).
   */
  experts?: (raw: Record<string, unknown>, intermediate: number) => { count?: number; intermediate?: number; perToken?: number };
}

const attentionBiasAll = (raw: Record<string, unknown>) => ({ qkv: raw["attention_bias"] === true, o: raw["attention_bias"] === true });
const none = () => false;

const FAMILIES: Record<string, FamilyCounts> = {
  // LlamaAttention: attention_bias on all four projections; LlamaMLP: mlp_bias.
  llama: { attentionBias: attentionBiasAll, mlpBias: (raw) => raw["mlp_bias"] === true, qkNorm: false },
  // MistralAttention / MistralMLP: no biases; MistralConfig's num_key_value_heads defaults to 8.
  mistral: { kvHeads: 8, attentionBias: () => ({ qkv: false, o: false }), mlpBias: none, qkNorm: false },
  // Qwen2Attention: q/k/v always biased, o_proj never.
  qwen2: { kvHeads: 32, attentionBias: () => ({ qkv: true, o: false }), mlpBias: none, qkNorm: false },
  // Qwen3Attention: attention_bias on all four, q_norm/k_norm over head_dim; head_dim defaults to 128.
  qwen3: { kvHeads: 32, headDim: 128, attentionBias: attentionBiasAll, mlpBias: none, qkNorm: true },
  // GraniteAttention / GraniteMLP: Llama's biases (its multipliers add no parameter).
  granite: { attentionBias: attentionBiasAll, mlpBias: (raw) => raw["mlp_bias"] === true, qkNorm: false },
  // Olmo2Attention: attention_bias on all four, q_norm/k_norm over the whole projections; two norms a
  // layer still (after attention and MLP instead of before).
  olmo2: { attentionBias: attentionBiasAll, mlpBias: none, qkNorm: "whole" },
  // Phi3Attention / Phi3MLP: fused qkv_proj and gate_up_proj, the same sizes as q/k/v and gate/up; no biases.
  phi3: { attentionBias: () => ({ qkv: false, o: false }), mlpBias: none, qkNorm: false },
  // Gemma2: attention_bias on all four, no MLP bias, a norm before and after attention and MLP;
  // Gemma2Config: num_key_value_heads 4, head_dim 256, tied embeddings.
  gemma2: { kvHeads: 4, headDim: 256, attentionBias: attentionBiasAll, mlpBias: none, qkNorm: false, layerNorms: 4, tied: true },
  // Gemma3TextConfig: Gemma 2's, and q_norm/k_norm over head_dim.
  gemma3_text: { kvHeads: 4, headDim: 256, attentionBias: attentionBiasAll, mlpBias: none, qkNorm: true, layerNorms: 4, tied: true },
  // MixtralConfig: Mistral's attention, num_key_value_heads 8; num_local_experts (alias num_experts,
  // default 8) experts of intermediate_size.
  mixtral: {
    kvHeads: 8,
    attentionBias: () => ({ qkv: false, o: false }),
    mlpBias: none,
    qkNorm: false,
    experts: (raw, intermediate) => ({
      count: positiveInteger(raw, "num_local_experts") ?? positiveInteger(raw, "num_experts", 8),
      intermediate,
      perToken: positiveInteger(raw, "num_experts_per_tok", 2),
    }),
  },
  // Qwen3MoeConfig: Qwen3's attention, num_key_value_heads 4, head_dim from the sizes; num_experts
  // (alias num_local_experts, default 128) experts of moe_intermediate_size (default 768).
  qwen3_moe: {
    kvHeads: 4,
    attentionBias: attentionBiasAll,
    mlpBias: none,
    qkNorm: true,
    experts: (raw) => ({
      count: positiveInteger(raw, "num_experts") ?? positiveInteger(raw, "num_local_experts", 128),
      intermediate: positiveInteger(raw, "moe_intermediate_size", 768),
      perToken: positiveInteger(raw, "num_experts_per_tok", 8),
    }),
  },
};

/**
 * Counts of a Hugging Face config of a family the runner loads (llama, mistral, qwen2, qwen3,
 * granite, olmo2, phi3, gemma2, gemma3_text, mixtral, qwen3_moe; a config without model_type counts
 * as llama): embeddings V x H, lm_head V x H unless tied, per layer q/k/v/o projections, 3 x H x I
 * MLP weights (a mixture of experts: 3 x H x I of each expert and its router, experts x H), two
 * norms and the family's biases and q/k norms, and the final norm. Undefined when a size it needs is missing or the model_type is not a
 * family the runner loads, so a caller can skip the check instead of guessing.
 */
export function llamaParameterCount(raw: Record<string, unknown>): ParameterCount | undefined {
  return modelShape(raw)?.count;
}

/**
 * The sizes of a config the runner loads that plan/devicePlan.ts needs beside its counts: the
 * widths a token's activations have, and the MLP weights one token multiplies by (a mixture of
 * experts: its num_experts_per_tok routed experts and the router). Undefined as llamaParameterCount.
 */
export function modelShape(raw: Record<string, unknown>): ModelShape | undefined {
  const type = raw["model_type"] ?? "llama";
  const family = typeof type === "string" && Object.hasOwn(FAMILIES, type) ? FAMILIES[type]! : undefined;
  if (!family) return undefined;
  const vocab = positiveInteger(raw, "vocab_size");
  const hidden = positiveInteger(raw, "hidden_size");
  const intermediate = positiveInteger(raw, "intermediate_size");
  const layers = positiveInteger(raw, "num_hidden_layers");
  const heads = positiveInteger(raw, "num_attention_heads");
  if (!vocab || !hidden || !intermediate || !layers || !heads) return undefined;
  const kvHeads = raw["num_key_value_heads"] === null ? heads : positiveInteger(raw, "num_key_value_heads", family.kvHeads ?? heads);
  const headDim = positiveInteger(raw, "head_dim", family.headDim ?? (Number.isInteger(hidden / heads) ? hidden / heads : undefined));
  if (!kvHeads || !headDim) return undefined;
  const q = heads * headDim;
  const kv = kvHeads * headDim;
  const bias = family.attentionBias(raw);
  const attention = hidden * q + 2 * hidden * kv + q * hidden + (bias.qkv ? q + 2 * kv : 0) + (bias.o ? hidden : 0);
  const qkNorms = family.qkNorm === "whole" ? q + kv : family.qkNorm ? 2 * headDim : 0;
  const experts = family.experts?.(raw, intermediate);
  if (experts && (!experts.count || !experts.intermediate)) return undefined;
  const mlpPerLayer = experts ? experts.count! * 3 * hidden * experts.intermediate! : 3 * hidden * intermediate;
  const router = experts ? experts.count! * hidden : 0;
  const mlpBiases = family.mlpBias(raw) ? 2 * intermediate + hidden : 0;
  const perLayer = attention + qkNorms + mlpPerLayer + router + mlpBiases + (family.layerNorms ?? 2) * hidden;
  const tied = typeof raw["tie_word_embeddings"] === "boolean" ? raw["tie_word_embeddings"] : (family.tied ?? false);
  const embeddings = vocab * hidden * (tied ? 1 : 2);
  const perToken = experts ? Math.min(experts.perToken ?? experts.count!, experts.count!) : undefined;
  return {
    count: { total: embeddings + layers * perLayer + hidden, layers, mlpPerLayer, attentionPerLayer: 2 * hidden * q + 2 * hidden * kv },
    hidden,
    vocab,
    heads,
    tied,
    activeIntermediate: perToken ? perToken * experts!.intermediate! : intermediate,
    activeMlpPerLayer: perToken ? perToken * 3 * hidden * experts!.intermediate! + router : mlpPerLayer,
  };
}

/** The shape of a model folder's config.json, read now (a job is compiled without awaiting); undefined as readParameterCount. */
export function readModelShapeSync(modelDir: string): ModelShape | undefined {
  try {
    const raw = JSON.parse(readFileSync(path.join(modelDir, "config.json"), "utf8")) as unknown;
    return typeof raw === "object" && raw !== null && !Array.isArray(raw) ? modelShape(raw as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
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
