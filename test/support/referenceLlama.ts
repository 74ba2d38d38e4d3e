// An independent, deliberately plain float64 forward pass of a Hugging Face Llama folder: the
// yardstick the runner's scores are checked against. Written from the model's definition (not
// from the runner's code), with plain loops, so that an error in one is unlikely to be repeated
// in the other. Only what tiny test models use is supported; anything else is refused.
import * as fs from "fs";
import * as path from "path";
import { readTensorF32 } from "../../src/core/model/safetensors";

interface ReferenceConfig {
  vocab: number;
  hidden: number;
  intermediate: number;
  layers: number;
  heads: number;
  kvHeads: number;
  headDim: number;
  eps: number;
  ropeTheta: number;
  tied: boolean;
}

interface LayerWeights {
  inputNorm: Float64Array;
  q: Float64Array;
  k: Float64Array;
  v: Float64Array;
  o: Float64Array;
  postNorm: Float64Array;
  gate: Float64Array;
  up: Float64Array;
  down: Float64Array;
}

interface ReferenceModel {
  config: ReferenceConfig;
  embed: Float64Array;
  layers: LayerWeights[];
  finalNorm: Float64Array;
  lmHead: Float64Array;
}

function numberField(raw: Record<string, unknown>, key: string, fallback?: number): number {
  const value = raw[key] ?? fallback;
  if (typeof value !== "number" || !Number.isFinite(value)) throw new Error(`config.json: ${key} missing or not a number`);
  return value;
}

function readConfig(modelDir: string): ReferenceConfig {
  const raw = JSON.parse(fs.readFileSync(path.join(modelDir, "config.json"), "utf8")) as Record<string, unknown>;
  // Refuse what this reference does not implement rather than silently computing something else.
  if (raw["rope_scaling"] != null) throw new Error("referenceLlama: rope_scaling is not supported");
  if (raw["attention_bias"] === true || raw["mlp_bias"] === true) throw new Error("referenceLlama: biases are not supported");
  if ((raw["hidden_act"] ?? "silu") !== "silu") throw new Error("referenceLlama: only hidden_act silu is supported");
  const hidden = numberField(raw, "hidden_size");
  const heads = numberField(raw, "num_attention_heads");
  return {
    vocab: numberField(raw, "vocab_size"),
    hidden,
    intermediate: numberField(raw, "intermediate_size"),
    layers: numberField(raw, "num_hidden_layers"),
    heads,
    kvHeads: numberField(raw, "num_key_value_heads", heads),
    headDim: numberField(raw, "head_dim", hidden / heads),
    eps: numberField(raw, "rms_norm_eps", 1e-6),
    ropeTheta: numberField(raw, "rope_theta", 10000),
    tied: raw["tie_word_embeddings"] === true,
  };
}

function readWeight(file: string, name: string, shape: number[]): Float64Array {
  const t = readTensorF32(file, name);
  if (t.shape.length !== shape.length || t.shape.some((d, i) => d !== shape[i])) {
    throw new Error(`referenceLlama: ${name} has shape [${t.shape.join(", ")}], expected [${shape.join(", ")}]`);
  }
  return Float64Array.from(t.data);
}

function loadModel(modelDir: string): ReferenceModel {
  const c = readConfig(modelDir);
  const file = path.join(modelDir, "model.safetensors");
  const q = c.heads * c.headDim;
  const kv = c.kvHeads * c.headDim;
  const layers: LayerWeights[] = [];
  for (let i = 0; i < c.layers; i++) {
    const p = `model.layers.${i}`;
    layers.push({
      inputNorm: readWeight(file, `${p}.input_layernorm.weight`, [c.hidden]),
      q: readWeight(file, `${p}.self_attn.q_proj.weight`, [q, c.hidden]),
      k: readWeight(file, `${p}.self_attn.k_proj.weight`, [kv, c.hidden]),
      v: readWeight(file, `${p}.self_attn.v_proj.weight`, [kv, c.hidden]),
      o: readWeight(file, `${p}.self_attn.o_proj.weight`, [c.hidden, q]),
      postNorm: readWeight(file, `${p}.post_attention_layernorm.weight`, [c.hidden]),
      gate: readWeight(file, `${p}.mlp.gate_proj.weight`, [c.intermediate, c.hidden]),
      up: readWeight(file, `${p}.mlp.up_proj.weight`, [c.intermediate, c.hidden]),
      down: readWeight(file, `${p}.mlp.down_proj.weight`, [c.hidden, c.intermediate]),
    });
  }
  const embed = readWeight(file, "model.embed_tokens.weight", [c.vocab, c.hidden]);
  return {
    config: c,
    embed,
    layers,
    finalNorm: readWeight(file, "model.norm.weight", [c.hidden]),
    lmHead: c.tied ? embed : readWeight(file, "lm_head.weight", [c.vocab, c.hidden]),
  };
}

