// A model's job on a GPU, said before the run (plan/devicePlan.ts): the weights and float32 sums
// exactly, the activations by the formula the docs state, the batch that fits, the refusal, and
// the FLOPs of the paper's main table on a model of Llama-3.1-8B's shape.
import assert from "node:assert/strict";
import { test } from "node:test";
import schema from "../../../src/core/config/schema.json";
import { modelShape, type ModelShape } from "../../../src/core/model/parameters";
import {
  activationBytes,
  BATCH_CHOICES,
  describeDevicePlan,
  DEVICE_MODEL,
  devicePlan,
  fittingBatchSize,
  jobDeviceWork,
  matmulParameters,
  type DeviceWork,
} from "../../../src/core/plan/devicePlan";
import { gpuOf, KNOWN_GPUS, type Gpu } from "../../../src/core/config/gpu";
import type { ProfileJob } from "../../../src/core/plan/job";

const GIB = 1024 ** 3;

/** config.json of Llama-3.1-8B (the sizes that count). */
const LLAMA_8B = {
  model_type: "llama",
  vocab_size: 128256,
  hidden_size: 4096,
  intermediate_size: 14336,
  num_hidden_layers: 32,
  num_attention_heads: 32,
  num_key_value_heads: 8,
  tie_word_embeddings: false,
};

function llama8b(): ModelShape {
  const shape = modelShape(LLAMA_8B);
  assert.ok(shape);
  return shape;
}

/** The paper's main table: 10 abilities x 2,000 diagnostic items of 150 tokens, k = 1.024%, top + random. */
function paperWork(overrides: Partial<DeviceWork> = {}): DeviceWork {
  return {
    dtype: "bfloat16",
    abilities: Array.from({ length: 10 }, () => Array<number>(2000).fill(150)),
    scoredTokens: 10 * 1000 * 240,
    variants: 10 + 1,
    stability: false,
    candidates: "mlp",
    frontRemoval: 0,
    backRemoval: 0,
    batchSize: 8,
    rankings: 1,
    ...overrides,
  };
}

const H100 = gpuOf("h100")!;
const GPU_24: Gpu = gpuOf({ memory_gib: 24, bf16_tflops: 165 })!;

/** The activations of one batch, restated from docs/performance.md's formula. */
function activationsByHand(batch: number, longest: number, dtypeBytes: number): number {
  const m = DEVICE_MODEL;
  const perLayer =
    (m.activationHiddenFactor * 4096 + m.activationMlpFactor * 14336 + m.activationAttentionFactor * 32 * longest) * dtypeBytes;
  return batch * longest * (32 * perLayer + 128256 * (dtypeBytes + m.logitExtraBytes));
}

test("Llama-3.1-8B's shape: P, the MLP candidates and the weights a token multiplies by", () => {
  const shape = llama8b();
  assert.equal(shape.count.total, 8_030_261_248);
  assert.equal(shape.count.layers * shape.count.mlpPerLayer, 5_637_144_576); // 32 x 3 x 4096 x 14336
  // not the input embedding's lookup: P less 128256 x 4096
  assert.equal(matmulParameters(shape), 8_030_261_248 - 525_336_576);
});

test("the peak: bfloat16 weights, float32 sums of the MLP candidates (twice with stability), a batch's activations, the reserve", () => {
  const shape = llama8b();
  const plan = devicePlan(shape, paperWork({ batchSize: 16 }), H100);
  assert.equal(plan.bytes.weights, 16_060_522_496);
  assert.equal(plan.bytes.sums, 22_548_578_304);
  assert.equal(plan.bytes.activations, activationsByHand(16, 150, 2));
  assert.equal(plan.bytes.reserve, DEVICE_MODEL.reserveBytes);
  assert.equal(plan.bytes.peak, 16_060_522_496 + 22_548_578_304 + activationsByHand(16, 150, 2) + DEVICE_MODEL.reserveBytes);
  assert.equal(devicePlan(shape, paperWork({ stability: true }), H100).bytes.sums, 45_097_156_608);
  // float32 weights take 4 bytes each, and so do their activations
  const f32 = devicePlan(shape, paperWork({ dtype: "float32" }), H100, 2);
  assert.equal(f32.bytes.weights, 32_121_044_992);
  assert.equal(f32.bytes.activations, activationsByHand(2, 150, 4));
  // the longest sequence sets a batch's length, wherever it is
  const longer = paperWork();
  longer.abilities[3]![1234] = 400;
  assert.equal(activationBytes(shape, longer, 4), activationsByHand(4, 400, 2));
  // front and back removal leave layers out of the candidates
  assert.equal(devicePlan(shape, paperWork({ frontRemoval: 2, backRemoval: 2 }), H100).bytes.sums, 4 * 28 * 176_160_768);
  // all: the attention's weights are candidates too, and their bfloat16 .grad of a batch
  const all = devicePlan(shape, paperWork({ candidates: "all" }), H100);
  assert.equal(all.bytes.sums, 4 * 32 * (176_160_768 + 41_943_040) + 2 * 32 * 41_943_040);
});

