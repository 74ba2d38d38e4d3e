// A top cell against the random control's R draws at its k (ablation.random_draws; docs/method.md,
// "A null from several random draws"): does removing the ability's top weights hurt the benchmark
// more than removing as many random weights does? With R random AIS r_1..r_R of the benchmark,
//
//     p = (1 + #{ r_i >= a }) / (R + 1)          (one-sided, the usual +1 so that p is never 0)
//     margin = (a - mean(r)) / sd(r)             (the top's lead in units of the null's spread)
//
// With R = 1 the p-value cannot go below 1/2, so one draw places nothing; a few dozen make it
// informative (R = 19 reaches 0.05).

export interface RandomNull {
  /** Draws with a defined AIS. */
  draws: number;
  /** The draws' mean AIS: what removing n random weights does. */
  mean: number;
  /** Their sample standard deviation (n - 1); null with fewer than two draws. */
  sd: number | null;
  /** The empirical one-sided p of the top cell's AIS against them. */
  p: number;
  /** (AIS - mean) / sd; null when sd is null or 0. */
  margin: number | null;
}

/** The top cell's AIS `value` against the random draws' AIS `draws` (undefined ones left out); null when no draw is defined. */
export function againstRandomDraws(value: number, draws: readonly (number | null)[]): RandomNull | null {
  const defined = draws.filter((d): d is number => d !== null);
  if (defined.length === 0) return null;
  const mean = defined.reduce((s, d) => s + d, 0) / defined.length;
  const sd = sampleSd(defined);
  const above = defined.filter((d) => d >= value).length;
  return {
    draws: defined.length,
    mean,
    sd,
    p: (1 + above) / (defined.length + 1),
    margin: sd === null || sd === 0 ? null : (value - mean) / sd,
  };
}

/** The sample standard deviation (n - 1 in the denominator); null for fewer than two values. */
export function sampleSd(values: readonly number[]): number | null {
  if (values.length < 2) return null;
  const mean = values.reduce((s, v) => s + v, 0) / values.length;
  return Math.sqrt(values.reduce((s, v) => s + (v - mean) ** 2, 0) / (values.length - 1));
}
