// A Llama model with seeded random weights in a Hugging Face folder: the tiny models of tests
// and the larger ones of benchmarks. The weights are random, but scaled so that next-token
// distributions are far from uniform and log-likelihood comparisons mean something.
import * as fs from "fs";
import * as path from "path";
import { BOS_TOKEN_ID, BYTE_VOCAB_SIZE, EOS_TOKEN_ID, byteLevelTokenizer } from "../../scripts/lib/byteTokenizer";
import { type TensorToWrite, type WritableDtype, writeSafetensors } from "./safetensorsWriter";
import { seededRandom } from "../../src/core/base/random";

export interface RandomLlamaOptions {
  hiddenSize?: number;
  intermediateSize?: number;
  numLayers?: number;
  numHeads?: number;
  numKvHeads?: number;
  /** Default hiddenSize / numHeads. */
  headDim?: number;
  maxPositionEmbeddings?: number;
  tieWordEmbeddings?: boolean;
  dtype?: WritableDtype;
  seed?: number;
}

export interface LlamaConfigJson {
  architectures: string[];
  model_type: "llama";
  vocab_size: number;
  hidden_size: number;
  intermediate_size: number;
  num_hidden_layers: number;
  num_attention_heads: number;
  num_key_value_heads: number;
  head_dim: number;
  rms_norm_eps: number;
  rope_theta: number;
  rope_scaling: null;
  attention_bias: boolean;
  mlp_bias: boolean;
  max_position_embeddings: number;
  tie_word_embeddings: boolean;
  bos_token_id: number;
  eos_token_id: number;
  hidden_act: "silu";
  torch_dtype: "float32" | "float16" | "bfloat16";
  initializer_range: number;
  use_cache: boolean;
}

export interface RandomLlamaSummary {
  dir: string;
  config: LlamaConfigJson;
  /** All parameters of the model (the embedding counted once when tied). */
  parameters: number;
  /** Parameters of the gate/up/down projections: the candidates of importance ranking. */
  mlpParameters: number;
  tensors: number;
  /** Size of model.safetensors in bytes. */
  bytes: number;
}

const TORCH_DTYPES = { F32: "float32", F16: "float16", BF16: "bfloat16" } as const;

// Initialisation scales, as gains over sqrt(fan_in) so that activations have the same size
// whatever the width: with hidden 32 a projection gets std 0.3. Output logits get std about
// LOGIT_GAIN after the final norm, which makes the next-token distribution clearly peaked.
const PROJECTION_GAIN = 1.7;
const LOGIT_GAIN = 3;
const NORM_NOISE = 0.1;

// ---------------------------------------------------------------------------------------------
// seeded random numbers

/** 32-bit FNV-1a hash of a string: decorrelates the streams of different tensors. */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** n normal draws of mean `mean` and std `std` (Box-Muller, both outputs used). */
function normalArray(n: number, mean: number, std: number, seed: number): Float32Array {
  const uniform = seededRandom(seed);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i += 2) {
    const u1 = 1 - uniform(); // in (0, 1]: log(u1) is finite
    const u2 = uniform();
    const r = Math.sqrt(-2 * Math.log(u1)) * std;
    out[i] = mean + r * Math.cos(2 * Math.PI * u2);
    if (i + 1 < n) out[i + 1] = mean + r * Math.sin(2 * Math.PI * u2);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// the model

function resolvedConfig(options: RandomLlamaOptions): LlamaConfigJson {
  const hidden = options.hiddenSize ?? 32;
  const heads = options.numHeads ?? 4;
  const kvHeads = options.numKvHeads ?? 2;
  const headDim = options.headDim ?? hidden / heads;
  const layers = options.numLayers ?? 2;
  const intermediate = options.intermediateSize ?? 64;
  const positive = { hidden, heads, kvHeads, headDim, layers, intermediate };
  for (const [name, value] of Object.entries(positive)) {
    if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`randomLlama: ${name} must be a positive integer, got ${value}`);
  }
  if (heads % kvHeads !== 0) throw new Error(`randomLlama: numHeads (${heads}) must be a multiple of numKvHeads (${kvHeads})`);
  if (headDim % 2 !== 0) throw new Error(`randomLlama: headDim (${headDim}) must be even for rotary embeddings`);
  const dtype = options.dtype ?? "F32";
  return {
    architectures: ["LlamaForCausalLM"],
    model_type: "llama",
    vocab_size: BYTE_VOCAB_SIZE,
    hidden_size: hidden,
    intermediate_size: intermediate,
    num_hidden_layers: layers,
    num_attention_heads: heads,
    num_key_value_heads: kvHeads,
    head_dim: headDim,
    rms_norm_eps: 1e-5,
    rope_theta: 10000,
    rope_scaling: null,
    attention_bias: false,
    mlp_bias: false,
    max_position_embeddings: options.maxPositionEmbeddings ?? 2048,
    tie_word_embeddings: options.tieWordEmbeddings ?? false,
    bos_token_id: BOS_TOKEN_ID,
    eos_token_id: EOS_TOKEN_ID,
    hidden_act: "silu",
    torch_dtype: TORCH_DTYPES[dtype],
    initializer_range: PROJECTION_GAIN / Math.sqrt(hidden),
    use_cache: true,
  };
}

