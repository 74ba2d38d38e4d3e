// The stars of a profile, set once every cell has its p-value (docs/method.md, "Which stars to
// trust"): per table, one model's profile (a rule and candidate set) at one k under one metric,
// the cells' p adjusted together (analysis/multipleComparisons.ts) and a cell starred when its q
// is below the config's threshold. Three kinds of table are corrected apart, as they are shown
// apart: the AIS cells (every ability row, the random control's first draw and the groups), the
// specificity cells, and the pairs' interference cells.
//
// Before the stars, saturation: a cell whose ablated score is at chance (at or below it, or so
// close that its AIS interval reaches 1) cannot fall any further, so its AIS sits at its ceiling
// whatever the ablation did beyond that. It is marked, and keeps its star: the ablation did move
// the benchmark. What is a difference of such cells (a top cell's specificity against a saturated
// control, a pair's interference when the pair or either ability alone is saturated) is not
// defined: it would only say that a score cannot fall below chance twice.
import { adjustedPValues, type Correction } from "../analysis/multipleComparisons";
import { ALL_METRICS, CHANCE_TOLERANCE, type Metric } from "../analysis/ais";
import type { CellMetric, ModelProfile, PairCell, ProfileStats, Specificity } from "./schema";

export interface StatsSettings {
  correction: Correction;
  threshold: number;
  minEffect: number;
}

/** What a saturated difference says instead of a number. */
export const SATURATED_REASON = "saturated: not defined (a score it is made of is at chance)";

/** Marks saturation, then sets every cell's q and star in `profile` (in place) and records how; the profile. */
export function withStars(profile: ModelProfile, stats: StatsSettings): ModelProfile {
  for (const k of profile.k) {
    const variants = profile.variants.filter((v) => v.k === k);
    for (const metric of ALL_METRICS) {
      markSaturation(profile, k, metric);
      const cells = variants.flatMap((v) => [...v.benchmarks, ...(v.groups ?? [])].flatMap((b) => (b[metric] ? [b[metric]] : [])));
      star(cells, stats);
      star(
        cells.flatMap((c) => (c.specificity ? [c.specificity] : [])),
        stats,
      );
      star(
        (profile.pairs ?? []).filter((p) => p.k === k).flatMap((p) => p.benchmarks.flatMap((b) => (b[metric] ? [b[metric]] : []))),
        stats,
      );
    }
  }
  const recorded: ProfileStats = { correction: stats.correction, threshold: stats.threshold, min_effect: stats.minEffect };
  profile.stats = recorded;
  return profile;
}

/**
 * Whether a cell's ablated score is at chance: at or below it (its AIS at or above 1), or within
 * its interval of it (the AIS interval reaches 1), where a benchmark of a few hundred documents
 * cannot tell the two apart.
 */
export function isSaturated(cell: Pick<CellMetric, "ais" | "ablated" | "chance" | "ci">): boolean {
  return cell.ais !== null && (cell.ablated <= cell.chance + CHANCE_TOLERANCE || (cell.ci !== null && cell.ci.high >= 1));
}

/** Marks the saturated cells at `k` under `metric`, and leaves undefined what a saturated cell would make meaningless. */
function markSaturation(profile: ModelProfile, k: number, metric: Metric): void {
  const variants = profile.variants.filter((v) => v.k === k);
  for (const v of variants)
    for (const b of [...v.benchmarks, ...(v.groups ?? [])]) {
      const cell = b[metric];
      if (cell && isSaturated(cell)) cell.saturated = true;
    }
  const random = variants.find((v) => v.selection === "random");
  const draws = (profile.random_draws ?? []).filter((d) => d.k === k);
  // the control is saturated where the draws' mean score is: the null the specificity is against
  const controlSaturated = (benchmark: string): boolean => {
    const first = random?.benchmarks.find((b) => b.name === benchmark)?.[metric];
    if (!first) return false;
    const scores = [first.ablated, ...draws.flatMap((d) => d.benchmarks.find((b) => b.name === benchmark)?.[metric]?.ablated ?? [])];
    return (
      isSaturated(first) || (first.ais !== null && scores.reduce((s, x) => s + x, 0) / scores.length <= first.chance + CHANCE_TOLERANCE)
    );
  };
  for (const v of variants)
    for (const b of v.benchmarks) {
      const specificity = b[metric]?.specificity;
      if (specificity && (b[metric]!.saturated || controlSaturated(b.name))) undefine(specificity);
    }
  const topCell = (ability: string, benchmark: string) =>
    variants.find((v) => v.ability === ability && v.selection === "top")?.benchmarks.find((b) => b.name === benchmark)?.[metric];
  for (const pair of (profile.pairs ?? []).filter((p) => p.k === k))
    for (const b of pair.benchmarks) {
      const cell = b[metric];
      if (!cell || cell.interference === null) continue;
      const pairSaturated = cell.ais !== null && (cell.ais >= 1 - CHANCE_TOLERANCE || (cell.ci !== null && cell.ci.high >= 1));
      if (pairSaturated || pair.abilities.some((a) => topCell(a, b.name)?.saturated)) {
        cell.interference = null;
        cell.interference_ci = null;
        cell.reason = SATURATED_REASON;
        cell.p = null;
      }
    }
}

function undefine(specificity: Specificity): void {
  specificity.value = null;
  specificity.ci = null;
  specificity.reason = SATURATED_REASON;
  specificity.p = null;
}

/** One table's cells: q from their p, starred below the threshold; a cell without a p is never starred. */
function star(cells: readonly (CellMetric | Specificity | PairCell)[], stats: StatsSettings): void {
  const q = adjustedPValues(
    cells.map((c) => c.p ?? null),
    stats.correction,
  );
  cells.forEach((cell, i) => {
    cell.q = q[i] ?? null;
    cell.significant = cell.q !== null && cell.q < stats.threshold;
  });
}
