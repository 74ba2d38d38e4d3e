// Ability Impact Score (METHOD.md, Phase 4):
//
//     AIS(a, b) = ( P_b(theta) - P_b(theta_a) ) / ( P_b(theta) - P_b(chance) )
//
// The denominator is the part of the baseline score that is above guessing, so AIS is the
// fraction of that margin the ablation removed. When the baseline is at or below chance there
// is no margin to remove and the ratio means nothing: the result then says so in words instead
// of carrying a number.
import type { ScoredItem } from "./accuracy";

/** Which lm-eval metric a benchmark is scored by; the caller picks per benchmark. */
export type Metric = "acc" | "acc_norm";

export type AbilityImpact =
  | { defined: true; value: number }
  | { defined: false; reason: string };

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
  for (const [name, value] of [["baseline", baseline], ["ablated", ablated], ["chance", chance]] as const) {
    if (!Number.isFinite(value)) throw new RangeError(`abilityImpactScore: ${name} must be a finite number, got ${value}`);
  }
  const margin = baseline - chance;
  if (margin <= CHANCE_TOLERANCE) return { defined: false, reason: belowChanceReason(baseline, chance) };
  return { defined: true, value: (baseline - ablated) / margin };
}

function belowChanceReason(baseline: number, chance: number): string {
  const where = Math.abs(baseline - chance) <= CHANCE_TOLERANCE ? "at" : "below";
  return `AIS is undefined: the baseline score ${formatScore(baseline)} is ${where} chance (${formatScore(chance)}), ` +
    "so there is no above-chance performance for an ablation to remove.";
}

function formatScore(value: number): string {
  return value.toFixed(4);
}

/** 1 where the item is answered correctly under `metric`, else 0, in the order of `items`. */
export function correctnessVector(items: readonly ScoredItem[], metric: Metric): Uint8Array {
  const correct = new Uint8Array(items.length);
  for (let i = 0; i < items.length; i++) correct[i] = predictionOf(items[i]!, metric) === items[i]!.target ? 1 : 0;
  return correct;
}

export function predictionOf(item: ScoredItem, metric: Metric): number {
  return metric === "acc" ? item.prediction : item.predictionNorm;
}

/** Per-item chance of a uniform guess, 1/|choices|; its mean is P_b(chance) for multiple choice. */
export function chancePerItem(items: readonly ScoredItem[]): Float64Array {
  const chance = new Float64Array(items.length);
  for (let i = 0; i < items.length; i++) chance[i] = 1 / items[i]!.choices.length;
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
export function alignedVariant(baseline: readonly ScoredItem[], variant: readonly ScoredItem[]): ScoredItem[] {
  if (variant.length !== baseline.length) {
    throw new Error(`variant has ${variant.length} scored items, the baseline ${baseline.length}; both must score the same documents`);
  }
  const aligned = baseline.every((item, i) => variant[i]!.index === item.index) ? [...variant] : matchedByIndex(baseline, variant);
  aligned.forEach((item, i) => {
    const target = baseline[i]!.target;
    if (item.target !== target) throw new Error(`document ${item.index} has target ${target} in the baseline and ${item.target} in the variant`);
  });
  return aligned;
}

function matchedByIndex(baseline: readonly ScoredItem[], variant: readonly ScoredItem[]): ScoredItem[] {
  const byIndex = new Map<number, ScoredItem>();
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

/** AIS of one (ability, benchmark) cell straight from per-item scores, chance from the choices. */
export function abilityImpactOfItems(baseline: readonly ScoredItem[], ablated: readonly ScoredItem[], metric: Metric): AbilityImpact {
  return abilityImpactScore({
    baseline: meanOf(correctnessVector(baseline, metric)),
    ablated: meanOf(correctnessVector(alignedVariant(baseline, ablated), metric)),
    chance: meanOf(chancePerItem(baseline)),
  });
}
