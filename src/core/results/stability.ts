// A run's measurement of each ability's ranking stability (split-half Jaccard), read from its
// results.json for the editor's checks of the diagnostic datasets (diagnostic/health.ts judges it).
import type { MeasuredStability } from "../diagnostic/health";
import type { Results } from "./schema";

/** The ability's measurement in a run's results: its first model's, at the largest k; undefined where not measured. */
export function measuredStability(results: Results, ability: string): MeasuredStability | undefined {
  for (const model of results.models) {
    const s = model.profile?.stability?.find((x) => x.ability === ability);
    const widest = s?.by_k.reduce<(typeof s.by_k)[number] | undefined>(
      (best, at) => (best === undefined || at.k > best.k ? at : best),
      undefined,
    );
    if (s && widest) return { runId: results.run_id, model: model.name, k: widest.k, jaccard: widest.jaccard, halves: s.halves };
  }
  return undefined;
}

/** Every ability a run measured, by name (measuredStability of each). */
export function measuredStabilities(results: Results): Map<string, MeasuredStability> {
  const out = new Map<string, MeasuredStability>();
  for (const model of results.models)
    for (const s of model.profile?.stability ?? []) {
      const measured = out.has(s.ability) ? undefined : measuredStability(results, s.ability);
      if (measured) out.set(s.ability, measured);
    }
  return out;
}
