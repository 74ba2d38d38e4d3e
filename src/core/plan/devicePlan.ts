// What a model's job will need on a GPU, said before the run (docs/performance.md, "Memory and
// time said in advance"): its peak device memory, the importance batch that fits, and about how
// long the importance pass and the scorings take at the GPU's bf16 matrix-multiply peak. Pure
// arithmetic on config.json's sizes (model/parameters.ts) and the compiled job; nothing is run.
import type { ModelShape } from "../model/parameters";
import { randomVariants, scoringWork } from "./shards";
import type { ProfileJob, ScoreJob } from "./job";
import { formatDuration } from "./estimate";
import type { Gpu } from "../config/gpu";

const GIB = 1024 ** 3;

/**
 * The model's constants, all in one place. They are calibrated against the runner's measured peaks
 * and times on a GPU (docs/performance.md, "Memory and time said in advance"); change them there
 * and here together.
 */
export const DEVICE_MODEL = {
  /**
   * Activations autograd keeps per token and layer for the backward pass, in hidden-sized vectors
   * of the model's dtype: the residual stream, the two RMSNorms' inputs and outputs, q, k, v, the
   * attention output and o_proj's input. With the factors below and the logits: 8.06 MiB a token
   * of 150-token sequences of Llama-3.1-8B's shape, where an H200 measured 8.2 (a batch of 32
   * sequences: 76,071 MiB in use, weights and sums 36,820 of them, the CUDA context the rest;
   * docs/performance.md).
   */
  activationHiddenFactor: 11,
  /** ... and in intermediate-sized vectors: gate, up, SiLU(gate) and its product with up (down_proj's input). */
  activationMlpFactor: 4,
  /**
   * ... and per head and key position of the sequence: the attention scores and their softmax,
   * kept whole because the runner's attention is not a fused kernel.
   */
  activationAttentionFactor: 2,
  /** Bytes per logit beyond the model's dtype: the float32 log_softmax (4) and its gradient (4). */
  logitExtraBytes: 8,
  /** The CUDA context, cuBLAS workspaces and the allocator's slack, whatever the job. */
  reserveBytes: 1 * GIB,
  /**
   * Share of the GPU's datasheet bf16 peak the importance pass's forward and backward passes reach:
   * 434-455 TFLOP/s at batches of 16-32 sequences of 150 tokens on an H200 (989 on the datasheet).
   */
  importanceMfu: 0.45,
  /** Share of the datasheet peak scoring with the KV cache reaches: 440 TFLOP/s on the same H200. */
  scoringMfu: 0.44,
  /**
   * Host bytes per second of r = -theta x g brought from the GPU, 4 bytes a candidate per ability:
   * 22.5 GB in 16 s on the H200's host (its first touch of fresh host memory, not the bus).
   */
  riseBytesPerSecond: 1.4e9,
  /** Candidates ranked per second on the host, per rule and selection: 5.6 billion in 22 s on 16 threads. */
  rankedPerSecond: 2.5e8,
} as const;

/** The importance batch sizes tried, largest first, when the config leaves `ablation.batch_size` out. */
export const BATCH_CHOICES = [64, 32, 16, 8, 4, 2, 1] as const;

/** What a job asks of the GPU, from the compiled job. */
export interface DeviceWork {
  dtype: string;
  /** Per ability, its diagnostic sequences' token counts (empty: a score job). */
  abilities: number[][];
  /** Tokens one scoring of every item reads (plan/shards.ts's scoringWork). */
  scoredTokens: number;
  /** Variants, each scoring every item once more after the baseline. */
  variants: number;
  stability: boolean;
  /** The widest candidate set of the job. */
  candidates: "mlp" | "all";
  frontRemoval: number;
  backRemoval: number;
  batchSize: number;
  /** Rankings of each ability's importance: its rules times its ranked selections (top, bottom). */
  rankings: number;
}

