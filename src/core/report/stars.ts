// What a star, a saturation mark, a cell's test and a benchmark's noise say, in the words every
// format and view uses (docs/report-formats.md). A star means one thing per profile: its q over its
// table (one model's profile at one k under one metric) is below the profile's threshold, by the
// correction its `stats` records (analysis/multipleComparisons.ts). A run made before `stats`
// starred a cell whose interval excludes 0, and says so. A saturated cell (its ablated score at
// chance) is marked: its AIS is at its ceiling whatever the ablation did beyond that, and what is
// a difference of it (specificity, interference) is not defined.
import { correctionWords } from "../analysis/multipleComparisons";
import type { CellMetric, ProfileStats } from "../results/schema";

/** What a star means in a profile's tables. */
export function starWords(stats: ProfileStats | undefined): string {
  return stats ? correctionWords(stats.correction, stats.threshold) : "the interval excludes 0";
}

/** The mark of a saturated cell, in every format. */
export const SATURATED_MARK = "sat.";

/** The legend of the saturation mark. */
export const SATURATED_WORDS =
  "saturated: the ablated score is at chance (at or below it, or within its interval of it), so the benchmark can fall no further and the AIS is at its ceiling; its specificity and interference are not defined";

/** A cell's test as a report names it. */
export type CellTestName = NonNullable<CellMetric["test"]>;

/** The test in words. */
export function testWords(test: CellTestName): string {
  return test === "mcnemar" ? "McNemar's exact test on the flips" : "the paired bootstrap";
}

/** The test in a column header. */
export function testShort(test: CellTestName): string {
  return test === "mcnemar" ? "McNemar" : "bootstrap";
}

/** The correction's name, for a q beside its value. */
export function correctionName(stats: ProfileStats | undefined): string {
  if (!stats) return "";
  return stats.correction === "bh" ? "Benjamini-Hochberg" : stats.correction === "holm" ? "Holm" : "no correction";
}

/**
 * A p- or q-value with 3 significant digits, rounded down, so that one shown below a threshold of
 * up to 3 significant digits is below it and one at or above it shows at or above it; "<0.0001"
 * under that.
 */
export function formatP(p: number): string {
  if (p <= 0) return "0";
  if (p < 1e-4) return "<0.0001";
  const exponent = Math.floor(Math.log10(p));
  const digits = Math.max(0, 2 - exponent);
  const factor = 10 ** digits;
  return (Math.floor(p * factor * (1 + 1e-12)) / factor).toFixed(digits);
}

/** What the random null is and where it came from: R draws of the random control at this k. */
export function randomNullWords(draws: number): string {
  return (
    `each top cell's AIS against the random control's ${draws} draws at this k ` +
    `(one-sided p = (1 + draws at or above it) / (draws + 1); margin = (AIS - the draws' mean) / their sd)`
  );
}

/** The noise section's words: what signal, noise and snr are, and what snr < 1 says. */
export const NOISE_WORDS =
  "signal: the spread (sd) of the abilities' top-set AIS on the benchmark; noise: the root of its cells' mean bootstrap variance " +
  "plus the random draws' variance; snr = signal / noise. Below 1, the abilities' differences on the benchmark are within its noise: its profile is noise";