test("the batch: the largest that fits an H100; a 24 GiB GPU holds not even the weights and sums, and is refused", () => {
  const shape = llama8b();
  const fixed = 16_060_522_496 + 22_548_578_304 + DEVICE_MODEL.reserveBytes;
  const expected = (memory: number, extra = 0) => BATCH_CHOICES.find((b) => fixed + extra + activationsByHand(b, 150, 2) <= memory);
  const onH100 = fittingBatchSize(shape, paperWork(), H100);
  assert.ok(onH100 !== undefined && onH100 >= 8, `an 8B model's importance pass fits an H100 at batch 8 or more (got ${onH100})`);
  assert.equal(onH100, expected(H100.memoryBytes));
  assert.equal(devicePlan(shape, paperWork(), H100, onH100).fits, true);
  const next = BATCH_CHOICES[BATCH_CHOICES.indexOf(onH100 as (typeof BATCH_CHOICES)[number]) - 1];
  if (next !== undefined) assert.equal(devicePlan(shape, paperWork(), H100, next).fits, false, "the next larger batch would not fit");
  // stability's second sums take room from the activations
  const withStability = fittingBatchSize(shape, paperWork({ stability: true }), H100);
  assert.equal(withStability, expected(H100.memoryBytes, 22_548_578_304));
  assert.ok(withStability! < onH100);
  // the H200's 141 GB take a larger batch
  assert.ok(fittingBatchSize(shape, paperWork(), gpuOf("h200")!)! > onH100);
  // 24 GiB: the weights and sums alone are 38.6 GB
  assert.equal(fittingBatchSize(shape, paperWork(), GPU_24), undefined);
  const refused = devicePlan(shape, paperWork(), GPU_24, 1);
  assert.equal(refused.fits, false);
  assert.ok(refused.bytes.peak > 24 * GIB);
  // a score job holds no sums and no importance batch: the weights fit
  assert.equal(devicePlan(shape, paperWork({ abilities: [] }), GPU_24).fits, true);
});

test("the time: importance and scoring FLOPs of the paper's main table, at the GPU's peak times each MFU", () => {
  const shape = llama8b();
  const plan = devicePlan(shape, paperWork(), H100);
  const matmul = 8_030_261_248 - 525_336_576;
  // per diagnostic token: forward 2 x matmul, activation gradients 2 x matmul, MLP weight gradients 2 x candidates
  assert.equal(plan.flops.importance, 3_000_000 * (4 * matmul + 2 * 5_637_144_576));
  assert.equal(plan.flops.importance, 3_000_000 * 41_293_987_840);
  // per scored token 2 x matmul, the baseline and 11 variants
  assert.equal(plan.flops.scoring, 2 * matmul * 2_400_000 * 12);
  assert.equal(plan.seconds.importance, plan.flops.importance / (989e12 * DEVICE_MODEL.importanceMfu));
  assert.equal(plan.seconds.scoring, plan.flops.scoring / (989e12 * DEVICE_MODEL.scoringMfu));
  // per ability, r brought to the host (4 bytes a candidate) and ranked once (one rule, top)
  const host = 10 * ((4 * 5_637_144_576) / DEVICE_MODEL.riseBytesPerSecond + 5_637_144_576 / DEVICE_MODEL.rankedPerSecond);
  assert.ok(Math.abs(plan.seconds.host - host) < 1e-6);
  assert.equal(plan.seconds.total, plan.seconds.importance + plan.seconds.scoring + plan.seconds.host);
  // with the H200's measured rates, the paper's main table takes 20 to 30 minutes on an H100
  assert.ok(plan.seconds.total > 20 * 60 && plan.seconds.total < 30 * 60, `${plan.seconds.total} s`);
  // an A100 computes 989 / 312 times slower; the host's share is the same
  const a100 = devicePlan(shape, paperWork(), gpuOf("a100-80gb")!);
  const device = (p: typeof plan) => p.seconds.importance + p.seconds.scoring;
  assert.ok(Math.abs(device(a100) / device(plan) - 989 / 312) < 1e-9);
  assert.equal(a100.seconds.host, plan.seconds.host);
});