export interface DevicePlan {
  batchSize: number;
  bytes: {
    weights: number;
    /** The float32 gradient sums of the candidates (two with `stability`), and `all`'s attention .grad of one batch. */
    sums: number;
    activations: number;
    reserve: number;
    peak: number;
  };
  flops: { importance: number; scoring: number };
  /** `host`: each ability's r brought from the GPU and ranked, on the host (not FLOPs: bytes and passes over them). */
  seconds: { importance: number; scoring: number; host: number; total: number };
  fits: boolean;
}

/** Bytes per element of the model's dtype. */
export function dtypeBytes(dtype: string): number {
  return dtype === "float32" ? 4 : 2;
}

/** Weights a token multiplies by: every layer's (a mixture's routed experts only) and lm_head, not the embedding lookup. */
export function matmulParameters(shape: ModelShape): number {
  const { count } = shape;
  const lookup = shape.tied ? 0 : shape.vocab * shape.hidden;
  return count.total - lookup - count.layers * (count.mlpPerLayer - shape.activeMlpPerLayer);
}

/** Candidate weights: all of them (their float32 sums) and those one token's gradient reaches (its FLOPs). */
function candidates(shape: ModelShape, work: DeviceWork): { all: number; active: number; attention: number } {
  const layers = Math.max(0, shape.count.layers - work.frontRemoval - work.backRemoval);
  const attention = work.candidates === "all" ? layers * shape.count.attentionPerLayer : 0;
  return { all: layers * shape.count.mlpPerLayer + attention, active: layers * shape.activeMlpPerLayer + attention, attention };
}

/** Bytes of one importance batch's saved activations and logits: `batch` sequences of the longest diagnostic sequence. */
export function activationBytes(shape: ModelShape, work: DeviceWork, batch: number): number {
  const longest = Math.max(0, ...work.abilities.flat());
  if (longest === 0) return 0;
  const m = DEVICE_MODEL;
  const bytes = dtypeBytes(work.dtype);
  const perTokenLayer =
    (m.activationHiddenFactor * shape.hidden +
      m.activationMlpFactor * shape.activeIntermediate +
      m.activationAttentionFactor * shape.heads * longest) *
    bytes;
  const logits = shape.vocab * (bytes + m.logitExtraBytes);
  return batch * longest * (shape.count.layers * perTokenLayer + logits);
}

/**
 * The job's plan on `gpu` at `batch` sequences per importance batch: peak bytes = weights +
 * float32 sums + one batch's activations + the reserve; FLOPs: per diagnostic token a forward
 * (2 x the matmul weights), the activations' gradients (2 x the same) and the candidates' weight
 * gradients (2 x the candidates a token reaches); per scored token 2 x the matmul weights, once for
 * the baseline and once per variant. Attention's own products (q x k, p x v) are left out: under
 * 1% of a layer's FLOPs at the diagnostic items' length. Seconds at the GPU's peak times DEVICE_MODEL's MFU.
 */
export function devicePlan(shape: ModelShape, work: DeviceWork, gpu: Gpu, batch = work.batchSize): DevicePlan {
  const m = DEVICE_MODEL;
  const cand = candidates(shape, work);
  const profiles = work.abilities.length > 0;
  const weights = shape.count.total * dtypeBytes(work.dtype);
  const sums = profiles ? 4 * cand.all * (work.stability ? 2 : 1) + cand.attention * dtypeBytes(work.dtype) : 0;
  const activations = profiles ? activationBytes(shape, work, batch) : 0;
  const peak = weights + sums + activations + m.reserveBytes;
  const matmul = matmulParameters(shape);
  const diagnosticTokens = work.abilities.flat().reduce((n, t) => n + t, 0);
  const importance = diagnosticTokens * (4 * matmul + 2 * cand.active);
  const scoring = 2 * matmul * work.scoredTokens * (1 + work.variants);
  const abilities = work.abilities.length;
  const seconds = {
    importance: importance / (gpu.peakFlops * m.importanceMfu),
    scoring: scoring / (gpu.peakFlops * m.scoringMfu),
    host: abilities * ((4 * cand.all) / m.riseBytesPerSecond + (work.rankings * cand.all) / m.rankedPerSecond),
  };
  return {
    batchSize: batch,
    bytes: { weights, sums, activations, reserve: m.reserveBytes, peak },
    flops: { importance, scoring },
    seconds: { ...seconds, total: seconds.importance + seconds.scoring + seconds.host },
    fits: peak <= gpu.memoryBytes,
  };
}

