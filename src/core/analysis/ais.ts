// Ability Impact Score (docs/method.md, step 5):
//
//     AIS(a, b) = ( P_b(theta) - P_b(theta_a) ) / ( P_b(theta) - P_b(chance) )
//
// The denominator is the part of the baseline score that is above guessing, so AIS is the
// fraction of that margin the ablation removed. When the baseline is at or below chance there
// is no margin to remove and the ratio means nothing: the result then says so in words instead
// of carrying a number.
//
// Everything below works on a per-item score vector, whatever the metric made it: correctness
// under acc and acc_norm for multiple-choice items, exact_match for generated ones (chance 0), or
// a task's own per-document score in [0, 1] (its Python process_results or metric).
import type { ScoredItem } from "./accuracy";
import { isGenerated, type BenchmarkItem } from "./generation";
import type { ChoiceMetric, Metric } from "../lmeval/metrics";

// The metrics are lm-eval's names (formats, a layer below); the statistics' users get them here too.
export { ALL_METRICS, metricsOf, type ChoiceMetric, type Metric } from "../lmeval/metrics";

export type AbilityImpact = { defined: true; value: number } | { defined: false; reason: string };

/**
 * A baseline this close above chance counts as at chance. Chance is a mean of 1/|choices| in
 * floating point, so a baseline that is exactly at chance in exact arithmetic can land a few ulps
 * above it and would otherwise yield an AIS of +-1e15.
 */
export const CHANCE_TOLERANCE = 1e-12;

export interface AbilityImpactInput {
  /** P_b(theta): the unablated model's score on the benchmark, in [0, 1]. */
  baseline: number;
  /** P_b(theta_a): the score with the ability's parameters zeroed. */
  ablated: number;
  /** P_b(chance): mean of 1/|choices| for multiple choice, 0 for exact-match generation. */
  chance: number;
}

export function abilityImpactScore({ baseline, ablated, chance }: AbilityImpactInput): AbilityImpact {
  for (const [name, value] of [
    ["baseline", baseline],
    ["ablated", ablated],
    ["chance", chance],
  ] as const) {
    if (!Number.isFinite(value)) throw new RangeError(`abilityImpactScore: ${name} must be a finite number, got ${value}`);
  }
  const margin = baseline - chance;
  if (margin <= CHANCE_TOLERANCE) return { defined: false, reason: belowChanceReason(baseline, chance) };
  return { defined: true, value: (baseline - ablated) / margin };
}

function belowChanceReason(baseline: number, chance: number): string {
  const where = Math.abs(baseline - chance) <= CHANCE_TOLERANCE ? "at" : "below";
  return (
    `AIS is undefined: the baseline score ${formatScore(baseline)} is ${where} chance (${formatScore(chance)}), ` +
    "so there is no above-chance performance for an ablation to remove."
  );
}

function formatScore(value: number): string {
  return value.toFixed(4);
}

/** Per-item scores: correctness (1 or 0), or a task's own per-document score in [0, 1]. */
export type ScoreVector = Uint8Array | Float64Array;

/**
 * Each item's score under `metric`, in the order of `items`: 1 where it is answered correctly,
 * else 0; the task's own score where it has one.
 */
export function scoreVector(items: readonly BenchmarkItem[], metric: Metric): ScoreVector {
  if (items.some((item) => item.score !== undefined)) {
    const scores = new Float64Array(items.length);
    for (let i = 0; i < items.length; i++) scores[i] = items[i]!.score ?? (isCorrect(items[i]!, metric) ? 1 : 0);
    return scores;
  }
  const correct = new Uint8Array(items.length);
  for (let i = 0; i < items.length; i++) correct[i] = isCorrect(items[i]!, metric) ? 1 : 0;
  return correct;
}

/**
 * Whether `metric` counts the item right (a task's own score: at least one half); a metric of
 * the other kind of benchmark is an error.
 */
export function isCorrect(item: BenchmarkItem, metric: Metric): boolean {
  if (isGenerated(item)) {
    if (metric !== "exact_match")
      throw new Error(`document ${item.index} of ${item.benchmark} is generated: it is scored by exact_match, not ${metric}`);
    return item.score === undefined ? item.correct : item.score >= 0.5;
  }
  if (metric === "exact_match")
    throw new Error(`document ${item.index} of ${item.benchmark} is multiple choice: it is scored by acc or acc_norm, not exact_match`);
  if (item.score !== undefined && metric === "acc") return item.score >= 0.5;
  return predictionOf(item, metric) === item.target;
}

export function predictionOf(item: ScoredItem, metric: ChoiceMetric): number {
  return metric === "acc" ? item.prediction : item.predictionNorm;
}

/**
 * Per-item chance: 1/|choices| of a uniform guess for multiple choice, 0 for exact-match
 * generation; its mean is P_b(chance).
 */
export function chancePerItem(items: readonly BenchmarkItem[]): Float64Array {
  const chance = new Float64Array(items.length);
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    chance[i] = isGenerated(item) ? 0 : (item.chance ?? 1 / item.choices.length);
  }
  return chance;
}

/** Arithmetic mean; 0 for no values, matching benchmarkAccuracy on an empty benchmark. */
export function meanOf(values: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += values[i]!;
  return values.length === 0 ? 0 : sum / values.length;
}

/**
 * The variant's items in the baseline's order, matched by document index. Runners may write
 * items in any order; a missing, extra or duplicated index is an error, because AIS compares
 * the same documents before and after.
 */
export function alignedVariant<T extends BenchmarkItem>(baseline: readonly T[], variant: readonly T[]): T[] {
  if (variant.length !== baseline.length) {
    throw new Error(`variant has ${variant.length} scored items, the baseline ${baseline.length}; both must score the same documents`);
  }
  const aligned = baseline.every((item, i) => variant[i]!.index === item.index) ? [...variant] : matchedByIndex(baseline, variant);
  aligned.forEach((item, i) => {
    const target = baseline[i]!.target;
    if (item.target !== target)
      throw new Error(
        `document ${item.index} has target ${JSON.stringify(target)} in the baseline and ${JSON.stringify(item.target)} in the variant`,
      );
  });
  return aligned;
}

function matchedByIndex<T extends BenchmarkItem>(baseline: readonly T[], variant: readonly T[]): T[] {
  const byIndex = new Map<number, T>();
  for (const item of variant) {
    if (byIndex.has(item.index)) throw new Error(`variant scores document ${item.index} twice`);
    byIndex.set(item.index, item);
  }
  return baseline.map((item) => {
    const match = byIndex.get(item.index);
    if (match === undefined) throw new Error(`variant has no score for document ${item.index} of the baseline`);
    return match;
  });
}

/** AIS of one (ability, benchmark) cell straight from per-item records; chance from the choices (0 for generation). */
export function abilityImpactOfItems(baseline: readonly BenchmarkItem[], ablated: readonly BenchmarkItem[], metric: Metric): AbilityImpact {
  return abilityImpactScore({
    baseline: meanOf(scoreVector(baseline, metric)),
    ablated: meanOf(scoreVector(alignedVariant(baseline, ablated), metric)),
    chance: meanOf(chancePerItem(baseline)),
  });
}