interface TensorSpec {
  name: string;
  shape: number[];
  mean: number;
  std: number;
}

function projection(name: string, out: number, fanIn: number): TensorSpec {
  return { name, shape: [out, fanIn], mean: 0, std: PROJECTION_GAIN / Math.sqrt(fanIn) };
}

function norm(name: string, size: number): TensorSpec {
  return { name, shape: [size], mean: 1, std: NORM_NOISE };
}

function layerSpecs(c: LlamaConfigJson, i: number): TensorSpec[] {
  const p = `model.layers.${i}`;
  const h = c.hidden_size;
  const q = c.num_attention_heads * c.head_dim;
  const kv = c.num_key_value_heads * c.head_dim;
  return [
    norm(`${p}.input_layernorm.weight`, h),
    projection(`${p}.self_attn.q_proj.weight`, q, h),
    projection(`${p}.self_attn.k_proj.weight`, kv, h),
    projection(`${p}.self_attn.v_proj.weight`, kv, h),
    projection(`${p}.self_attn.o_proj.weight`, h, q),
    norm(`${p}.post_attention_layernorm.weight`, h),
    projection(`${p}.mlp.gate_proj.weight`, c.intermediate_size, h),
    projection(`${p}.mlp.up_proj.weight`, c.intermediate_size, h),
    projection(`${p}.mlp.down_proj.weight`, h, c.intermediate_size),
  ];
}

/** Every tensor of the model, in Hugging Face's names and shapes. */
function tensorSpecs(c: LlamaConfigJson): TensorSpec[] {
  const h = c.hidden_size;
  const v = c.vocab_size;
  // The embedding doubles as the output layer when tied, so it gets the logit scale either way.
  const logitStd = LOGIT_GAIN / Math.sqrt(h);
  const specs: TensorSpec[] = [{ name: "model.embed_tokens.weight", shape: [v, h], mean: 0, std: logitStd }];
  for (let i = 0; i < c.num_hidden_layers; i++) specs.push(...layerSpecs(c, i));
  specs.push(norm("model.norm.weight", h));
  if (!c.tie_word_embeddings) specs.push({ name: "lm_head.weight", shape: [v, h], mean: 0, std: logitStd });
  return specs;
}

function randomTensor(spec: TensorSpec, seed: number, dtype: WritableDtype): TensorToWrite {
  const n = spec.shape.reduce((a, b) => a * b, 1);
  const tensorSeed = (fnv1a(spec.name) ^ Math.imul(seed >>> 0, 0x9e3779b1)) >>> 0;
  return { name: spec.name, dtype, shape: spec.shape, data: normalArray(n, spec.mean, spec.std, tensorSeed) };
}

function writeJsonAtomically(file: string, value: unknown): void {
  fs.writeFileSync(`${file}.tmp`, JSON.stringify(value, null, 2) + "\n");
  fs.renameSync(`${file}.tmp`, file);
}

/**
 * Creates (or overwrites) a Hugging Face Llama folder in `dir`: config.json, model.safetensors
 * with weights drawn from `seed`, tokenizer.json and tokenizer_config.json (byte-level, 258
 * tokens). The same options always give byte-identical files.
 */
export function writeRandomLlama(dir: string, options: RandomLlamaOptions = {}): RandomLlamaSummary {
  const config = resolvedConfig(options);
  const dtype = options.dtype ?? "F32";
  const seed = options.seed ?? 0;
  fs.mkdirSync(dir, { recursive: true });
  const tensors = tensorSpecs(config).map((spec) => randomTensor(spec, seed, dtype));
  const weightsFile = path.join(dir, "model.safetensors");
  writeSafetensors(weightsFile, tensors, { format: "pt" });
  writeJsonAtomically(path.join(dir, "config.json"), config);
  const { tokenizerJson, tokenizerConfig } = byteLevelTokenizer({ modelMaxLength: config.max_position_embeddings });
  writeJsonAtomically(path.join(dir, "tokenizer.json"), tokenizerJson);
  writeJsonAtomically(path.join(dir, "tokenizer_config.json"), tokenizerConfig);
  const mlp = tensors.filter((t) => /\.mlp\.(gate|up|down)_proj\.weight$/.test(t.name));
  return {
    dir,
    config,
    parameters: tensors.reduce((n, t) => n + t.data.length, 0),
    mlpParameters: mlp.reduce((n, t) => n + t.data.length, 0),
    tensors: tensors.length,
    bytes: fs.statSync(weightsFile).size,
  };
}