// Tests score many choices against the same folder; reload only when the weights change.
const cache = new Map<string, { stamp: string; model: ReferenceModel }>();

function cachedModel(modelDir: string): ReferenceModel {
  const key = path.resolve(modelDir);
  const stat = (f: string): string => {
    const s = fs.statSync(path.join(key, f));
    return `${s.mtimeMs}:${s.size}:${s.ino}`;
  };
  const stamp = `${stat("config.json")}|${stat("model.safetensors")}`;
  const hit = cache.get(key);
  if (hit !== undefined && hit.stamp === stamp) return hit.model;
  const model = loadModel(key);
  cache.set(key, { stamp, model });
  return model;
}

// ---------------------------------------------------------------------------------------------
// building blocks

/** y = W x for W stored row-major as [rows, x.length] (PyTorch's Linear layout). */
function matVec(w: Float64Array, x: Float64Array, rows: number): Float64Array {
  const cols = x.length;
  const y = new Float64Array(rows);
  for (let r = 0; r < rows; r++) {
    let sum = 0;
    for (let c = 0; c < cols; c++) sum += w[r * cols + c]! * x[c]!;
    y[r] = sum;
  }
  return y;
}

function rmsNorm(x: Float64Array, weight: Float64Array, eps: number): Float64Array {
  let sumSquares = 0;
  for (let i = 0; i < x.length; i++) sumSquares += x[i]! * x[i]!;
  const scale = 1 / Math.sqrt(sumSquares / x.length + eps);
  const y = new Float64Array(x.length);
  for (let i = 0; i < x.length; i++) y[i] = x[i]! * scale * weight[i]!;
  return y;
}

/** Rotary embedding of every head in `vec` (heads * headDim) at `pos`, in place (rotate_half). */
function applyRope(vec: Float64Array, heads: number, headDim: number, pos: number, theta: number): void {
  const half = headDim / 2;
  for (let h = 0; h < heads; h++) {
    const base = h * headDim;
    for (let i = 0; i < half; i++) {
      const invFreq = 1 / Math.pow(theta, (2 * i) / headDim);
      const angle = pos * invFreq;
      const cos = Math.cos(angle);
      const sin = Math.sin(angle);
      const a = vec[base + i]!;
      const b = vec[base + i + half]!;
      vec[base + i] = a * cos - b * sin;
      vec[base + i + half] = b * cos + a * sin;
    }
  }
}

function silu(x: number): number {
  return x / (1 + Math.exp(-x));
}

function addInPlace(x: Float64Array, y: Float64Array): void {
  for (let i = 0; i < x.length; i++) x[i]! += y[i]!;
}

