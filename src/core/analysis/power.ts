// How much a benchmark can detect before it is run (docs/method.md, "Power"): the smallest AIS
// that a benchmark of n documents detects at the two-sided level alpha with power 1 - beta (80%).
//
// A variant's accuracy p1 is compared with the baseline's p0 on the same n documents. The drop
// delta = p0 - p1 is detectable when
//
//     sqrt(n) * delta = z(1 - alpha/2) * sqrt(2 pm (1 - pm)) + z(1 - beta) * sqrt(p0 q0 + p1 q1),
//     pm = (p0 + p1) / 2,  q = 1 - p,
//
// the two-proportion formula (Fleiss, without continuity correction). It treats the variant's
// answers as independent of the baseline's, and then it is also the power of McNemar's test on
// the pairs (the discordant share p0 q1 + p1 q0 minus delta^2 equals p0 q0 + p1 q1); an ablation
// whose answers follow the baseline's more closely is detected at a smaller drop, so the figure
// is on the safe side. In AIS units the drop is delta / (p0 - chance): a baseline near chance
// leaves little margin, and the same drop is a large AIS that is hard to tell from noise.

export interface PowerInputs {
  /** Documents of the benchmark. */
  documents: number;
  /** The baseline's accuracy p0. */
  baseline: number;
  /** The benchmark's chance (mean of 1/|choices|; 0 for exact match). */
  chance: number;
  /** Two-sided level, 1 - the bootstrap's confidence: 0.05 by default. */
  alpha?: number;
  /** 0.8 by default. */
  power?: number;
}

export const DEFAULT_POWER = 0.8;
/** The smallest AIS a benchmark should detect (the config's `stats.min_effect`). */
export const DEFAULT_MIN_EFFECT = 0.1;

/** The smallest AIS the benchmark detects; null when the baseline is at or below chance (no AIS) or no drop up to chance is detectable. */
export function minimumDetectableAis(inputs: PowerInputs): number | null {
  const margin = inputs.baseline - inputs.chance;
  if (!(margin > 0) || inputs.documents < 1) return null;
  const drop = minimumDetectableDrop(inputs);
  return drop === null || drop > margin ? null : drop / margin;
}

/** The smallest accuracy drop delta detectable (see the header), by fixed-point iteration on p1; null when none up to p0 is. */
export function minimumDetectableDrop(inputs: PowerInputs): number | null {
  const { p0, za, zb } = terms(inputs);
  let delta = 0.01;
  for (let step = 0; step < 200; step++) {
    const p1 = Math.max(0, p0 - delta);
    const next =
      (za * Math.sqrt(2 * bernoulliVariance((p0 + p1) / 2)) + zb * Math.sqrt(bernoulliVariance(p0) + bernoulliVariance(p1))) /
      Math.sqrt(inputs.documents);
    if (Math.abs(next - delta) < 1e-12) break;
    delta = next;
  }
  return delta <= p0 ? delta : null;
}

/** Documents needed to detect an AIS of `effect` (the config's `stats.min_effect`); null when the baseline is at or below chance. */
export function documentsToDetect(inputs: Omit<PowerInputs, "documents">, effect: number): number | null {
  const margin = inputs.baseline - inputs.chance;
  if (!(margin > 0) || !(effect > 0)) return null;
  const { p0, za, zb } = terms({ ...inputs, documents: 1 });
  const delta = Math.min(p0, effect * margin);
  const p1 = p0 - delta;
  const root = za * Math.sqrt(2 * bernoulliVariance((p0 + p1) / 2)) + zb * Math.sqrt(bernoulliVariance(p0) + bernoulliVariance(p1));
  return Math.ceil((root / delta) ** 2);
}

function terms(inputs: PowerInputs): { p0: number; za: number; zb: number } {
  const alpha = inputs.alpha ?? 0.05;
  const power = inputs.power ?? DEFAULT_POWER;
  if (!(alpha > 0 && alpha < 1) || !(power > 0 && power < 1))
    throw new RangeError(`alpha and power must lie in (0, 1), got ${alpha} and ${power}`);
  return { p0: inputs.baseline, za: normalQuantile(1 - alpha / 2), zb: normalQuantile(power) };
}

function bernoulliVariance(p: number): number {
  return p * (1 - p);
}

/**
 * The standard normal's quantile by Acklam's rational approximation (relative error below
 * 1.2e-9, far below what a power figure needs): a central rational function and one for each tail.
 */
export function normalQuantile(q: number): number {
  if (!(q > 0 && q < 1)) throw new RangeError(`normalQuantile: q must lie in (0, 1), got ${q}`);
  const a = [-39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239];
  const b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572];
  const c = [-0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const tail = (t: number) =>
    (((((c[0]! * t + c[1]!) * t + c[2]!) * t + c[3]!) * t + c[4]!) * t + c[5]!) / ((((d[0]! * t + d[1]!) * t + d[2]!) * t + d[3]!) * t + 1);
  if (q < 0.02425) return tail(Math.sqrt(-2 * Math.log(q)));
  if (q > 1 - 0.02425) return -tail(Math.sqrt(-2 * Math.log(1 - q)));
  const t = q - 0.5;
  const r = t * t;
  return (
    ((((((a[0]! * r + a[1]!) * r + a[2]!) * r + a[3]!) * r + a[4]!) * r + a[5]!) * t) /
    (((((b[0]! * r + b[1]!) * r + b[2]!) * r + b[3]!) * r + b[4]!) * r + 1)
  );
}
