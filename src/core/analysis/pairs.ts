// Two abilities ablated together (ablation.pairs; docs/method.md, "Two abilities at once"): on one
// benchmark, the AIS of the union of their top sets, and the interference
// I = AIS(A+B) - AIS(A) - AIS(B): 0 when the two effects add up, negative when they overlap (the
// union removes less than both alone), positive when removing both hurts more than the sum. Its
// interval: a paired bootstrap over the benchmark's documents, the four score vectors (baseline,
// A, B, A+B) resampled with the same draws.
import type { AbilityImpact, ScoreVector } from "./ais";
import { bootstrapP, bootstrapSettings, percentileInterval, type BootstrapOptions, type Interval } from "./bootstrap";
import { aisOf, drawIndices, resampledAis } from "./compare";
import { seededRandom } from "../base/random";

export interface PairScores {
  baseline: ScoreVector;
  /** Each ablated model's scores in the baseline's document order. */
  a: ScoreVector;
  b: ScoreVector;
  both: ScoreVector;
  chance: ArrayLike<number>;
}

export interface PairImpact {
  /** AIS of the union of the two top sets, with its percentile interval. */
  ais: AbilityImpact;
  aisInterval: Interval | null;
  /** AIS(A+B) - AIS(A) - AIS(B); null when any of the three is undefined. */
  interference: number | null;
  interval: Interval | null;
  /** The interference's interval excludes 0. */
  significant: boolean;
  /** The interference's two-sided bootstrap p-value (bootstrap.ts bootstrapP); null where the interval is. */
  p: number | null;
}

export function pairImpact(s: PairScores, options: BootstrapOptions = {}): PairImpact {
  const { resamples, confidence, seed } = bootstrapSettings(options);
  const rand = seededRandom(seed);
  const cell = (ablated: ScoreVector) => ({ baseline: s.baseline, ablated, chance: s.chance });
  const estimate = interferenceOf(aisOf(cell(s.both)), aisOf(cell(s.a)), aisOf(cell(s.b)));
  const both: number[] = [];
  const interferences: number[] = [];
  for (let r = 0; r < resamples; r++) {
    const drawn = drawIndices(rand, s.baseline.length);
    const union = resampledAis(cell(s.both), drawn);
    if (union.defined) both.push(union.value);
    const value = interferenceOf(union, resampledAis(cell(s.a), drawn), resampledAis(cell(s.b), drawn));
    if (value !== null) interferences.push(value);
  }
  const ais = aisOf(cell(s.both));
  const intervalOf = (values: number[], defined: boolean): Interval | null => (defined ? percentileInterval(values, confidence) : null);
  const interval = intervalOf(interferences, estimate !== null);
  return {
    ais,
    aisInterval: intervalOf(both, ais.defined),
    interference: estimate,
    interval,
    significant: interval !== null && (interval.low > 0 || interval.high < 0),
    p: interval === null ? null : bootstrapP(interferences),
  };
}

function interferenceOf(both: AbilityImpact, a: AbilityImpact, b: AbilityImpact): number | null {
  return both.defined && a.defined && b.defined ? both.value - a.value - b.value : null;
}