/** Causal grouped-query self-attention of one layer over all positions; returns o_proj output. */
function attention(c: ReferenceConfig, w: LayerWeights, normed: Float64Array[]): Float64Array[] {
  const T = normed.length;
  const hd = c.headDim;
  const qs = normed.map((x, t) => {
    const q = matVec(w.q, x, c.heads * hd);
    applyRope(q, c.heads, hd, t, c.ropeTheta);
    return q;
  });
  const ks = normed.map((x, t) => {
    const k = matVec(w.k, x, c.kvHeads * hd);
    applyRope(k, c.kvHeads, hd, t, c.ropeTheta);
    return k;
  });
  const vs = normed.map((x) => matVec(w.v, x, c.kvHeads * hd));
  const groupSize = c.heads / c.kvHeads;
  const scale = 1 / Math.sqrt(hd);
  const outputs: Float64Array[] = [];
  for (let t = 0; t < T; t++) {
    const concat = new Float64Array(c.heads * hd);
    for (let h = 0; h < c.heads; h++) {
      const kvh = Math.floor(h / groupSize);
      const scores = new Float64Array(t + 1);
      let max = -Infinity;
      for (let j = 0; j <= t; j++) {
        let dot = 0;
        for (let d = 0; d < hd; d++) dot += qs[t]![h * hd + d]! * ks[j]![kvh * hd + d]!;
        scores[j] = dot * scale;
        max = Math.max(max, scores[j]!);
      }
      let total = 0;
      for (let j = 0; j <= t; j++) {
        scores[j] = Math.exp(scores[j]! - max);
        total += scores[j]!;
      }
      for (let j = 0; j <= t; j++) {
        const p = scores[j]! / total;
        for (let d = 0; d < hd; d++) concat[h * hd + d]! += p * vs[j]![kvh * hd + d]!;
      }
    }
    outputs.push(matVec(w.o, concat, c.hidden));
  }
  return outputs;
}

function mlp(c: ReferenceConfig, w: LayerWeights, x: Float64Array): Float64Array {
  const gate = matVec(w.gate, x, c.intermediate);
  const up = matVec(w.up, x, c.intermediate);
  const act = new Float64Array(c.intermediate);
  for (let i = 0; i < act.length; i++) act[i] = silu(gate[i]!) * up[i]!;
  return matVec(w.down, act, c.hidden);
}

function forward(model: ReferenceModel, tokens: readonly number[]): number[][] {
  const c = model.config;
  const hidden = tokens.map((tok) => {
    if (!Number.isInteger(tok) || tok < 0 || tok >= c.vocab) throw new Error(`referenceLlama: token ${tok} out of range`);
    return model.embed.slice(tok * c.hidden, (tok + 1) * c.hidden);
  });
  for (const w of model.layers) {
    const attn = attention(
      c,
      w,
      hidden.map((x) => rmsNorm(x, w.inputNorm, c.eps)),
    );
    hidden.forEach((x, t) => addInPlace(x, attn[t]!));
    hidden.forEach((x) => addInPlace(x, mlp(c, w, rmsNorm(x, w.postNorm, c.eps))));
  }
  return hidden.map((x) => Array.from(matVec(model.lmHead, rmsNorm(x, model.finalNorm, c.eps), c.vocab)));
}

// ---------------------------------------------------------------------------------------------
// public API

/** Logits [tokens.length][vocab] of the model in `modelDir`, computed in float64. */
export function referenceLogits(modelDir: string, tokens: readonly number[]): number[][] {
  if (tokens.length === 0) throw new Error("referenceLlama: no tokens");
  return forward(cachedModel(modelDir), tokens);
}

/** log_softmax of one row of logits, in float64. */
export function logSoftmax(row: readonly number[]): number[] {
  const max = Math.max(...row);
  let total = 0;
  for (const v of row) total += Math.exp(v - max);
  const logTotal = max + Math.log(total);
  return row.map((v) => v - logTotal);
}

/** Index of the largest value; the first one on ties, as torch.argmax. */
function argmax(row: readonly number[]): number {
  let best = 0;
  for (let i = 1; i < row.length; i++) if (row[i]! > row[best]!) best = i;
  return best;
}

/**
 * The score of PROTOCOL.md (lm-eval's loglikelihood): the model reads context ++ continuation
 * without its last token; logprob sums log_softmax(logits[len(context) - 1 + j])[continuation[j]],
 * greedy is true when every continuation token is the argmax of its row.
 */
export function referenceChoiceLogprob(
  modelDir: string,
  context: readonly number[],
  continuation: readonly number[],
): { logprob: number; greedy: boolean } {
  if (context.length === 0) throw new Error("referenceLlama: context must have at least one token");
  if (continuation.length === 0) throw new Error("referenceLlama: continuation must have at least one token");
  const input = [...context, ...continuation].slice(0, -1);
  const logits = referenceLogits(modelDir, input);
  let logprob = 0;
  let greedy = true;
  continuation.forEach((tok, j) => {
    const row = logits[context.length - 1 + j]!;
    logprob += logSoftmax(row)[tok]!;
    if (argmax(row) !== tok) greedy = false;
  });
  return { logprob, greedy };
}
