// The baselines the power figures start from once a config has run (config/power.ts): each
// benchmark's unablated score and chance in the config's newest finished run, per model of the
// run. Read here, above the run folder's layer, and passed down to loadProfile (`baselines`) by
// `bprof validate` and the editor's workspace model.
import type { RunBaselines } from "../config/power";
import { loadRun } from "../report/load";
import { runsOfConfig } from "../results/runs";
import { isGenerationResult, type Results } from "../results/schema";

/** Every benchmark's baseline in a run's results: acc for multiple choice, exact_match for generate_until, per model in the run's order. */
export function baselinesOfResults(results: Results): RunBaselines {
  return {
    runId: results.run_id,
    baselines: results.models.flatMap((model) =>
      model.benchmarks.map((b) =>
        isGenerationResult(b)
          ? { benchmark: b.name, model: model.name, metric: "exact_match" as const, baseline: b.exact_match, chance: b.chance }
          : { benchmark: b.name, model: model.name, metric: "acc" as const, baseline: b.acc, chance: b.chance },
      ),
    ),
  };
}

/**
 * The baselines of the config's newest finished run whose results can be read (a damaged
 * results.json is passed over for the run before it); undefined before any run. `text` is the
 * config's text when the caller has it (its `output` names where the runs are).
 */
export async function newestBaselines(configFile: string, text?: string): Promise<RunBaselines | undefined> {
  const runs = await runsOfConfig(configFile, text).catch(() => []);
  for (const run of runs.filter((r) => r.finished)) {
    const loaded = await loadRun(run.dir).catch(() => undefined);
    if (loaded) return baselinesOfResults(loaded.results);
  }
  return undefined;
}