/** The largest of BATCH_CHOICES whose peak fits `gpu`; undefined when not even one sequence does. */
export function fittingBatchSize(shape: ModelShape, work: DeviceWork, gpu: Gpu): number | undefined {
  return BATCH_CHOICES.find((batch) => devicePlan(shape, work, gpu, batch).fits);
}

/** The device work of a compiled job. */
export function jobDeviceWork(job: ProfileJob | ScoreJob): DeviceWork {
  const scoredTokens = scoringWork(job as ProfileJob);
  if (job.subcommand !== "profile")
    return {
      dtype: job.model.dtype,
      abilities: [],
      scoredTokens,
      variants: 0,
      stability: false,
      candidates: "mlp",
      frontRemoval: 0,
      backRemoval: 0,
      batchSize: 1,
      rankings: 0,
    };
  const a = job.ablation;
  const methods = Array.isArray(a.method) ? a.method.length : 1;
  const sets = a.candidates === undefined ? ["mlp" as const] : Array.isArray(a.candidates) ? a.candidates : [a.candidates];
  // each candidate set ranked by its own rules (an entry's `method`), else by every rule
  const rules = sets.reduce((n, s) => n + (typeof s === "string" ? methods : s.method.length), 0);
  const ranked = a.selections.filter((s) => s !== "random").length;
  // the random control: per k, candidate set and draw
  const random = randomVariants(job);
  const pairs = (a.pairs?.length ?? 0) * a.k.length * methods;
  return {
    dtype: job.model.dtype,
    abilities: job.abilities.map((ability) => ability.sequences.map((s) => s.length)),
    scoredTokens,
    variants: job.abilities.length * rules * ranked * a.k.length + random + pairs,
    stability: a.stability === true,
    candidates: sets.some((s) => (typeof s === "string" ? s : s.set) === "all") ? "all" : "mlp",
    frontRemoval: a.front_removal,
    backRemoval: a.back_removal,
    batchSize: a.batch_size,
    rankings: rules * Math.max(1, ranked),
  };
}

/** "41.2": bytes in GiB to one decimal. */
function gib(bytes: number): string {
  return (bytes / GIB).toFixed(1);
}

/** "peak device memory about 41.2 GiB (weights 15.0, importance sums 21.0, activations 4.1 at batch 16, reserve 1.0)". */
export function describePeak(plan: DevicePlan): string {
  const { bytes } = plan;
  return (
    `peak device memory about ${gib(bytes.peak)} GiB (weights ${gib(bytes.weights)}` +
    (bytes.sums > 0 ? `, importance sums ${gib(bytes.sums)}, activations ${gib(bytes.activations)} at batch ${plan.batchSize}` : "") +
    `, reserve ${gib(bytes.reserve)})`
  );
}

/** "about 27 min 30 s (importance 4 min 38 s, scoring 16 min 30 s, ranking on the host 6 min 26 s)". */
export function describeTime(plan: DevicePlan): string {
  const { seconds } = plan;
  const parts = `importance ${formatDuration(seconds.importance)}, scoring ${formatDuration(seconds.scoring)}`;
  return (
    `about ${formatDuration(seconds.total)}` +
    (seconds.importance > 0 ? ` (${parts}, ranking on the host ${formatDuration(seconds.host)})` : "")
  );
}

/** "on an H100 (79.6 GiB): peak device memory about ...; about 23 min ...": a model's line in `bprof validate`, after its name. */
export function describeDevicePlan(plan: DevicePlan, gpu: Gpu): string {
  return `on ${gpu.label}: ${describePeak(plan)}; ${describeTime(plan)}`;
}
