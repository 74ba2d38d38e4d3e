// Two profiles side by side (docs/method.md, "Two profiles compared"): for one ability and one
// benchmark, AIS of profile A minus AIS of profile B, with a bootstrap interval over the
// benchmark's documents; per benchmark, how alike the two profiles rank the abilities.
//
// Paired when both profiles scored the very same documents (two models on one benchmark file):
// each resample draws document indices once and both AIS are recomputed on them, so what the
// documents share cancels out of the difference. Unpaired otherwise: each side is resampled on
// its own, from seeds of its own.
import { abilityImpactScore, meanOf, type AbilityImpact, type ScoreVector } from "./ais";
import { bootstrapSettings, percentileInterval, type BootstrapOptions, type Interval } from "./bootstrap";
import { randomInt, seededRandom } from "../base/random";

/** One profile's scores on one benchmark for one ability's variant, document by document. */
export interface CellScores {
  baseline: ScoreVector;
  /** The ablated model's scores, in the baseline's document order. */
  ablated: ScoreVector;
  /** Per-document chance (0 for exact-match generation). */
  chance: ArrayLike<number>;
}

export interface AisDifference {
  a: AbilityImpact;
  b: AbilityImpact;
  /** AIS(A) - AIS(B); null when either is undefined (a baseline at or below chance). */
  difference: number | null;
  /** Percentile interval over the resamples where both AIS are defined; null when none is. */
  interval: Interval | null;
  /** The interval excludes 0. */
  significant: boolean;
  paired: boolean;
  resamples: number;
}

/** AIS of scores on all documents (no resampling). */
export function aisOf(scores: CellScores): AbilityImpact {
  return abilityImpactScore({ baseline: meanOf(scores.baseline), ablated: meanOf(scores.ablated), chance: meanOf(scores.chance) });
}

/**
 * AIS(A) - AIS(B) with its interval. `paired` needs the same documents in the same order on both
 * sides; the caller knows whether they are (same data file, same indices).
 */
export function aisDifference(a: CellScores, b: CellScores, paired: boolean, options: BootstrapOptions = {}): AisDifference {
  const { resamples, confidence, seed } = bootstrapSettings(options);
  if (paired && a.baseline.length !== b.baseline.length) {
    throw new RangeError(`a paired comparison needs the same documents: ${a.baseline.length} and ${b.baseline.length}`);
  }
  const estimateA = aisOf(a);
  const estimateB = aisOf(b);
  const difference = estimateA.defined && estimateB.defined ? estimateA.value - estimateB.value : null;
  const randA = seededRandom(seed);
  // Unpaired: B's documents are drawn from a stream of their own.
  const randB = paired ? randA : seededRandom(seed + 1);
  const differences: number[] = [];
  for (let r = 0; r < resamples; r++) {
    const drawnA = drawIndices(randA, a.baseline.length);
    const drawnB = paired ? drawnA : drawIndices(randB, b.baseline.length);
    const resampledA = resampledAis(a, drawnA);
    const resampledB = resampledAis(b, drawnB);
    if (resampledA.defined && resampledB.defined) differences.push(resampledA.value - resampledB.value);
  }
  const interval = difference !== null ? percentileInterval(differences, confidence) : null;
  return {
    a: estimateA,
    b: estimateB,
    difference,
    interval,
    significant: interval !== null && (interval.low > 0 || interval.high < 0),
    paired,
    resamples,
  };
}

/**
 * Spearman's rank correlation of two lists of values (average ranks for ties); null for fewer
 * than 3 pairs or when either list is constant.
 */
export function rankCorrelation(xs: readonly number[], ys: readonly number[]): number | null {
  if (xs.length !== ys.length) throw new RangeError(`rank correlation of ${xs.length} and ${ys.length} values`);
  if (xs.length < 3) return null;
  return pearson(averageRanks(xs), averageRanks(ys));
}

/** Ranks from 1, tied values sharing the mean of their ranks. */
export function averageRanks(values: readonly number[]): number[] {
  const order = values.map((value, i) => ({ value, i })).sort((p, q) => p.value - q.value);
  const ranks = new Array<number>(values.length);
  for (let start = 0; start < order.length;) {
    let end = start;
    while (end + 1 < order.length && order[end + 1]!.value === order[start]!.value) end++;
    const rank = (start + end) / 2 + 1;
    for (let j = start; j <= end; j++) ranks[order[j]!.i] = rank;
    start = end + 1;
  }
  return ranks;
}

function pearson(xs: readonly number[], ys: readonly number[]): number | null {
  const mx = meanOf(xs);
  const my = meanOf(ys);
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < xs.length; i++) {
    const dx = xs[i]! - mx;
    const dy = ys[i]! - my;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  return sxx === 0 || syy === 0 ? null : sxy / Math.sqrt(sxx * syy);
}

/** n document indices drawn with replacement. */
export function drawIndices(rand: () => number, n: number): Uint32Array {
  const drawn = new Uint32Array(n);
  for (let i = 0; i < n; i++) drawn[i] = randomInt(rand, n);
  return drawn;
}

/** AIS of the documents `drawn` (with their multiplicity). */
export function resampledAis(scores: CellScores, drawn: Uint32Array): AbilityImpact {
  let baseline = 0;
  let ablated = 0;
  let chance = 0;
  for (const i of drawn) {
    baseline += scores.baseline[i]!;
    ablated += scores.ablated[i]!;
    chance += scores.chance[i]!;
  }
  const n = drawn.length;
  return n === 0
    ? { defined: false, reason: "no documents" }
    : abilityImpactScore({ baseline: baseline / n, ablated: ablated / n, chance: chance / n });
}