test("the line validate prints", () => {
  const plan = devicePlan(llama8b(), paperWork({ batchSize: 16 }), H100);
  const line = describeDevicePlan(plan, H100);
  assert.match(
    line,
    /^on an H100 \(79\.6 GiB\): peak device memory about \d+\.\d GiB \(weights 15\.0, importance sums 21\.0, activations \d+\.\d at batch 16, reserve 1\.0\); about \d+ (min|h) .*\(importance .*, scoring .*, ranking on the host .*\)$/,
  );
  assert.equal(gpuOf({ memory_gib: 48, bf16_tflops: 200, name: "RTX 6000 Ada" })!.label, "RTX 6000 Ada (48.0 GiB)");
  assert.equal(gpuOf({ memory_gib: 24, bf16_tflops: 165 })!.label, "a GPU of 24.0 GiB");
  assert.equal(gpuOf("h900"), undefined);
});

test("a mixture of experts: every expert's sums, the routed experts' FLOPs and activations", () => {
  const raw = { ...LLAMA_8B, model_type: "mixtral", num_local_experts: 8, num_experts_per_tok: 2 };
  const shape = modelShape(raw)!;
  assert.equal(shape.count.mlpPerLayer, 8 * 3 * 4096 * 14336);
  assert.equal(shape.activeMlpPerLayer, 2 * 3 * 4096 * 14336 + 8 * 4096);
  assert.equal(shape.activeIntermediate, 2 * 14336);
  const plan = devicePlan(shape, paperWork(), gpuOf("h200")!);
  assert.equal(plan.bytes.sums, 4 * 32 * 8 * 3 * 4096 * 14336);
  assert.equal(matmulParameters(shape), shape.count.total - 525_336_576 - 32 * (shape.count.mlpPerLayer - shape.activeMlpPerLayer));
});

test("a compiled job's work: its diagnostic tokens, scored tokens and variants", () => {
  const job: ProfileJob = {
    protocol: 1,
    subcommand: "profile",
    model: { path: "/m", dtype: "bfloat16" },
    device: "cuda",
    items: [
      { id: "b/0", context: [1, 2, 3, 4], choices: [[5, 6], [7]] },
      { id: "g/0", context: [1, 2], generate: { max_tokens: 5, stop: [] } },
    ],
    abilities: [
      {
        id: "a",
        sequences: [
          [1, 2, 3],
          [1, 2],
        ],
      },
      { id: "b", sequences: [[1, 2, 3, 4, 5]] },
    ],
    ablation: {
      k: [0.001, 0.01],
      selections: ["top", "bottom", "random"],
      method: ["paper", "signed"],
      front_removal: 1,
      back_removal: 0,
      batch_size: 4,
      seed: 1,
      stability: true,
      pairs: [["a", "b"]],
    },
  };
  const work = jobDeviceWork(job);
  assert.deepEqual(work.abilities, [[3, 2], [5]]);
  // 4 + (2 - 1) + (1 - 1) = 5 for the choices, 2 + 5 for the generation
  assert.equal(work.scoredTokens, 12);
  // 2 abilities x 2 rules x 2 ranked selections x 2 k, the random control's 2 k, the pair's 2 k x 2 rules
  assert.equal(work.variants, 16 + 2 + 4);
  assert.equal(work.stability, true);
  assert.equal(work.batchSize, 4);
  assert.equal(work.frontRemoval, 1);
  assert.equal(work.candidates, "mlp");
  const sets = jobDeviceWork({ ...job, ablation: { ...job.ablation, candidates: ["mlp", { set: "all", method: ["paper"] }] } });
  // (mlp under 2 rules + all under 1) x 2 ranked x 2 k per ability; a random control per set
  assert.equal(sets.variants, 2 * 3 * 2 * 2 + 2 * 2 + 4);
  assert.equal(sets.candidates, "all");
  // random_draws: the random control's variants per k and set, each draw
  const drawn = jobDeviceWork({ ...job, ablation: { ...job.ablation, random_draws: 5 } });
  assert.equal(drawn.variants, 16 + 2 * 5 + 4);
});

test("the config schema names exactly the known GPUs", () => {
  const names = schema.properties.gpu.anyOf[0] as { enum?: string[] };
  assert.deepEqual(names.enum, Object.keys(KNOWN_GPUS));
});
