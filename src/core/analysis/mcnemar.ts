// McNemar's exact test on paired 0/1 scores (docs/method.md, "Which stars to trust"): of the
// documents a variant and its baseline score differently, b went from right to wrong and c from
// wrong to right. Under the null (the ablation changed nothing but noise) a discordant document is
// equally likely to go either way, so b ~ Binomial(b + c, 1/2), and the two-sided exact p-value is
//
//     p = min(1, 2 * P(X <= min(b, c))),  X ~ Binomial(b + c, 1/2)
//
// (scipy.stats.binomtest(b, b + c, 0.5).pvalue, and statsmodels' mcnemar(exact=True), give the
// same). The concordant documents carry no information on the difference and do not enter.

/** The two-sided exact McNemar p-value of `b` right-to-wrong and `c` wrong-to-right flips; 1 with none. */
export function mcnemarExactP(b: number, c: number): number {
  if (!Number.isInteger(b) || !Number.isInteger(c) || b < 0 || c < 0) throw new RangeError(`McNemar needs two counts, got ${b} and ${c}`);
  const n = b + c;
  if (n === 0) return 1;
  return Math.min(1, 2 * halfBinomialCdf(Math.min(b, c), n));
}

/**
 * P(X <= m) for X ~ Binomial(n, 1/2), summed in log space: the terms C(n, i) / 2^n underflow a
 * double from n of about 1075 documents on, which benchmarks reach.
 */
export function halfBinomialCdf(m: number, n: number): number {
  if (m < 0) return 0;
  if (m >= n) return 1;
  const logHalfN = -n * Math.LN2;
  // log C(n, i) built term by term: C(n, i) = C(n, i - 1) * (n - i + 1) / i
  const logTerms: number[] = [logHalfN];
  let logChoose = 0;
  for (let i = 1; i <= m; i++) {
    logChoose += Math.log((n - i + 1) / i);
    logTerms.push(logChoose + logHalfN);
  }
  const top = Math.max(...logTerms);
  let sum = 0;
  for (const t of logTerms) sum += Math.exp(t - top);
  return Math.min(1, Math.exp(top + Math.log(sum)));
}
