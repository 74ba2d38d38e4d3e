// The config's `gpu`: which GPU `device: cuda` is, so that validation can say what each model's job
// needs on it (plan/devicePlan.ts) and refuse a job that cannot fit, before any weight is read.
import type { Problem, ProblemPlace } from "../base/problems";
import type { YamlSource } from "../base/yamlSource";
import type { GpuSpec, ProfileConfig } from "./types";

const GIB = 1024 ** 3;

/** "79.6": bytes in GiB to one decimal. */
function gib(bytes: number): string {
  return (bytes / GIB).toFixed(1);
}

/** A GPU as the plan sees it: its memory and its dense bf16 tensor peak. */
export interface Gpu {
  /** How a line names it: "an H100 (79.6 GiB)", "a GPU of 24 GiB", or the config's own name and its memory. */
  label: string;
  memoryBytes: number;
  /** Dense bf16 matrix-multiply peak with float32 accumulation, FLOP/s. */
  peakFlops: number;
}

/**
 * GPUs the config's `gpu` may name. Memory: the total nvidia-smi reports (MiB). Peak: the
 * vendor's datasheet, dense bf16 tensor FLOP/s with float32 accumulation (PyTorch's bf16 matmul);
 * a GeForce card accumulates in float32 at half its float16-accumulate rate.
 */
export const KNOWN_GPUS: Readonly<Record<string, { name: string; memoryMib: number; bf16Tflops: number }>> = {
  h100: { name: "H100", memoryMib: 81_559, bf16Tflops: 989 },
  h200: { name: "H200", memoryMib: 143_771, bf16Tflops: 989 },
  "a100-80gb": { name: "A100 80GB", memoryMib: 81_920, bf16Tflops: 312 },
  "a100-40gb": { name: "A100 40GB", memoryMib: 40_960, bf16Tflops: 312 },
  l40s: { name: "L40S", memoryMib: 46_068, bf16Tflops: 362 },
  rtx4090: { name: "RTX 4090", memoryMib: 24_564, bf16Tflops: 82.6 },
};

/** The Gpu of a known name (undefined for another), or of the config's figures. */
export function gpuOf(spec: GpuSpec): Gpu | undefined {
  if (typeof spec === "string") {
    const known = Object.hasOwn(KNOWN_GPUS, spec) ? KNOWN_GPUS[spec]! : undefined;
    if (!known) return undefined;
    const memoryBytes = known.memoryMib * 1024 ** 2;
    // every known name is read letter by letter: an H100, an A100, an L40S, an RTX 4090
    return { label: `an ${known.name} (${gib(memoryBytes)} GiB)`, memoryBytes, peakFlops: known.bf16Tflops * 1e12 };
  }
  const memoryBytes = spec.memory_gib * GIB;
  const label = spec.name !== undefined ? `${spec.name} (${gib(memoryBytes)} GiB)` : `a GPU of ${gib(memoryBytes)} GiB`;
  return { label, memoryBytes, peakFlops: spec.bf16_tflops * 1e12 };
}

/** The config's GPU, and where its key is: the job's device-memory refusal points there. */
export interface ResolvedGpu extends Gpu {
  place: ProblemPlace;
}

/** The config's GPU where the runner runs on one; a warning where it runs on the CPU, an error for a name not known. */
export function resolveGpu(config: ProfileConfig, source: YamlSource): { gpu?: ResolvedGpu; problems: Problem[] } {
  if (config.gpu === undefined) return { problems: [] };
  const devices = config.devices ?? [config.device ?? "cpu"];
  if (!devices.some((d) => d.startsWith("cuda")))
    return {
      problems: [
        source.at(
          ["gpu"],
          "config.no-effect",
          "`gpu` has no effect without `device: cuda` (or cuda `devices`): the runner runs on the CPU",
          {
            on: "key",
          },
        ),
      ],
    };
  const gpu = gpuOf(config.gpu);
  if (!gpu)
    return {
      problems: [
        source.at(
          ["gpu"],
          "config.not-allowed",
          `\`${String(config.gpu)}\` is not a GPU bprof knows (${Object.keys(KNOWN_GPUS).join(", ")}): give another as \`{memory_gib, bf16_tflops}\``,
        ),
      ],
    };
  return { gpu: { ...gpu, place: source.place(["gpu"]) }, problems: [] };
}
