// Parameter counts of a model of a family the runner loads, from its config.json alone, so a
// config can be checked (is k small enough for the MLP candidates?) before any weight is read.
// The families' defaults, switches and tensors are the runner's own table (native-runner/src/
// config.cpp), copied into families.json by `npm run families` (`bprof-runner --families`); this
// file walks that table and knows no family. The runner counts the same tensors from the checkpoint
// (PROTOCOL.md, "Rankings"): every parameter once, a tied embedding once; the candidates are the
// MLP weights (gate/up/down, of every expert) of the included layers.
import { promises as fs, readFileSync } from "node:fs";
import * as path from "node:path";
import table from "./families.json";

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

/** A switch of a family's tensors: fixed, or config.json's boolean `key` with its default. */
type Switch = boolean | { key: string; default: boolean };
/** A count of a mixture of experts: config.json's `key`, else `alias`, else `default` (null: required). */
interface CountKey {
  key: string;
  alias?: string;
  default: number | null;
}
interface Family {
  model_type: string;
  /** The config class's defaults (null: num_attention_heads, hidden_size / num_attention_heads). */
  defaults: { num_key_value_heads: number | null; head_dim: number | null; tie_word_embeddings: boolean };
  switches: Record<string, Switch>;
  experts: { num_experts: CountKey; expert_intermediate_size: CountKey; experts_per_token: CountKey } | null;
}
/** A tensor: there when each `when` switch holds ("!name": is off); a shape dimension is a sum of products of sizes and integers. */
interface TensorTemplate {
  name: string;
  role: "embedding" | "norm" | "attention" | "mlp_weight" | "bias" | "lm_head" | "router";
  shape: string[];
  when: string[];
  /** Once per expert of a mixture. */
  per_expert?: boolean;
}
interface FamilyTable {
  families: Family[];
  model_tensors: TensorTemplate[];
  layer_tensors: TensorTemplate[];
}

const TABLE = table as unknown as FamilyTable;

/** The runner's family of a config.json's model_type (none: llama, as the editor has always counted). */
function familyOf(raw: Record<string, unknown>): Family | undefined {
  const type = raw["model_type"] ?? "llama";
  return TABLE.families.find((family) => family.model_type === type);
}

function switchValue(raw: Record<string, unknown>, value: Switch): boolean {
  if (typeof value === "boolean") return value;
  const given = raw[value.key];
  return typeof given === "boolean" ? given : value.default;
}

function countValue(raw: Record<string, unknown>, count: CountKey): number | undefined {
  if (count.alias !== undefined && (raw[count.key] === undefined || raw[count.key] === null))
    return positiveInteger(raw, count.alias, count.default ?? undefined);
  return positiveInteger(raw, count.key, count.default ?? undefined);
}

/** A shape's dimension: terms joined by "+", factors by "*", each an integer or one of `sizes`. */
function dimension(formula: string, sizes: Record<string, number>): number {
  let sum = 0;
  for (const term of formula.split("+")) {
    let product = 1;
    for (const factor of term.split("*")) {
      const size = /^\d+$/.test(factor) ? Number(factor) : sizes[factor];
      if (size === undefined) throw new Error(`families.json: a shape names '${factor}', which is not a size of the table (${formula})`);
      product *= size;
    }
    sum += product;
  }
  return sum;
}

function numel(tensor: TensorTemplate, sizes: Record<string, number>): number {
  return tensor.shape.reduce((product, formula) => product * dimension(formula, sizes), 1);
}

function applies(tensor: TensorTemplate, switches: Record<string, boolean>): boolean {
  return tensor.when.every((when) => (when.startsWith("!") ? switches[when.slice(1)] === false : switches[when] === true));
}

/**
 * Counts of a Hugging Face config of a family the runner loads (families.json; a config without
 * model_type counts as llama): the model's tensors and num_hidden_layers times a layer's, each as
 * the runner's table says. Undefined when a size it needs is missing or the model_type is not a
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
  const family = familyOf(raw);
  if (!family) return undefined;
  const vocab = positiveInteger(raw, "vocab_size");
  const hidden = positiveInteger(raw, "hidden_size");
  const intermediate = positiveInteger(raw, "intermediate_size");
  const layers = positiveInteger(raw, "num_hidden_layers");
  const heads = positiveInteger(raw, "num_attention_heads");
  if (!vocab || !hidden || !intermediate || !layers || !heads) return undefined;
  const defaults = family.defaults;
  const kvHeads =
    raw["num_key_value_heads"] === null ? heads : positiveInteger(raw, "num_key_value_heads", defaults.num_key_value_heads ?? heads);
  const headDim = positiveInteger(raw, "head_dim", defaults.head_dim ?? (Number.isInteger(hidden / heads) ? hidden / heads : undefined));
  if (!kvHeads || !headDim) return undefined;
  const experts = family.experts && {
    count: countValue(raw, family.experts.num_experts),
    intermediate: countValue(raw, family.experts.expert_intermediate_size),
    perToken: countValue(raw, family.experts.experts_per_token),
  };
  if (experts && (!experts.count || !experts.intermediate || !experts.perToken)) return undefined;
  const tied = typeof raw["tie_word_embeddings"] === "boolean" ? raw["tie_word_embeddings"] : defaults.tie_word_embeddings;
  const switches: Record<string, boolean> = { experts: experts !== null, tie_word_embeddings: tied };
  for (const [name, value] of Object.entries(family.switches)) switches[name] = switchValue(raw, value);
  const sizes: Record<string, number> = {
    vocab_size: vocab,
    hidden_size: hidden,
    intermediate_size: intermediate,
    num_attention_heads: heads,
    num_key_value_heads: kvHeads,
    head_dim: headDim,
    num_experts: experts?.count ?? 0,
    expert_intermediate_size: experts?.intermediate ?? 0,
    experts_per_token: experts?.perToken ?? 0,
  };
  // one layer's tensors by role; a mixture's per-expert ones once per expert, and once per routed expert for a token
  const perToken = experts ? Math.min(experts.perToken!, experts.count!) : 0;
  let perLayer = 0;
  let mlpPerLayer = 0;
  let attentionPerLayer = 0;
  let activeMlpPerLayer = 0;
  for (const tensor of TABLE.layer_tensors) {
    if (!applies(tensor, switches)) continue;
    const one = numel(tensor, sizes);
    const all = tensor.per_expert ? one * sizes.num_experts! : one;
    perLayer += all;
    if (tensor.role === "mlp_weight") mlpPerLayer += all;
    if (tensor.role === "attention") attentionPerLayer += all;
    if (tensor.role === "mlp_weight" || tensor.role === "router") activeMlpPerLayer += tensor.per_expert ? one * perToken : one;
  }
  const outside = TABLE.model_tensors.filter((tensor) => applies(tensor, switches)).reduce((sum, tensor) => sum + numel(tensor, sizes), 0);
  return {
    count: { total: outside + layers * perLayer, layers, mlpPerLayer, attentionPerLayer },
    hidden,
    vocab,
    heads,
    tied,
    activeIntermediate: experts ? perToken * experts.intermediate! : intermediate,
    activeMlpPerLayer,
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
