// The config's `gpu`: which GPU `device: cuda` is, so that validation can say what each model's job
// needs on it (plan/devicePlan.ts) and refuse a job that cannot fit, before any weight is read.
import type { Problem, ProblemPlace } from "../base/problems";
import type { YamlSource } from "../base/yamlSource";
import { gpuOf, KNOWN_GPUS, type Gpu } from "../plan/devicePlan";
import type { ProfileConfig } from "./types";

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
