// Two statistics of people's judgements of items: the Wilson score interval of a proportion (how
// many labels a review found right, and how sure that figure is), and Cohen's kappa (how far two
// reviewers agree beyond what their own rates of each decision would give by chance).
import { normalQuantile } from "./power";

export interface Proportion {
  /** Successes (labels found right). */
  k: number;
  /** Trials (labels reviewed). */
  n: number;
  /** k / n; null when n = 0. */
  rate: number | null;
  /** The Wilson score interval at `confidence`; null when n = 0. */
  low: number | null;
  high: number | null;
}

/**
 * k of n with its Wilson score interval: the p whose score test does not reject k/n, i.e. the
 * roots of (p̂ - p)^2 = z^2 p(1 - p) / n. Unlike p̂ ± z·se it stays inside [0, 1] and does not
 * shrink to a point at 0 or n successes, which a review that found every label right often has.
 */
export function wilsonProportion(k: number, n: number, confidence = 0.95): Proportion {
  if (!(Number.isInteger(k) && Number.isInteger(n) && k >= 0 && k <= n))
    throw new RangeError(`wilsonProportion needs integers 0 <= k <= n, got k = ${k}, n = ${n}`);
  if (n === 0) return { k, n, rate: null, low: null, high: null };
  const z = normalQuantile(1 - (1 - confidence) / 2);
  const p = k / n;
  const z2n = (z * z) / n;
  const centre = (p + z2n / 2) / (1 + z2n);
  const half = (z / (1 + z2n)) * Math.sqrt((p * (1 - p)) / n + z2n / (4 * n));
  // at k = 0 or k = n one bound is exactly 0 or 1; the arithmetic above leaves it a rounding off
  return { k, n, rate: p, low: k === 0 ? 0 : Math.max(0, centre - half), high: k === n ? 1 : Math.min(1, centre + half) };
}

export interface Kappa {
  /** Items both judged. */
  n: number;
  /** The share of them judged alike. */
  observed: number | null;
  /** The share expected alike by chance: sum over categories of the two judges' rates of it. */
  expected: number | null;
  /** (observed - expected) / (1 - expected); null with no items, or when chance agreement is total (both judges gave one category to every item). */
  kappa: number | null;
}

/** Cohen's kappa of two judges' categories of the same items (`pairs[i]` = [judge A's, judge B's]). */
export function cohensKappa(pairs: readonly (readonly [string, string])[]): Kappa {
  const n = pairs.length;
  if (n === 0) return { n, observed: null, expected: null, kappa: null };
  const countsA = new Map<string, number>();
  const countsB = new Map<string, number>();
  let alike = 0;
  for (const [a, b] of pairs) {
    if (a === b) alike++;
    countsA.set(a, (countsA.get(a) ?? 0) + 1);
    countsB.set(b, (countsB.get(b) ?? 0) + 1);
  }
  const observed = alike / n;
  let expected = 0;
  for (const [category, a] of countsA) expected += (a / n) * ((countsB.get(category) ?? 0) / n);
  const kappa = expected >= 1 ? null : (observed - expected) / (1 - expected);
  return { n, observed, expected, kappa };
}
