// Dataset-level health of a diagnostic dataset: flaws that no single line has but that let a
// model score without the ability (answer position or length cues) or that make a per-ability
// ranking unstable (too few items). The statistics are implemented here (a few dozen lines)
// rather than pulled in as a dependency; each is tested against published values.
import { fileProblem, type Problem, type ProblemCode, type ProblemData } from "../base/problems";

export interface HealthItem {
  line: number;
  ability: string;
  choices: readonly string[];
  answer: number;
}

/** Significance level of the health tests: a warning at p < 0.01. */
export const HEALTH_ALPHA = 0.01;

/**
 * Fewest items per ability before a warning. Importance I_j(a) is a sum of per-item gradients,
 * so its sampling noise relative to its size falls as 1/sqrt(n): at 200 items it is about
 * sqrt(2000/200) = 3.2 times that of the paper's ~2000 items per ability. Below that the top-k
 * parameter sets (a few thousandths of the model) are dominated by which items happened to be
 * drawn, and rankings between abilities stop being reproducible. A tenth of the paper's size is
 * the least we let pass without a warning; it is an option for users who measured otherwise.
 */
export const MIN_ITEMS_PER_ABILITY = 200;

/** The paper's dataset size, quoted in messages. */
export const PAPER_ITEMS_PER_ABILITY = 2000;

/**
 * The item count above is a rule of thumb; a run with `ablation.stability` measures instead: the
 * top n ranked from two seeded halves of an ability's items, compared by their Jaccard index at
 * the sweep's largest k. Two halves whose top sets share at least half of their union
 * (Jaccard 1/2 or more: two thirds of each set in common) rank alike, so the items are enough;
 * below, which items were drawn decides much of the ranking. Each half has half the items, so
 * the whole set's ranking is steadier than this says: the threshold errs on the side of more items.
 */
export const STABLE_RANKING_JACCARD = 0.5;

/** A run's measurement of one ability's ranking stability, at the largest k it measured. */
export interface MeasuredStability {
  runId: string;
  model: string;
  k: number;
  jaccard: number;
  halves: [number, number];
}

/** Whether the measured ranking is stable, in words, with the number behind the verdict. */
export function stabilityVerdict(m: MeasuredStability): { stable: boolean; text: string } {
  const stable = m.jaccard >= STABLE_RANKING_JACCARD;
  const measured =
    `the top sets of two halves (${m.halves[0]} + ${m.halves[1]} items) have Jaccard index ${m.jaccard.toFixed(3)} at k = ${m.k} ` +
    `(run ${m.runId}, model ${m.model})`;
  return stable
    ? { stable, text: `a stable ranking, as measured: ${measured}, at least ${STABLE_RANKING_JACCARD}` }
    : { stable, text: `an unstable ranking, as measured: ${measured}, below ${STABLE_RANKING_JACCARD}: more items would steady it` };
}

// ---------------------------------------------------------------------------------------------
// Special functions (Numerical Recipes, 3rd ed., sections 6.1, 6.2 and 6.4).

const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905,
  -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
];

/** ln Gamma(x) for x > 0 (Lanczos approximation, g = 7: about 15 significant digits). */
export function logGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x);
  x -= 1;
  let sum = LANCZOS[0]!;
  for (let i = 1; i < LANCZOS.length; i++) sum += LANCZOS[i]! / (x + i);
  const t = x + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (x + 0.5) * Math.log(t) - t + Math.log(sum);
}

const EPS = 1e-15;
const TINY = 1e-300;
const MAX_ITERATIONS = 10000;

/** Regularized lower incomplete gamma P(a, x), by its series (converges fast for x < a + 1). */
function gammaSeries(a: number, x: number): number {
  let term = 1 / a;
  let sum = term;
  for (let n = 1; n < MAX_ITERATIONS; n++) {
    term *= x / (a + n);
    sum += term;
    if (Math.abs(term) < Math.abs(sum) * EPS) break;
  }
  return sum * Math.exp(-x + a * Math.log(x) - logGamma(a));
}

/** Regularized upper incomplete gamma Q(a, x), by Lentz's continued fraction (for x >= a + 1). */
function gammaContinuedFraction(a: number, x: number): number {
  let b = x + 1 - a;
  let c = 1 / TINY;
  let d = 1 / b;
  let h = d;
  for (let i = 1; i < MAX_ITERATIONS; i++) {
    const an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (Math.abs(d) < TINY) d = TINY;
    c = b + an / c;
    if (Math.abs(c) < TINY) c = TINY;
    d = 1 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < EPS) break;
  }
  return Math.exp(-x + a * Math.log(x) - logGamma(a)) * h;
}

/** Regularized upper incomplete gamma Q(a, x) = Gamma(a, x) / Gamma(a). */
export function regularizedGammaQ(a: number, x: number): number {
  if (x <= 0) return 1;
  // Each branch computes its small quantity directly, so tiny p-values keep their digits.
  return x < a + 1 ? 1 - gammaSeries(a, x) : gammaContinuedFraction(a, x);
}

/** P(X >= x) for X chi-square distributed with `df` degrees of freedom. */
export function chiSquareSurvival(x: number, df: number): number {
  return regularizedGammaQ(df / 2, x / 2);
}

/** Continued fraction of the incomplete beta function (modified Lentz). */
function betaContinuedFraction(x: number, a: number, b: number): number {
  const [qab, qap, qam] = [a + b, a + 1, a - 1];
  let c = 1;
  let d = 1 - (qab * x) / qap;
  if (Math.abs(d) < TINY) d = TINY;
  d = 1 / d;
  let h = d;
  for (let m = 1; m < MAX_ITERATIONS; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < TINY) d = TINY;
    c = 1 + aa / c;
    if (Math.abs(c) < TINY) c = TINY;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (qab + m) * x) / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < TINY) d = TINY;
    c = 1 + aa / c;
    if (Math.abs(c) < TINY) c = TINY;
    d = 1 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < EPS) break;
  }
  return h;
}

/** Regularized incomplete beta I_x(a, b). */
export function regularizedBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log(1 - x));
  return x < (a + 1) / (a + b + 2) ? (front * betaContinuedFraction(x, a, b)) / a : 1 - (front * betaContinuedFraction(1 - x, b, a)) / b;
}

/** P(X >= k) for X ~ Binomial(n, p). */
export function binomialUpperTail(k: number, n: number, p: number): number {
  if (k <= 0) return 1;
  if (k > n) return 0;
  return regularizedBeta(p, k, n - k + 1);
}

// ---------------------------------------------------------------------------------------------
// Answer position balance.

export interface PositionCell {
  /** Choice letters the cell covers: "B", or "E-Z" for pooled sparse positions. */
  label: string;
  observed: number;
  expected: number;
}

export interface PositionBalance {
  statistic: number;
  df: number;
  pValue: number;
  cells: PositionCell[];
}

/** Smallest expected count per cell for the chi-square approximation (Cochran's rule of thumb). */
const MIN_EXPECTED = 5;

/**
 * Pearson's chi-square test of the answer positions against "every choice of an item equally
 * likely". Items may have different numbers of choices: position p is expected
 * sum over items with n_i > p of 1/n_i times. Trailing positions expected fewer than 5 times
 * (held only by the few items with many choices) are pooled, so the chi-square approximation
 * holds; undefined when fewer than two cells remain (too few items to test).
 */
export function answerPositionBalance(items: readonly HealthItem[]): PositionBalance | undefined {
  const maxChoices = items.reduce((m, it) => Math.max(m, it.choices.length), 0);
  const itemsWith = new Array<number>(maxChoices + 1).fill(0);
  const observed = new Array<number>(maxChoices).fill(0);
  for (const it of items) {
    itemsWith[it.choices.length]!++;
    observed[it.answer]!++;
  }
  let cells: PositionCell[] = observed.map((o, p) => ({ label: letter(p), observed: o, expected: expectedAt(p, itemsWith) }));
  cells = pooledSparseTail(cells);
  if (cells.length < 2 || cells.some((c) => c.expected < MIN_EXPECTED)) return undefined;
  const statistic = cells.reduce((s, c) => s + (c.observed - c.expected) ** 2 / c.expected, 0);
  const df = cells.length - 1;
  return { statistic, df, pValue: chiSquareSurvival(statistic, df), cells };
}

function expectedAt(position: number, itemsWith: readonly number[]): number {
  let expected = 0;
  for (let n = position + 1; n < itemsWith.length; n++) expected += itemsWith[n]! / n;
  return expected;
}

/** Expected counts only fall with the position, so sparse cells are at the end: merge them backwards. */
function pooledSparseTail(cells: PositionCell[]): PositionCell[] {
  const pooled = cells.filter((c) => c.expected > 0).map((c) => ({ ...c }));
  while (pooled.length > 2 && pooled[pooled.length - 1]!.expected < MIN_EXPECTED) {
    const last = pooled.pop()!;
    const into = pooled[pooled.length - 1]!;
    into.observed += last.observed;
    into.expected += last.expected;
    into.label = `${into.label.split("-")[0]}-${last.label.split("-").pop()}`;
  }
  return pooled;
}

export function letter(position: number): string {
  return String.fromCharCode(65 + position);
}

// ---------------------------------------------------------------------------------------------
// Longest-answer bias.

export interface LongestAnswerBias {
  /** Items whose longest choice (trimmed, in characters) is strictly longer than all others. */
  eligible: number;
  /** Of those, items whose correct answer is that longest choice. */
  longest: number;
  /** How many of the eligible items chance gives: sum of 1/n_i. */
  expected: number;
  /** One-sided binomial test of `longest` against Binomial(eligible, expected / eligible). */
  pValue: number;
}

/**
 * Is the correct answer the strictly longest choice more often than chance? Under "the answer
 * is placed independently of the lengths" an eligible item with n choices has the answer longest
 * with probability 1/n. With mixed choice counts the count is Poisson-binomial; the test uses the
 * binomial with the mean probability, whose upper tail is never smaller above the mean
 * (Hoeffding 1956), so the p-value is exact for equal choice counts and conservative otherwise.
 */
export function longestAnswerBias(items: readonly HealthItem[]): LongestAnswerBias | undefined {
  let [eligible, longest, expected] = [0, 0, 0];
  for (const it of items) {
    const winner = strictlyLongest(it.choices);
    if (winner === -1) continue;
    eligible++;
    expected += 1 / it.choices.length;
    if (winner === it.answer) longest++;
  }
  if (eligible === 0) return undefined;
  return { eligible, longest, expected, pValue: binomialUpperTail(longest, eligible, expected / eligible) };
}

/** Index of the choice strictly longer than every other, or -1 when the longest length is shared. */
function strictlyLongest(choices: readonly string[]): number {
  let best = -1;
  let bestLength = -1;
  let shared = false;
  for (let i = 0; i < choices.length; i++) {
    const length = trimmedLength(choices[i]!);
    if (length > bestLength) {
      best = i;
      bestLength = length;
      shared = false;
    } else if (length === bestLength) shared = true;
  }
  return shared ? -1 : best;
}

/** The length of `text.trim()`, without making the trimmed string (an editor re-checks 20,000 items a keystroke). */
function trimmedLength(text: string): number {
  let start = 0;
  let end = text.length;
  while (start < end && isTrimmed(text.charCodeAt(start))) start++;
  while (end > start && isTrimmed(text.charCodeAt(end - 1))) end--;
  return end - start;
}

/** What String.prototype.trim removes: white space and line terminators. */
function isTrimmed(code: number): boolean {
  return code === 32 || (code >= 9 && code <= 13) || (code > 127 && /\s/.test(String.fromCharCode(code))) || code === 0xfeff;
}

// ---------------------------------------------------------------------------------------------
// The warnings.

export interface HealthOptions {
  minItems?: number;
  /** Per ability name, a run's measurement of its ranking's stability: its verdict replaces the rule of thumb on the count. */
  measured?: ReadonlyMap<string, MeasuredStability>;
}

/** Locates a problem at a field of an item (the caller knows the source positions). */
export type ItemLocator = (item: HealthItem, field: string, code: ProblemCode, message: string, data?: ProblemData) => Problem;

export function healthProblems(file: string, items: readonly HealthItem[], at: ItemLocator, options: HealthOptions = {}): Problem[] {
  const problems: Problem[] = [];
  const balance = answerPositionBalance(items);
  if (balance && balance.pValue < HEALTH_ALPHA) problems.push(fileProblem(file, "diag.answer-position-bias", positionMessage(balance)));
  const bias = longestAnswerBias(items);
  if (bias && bias.pValue < HEALTH_ALPHA && bias.longest > bias.expected)
    problems.push(fileProblem(file, "diag.longest-answer-bias", longestMessage(bias)));
  problems.push(...sizeProblems(items, at, options.minItems ?? MIN_ITEMS_PER_ABILITY, options.measured));
  return problems;
}

function positionMessage(b: PositionBalance): string {
  const counts = b.cells.map((c) => `${c.label} ${c.observed}/${formatCount(c.expected)}`).join(", ");
  return (
    `answer positions are unbalanced: chi-square = ${b.statistic.toFixed(1)}, df = ${b.df}, p = ${formatP(b.pValue)} ` +
    `(observed/expected: ${counts}); a model can gain by favouring a position: shuffle the choices of each item`
  );
}

function longestMessage(b: LongestAnswerBias): string {
  const share = (x: number) => `${((100 * x) / b.eligible).toFixed(1)}%`;
  return (
    `the correct answer is the strictly longest choice in ${b.longest} of ${b.eligible} items (${share(b.longest)}; ` +
    `chance ${formatCount(b.expected)}, ${share(b.expected)}; one-sided binomial test p = ${formatP(b.pValue)}); ` +
    `a model can score by picking the longest choice: make the wrong choices as long as the right one`
  );
}

/**
 * Whether each ability has items enough for a stable ranking: as a run measured it where one did
 * (`measured`), else by the count.
 */
function sizeProblems(
  items: readonly HealthItem[],
  at: ItemLocator,
  minItems: number,
  measured: ReadonlyMap<string, MeasuredStability> = new Map(),
): Problem[] {
  const byAbility = new Map<string, HealthItem[]>();
  for (const it of items) {
    const group = byAbility.get(it.ability);
    if (group) group.push(it);
    else byAbility.set(it.ability, [it]);
  }
  return [...byAbility].flatMap(([ability, group]) => {
    const m = measured.get(ability);
    if (m) {
      const verdict = stabilityVerdict(m);
      if (verdict.stable) return [];
      return [
        at(group[0]!, "ability", "diag.unstable-ranking", `ability \`${ability}\` (${group.length} items here): ${verdict.text}`, {
          ability,
        }),
      ];
    }
    if (group.length >= minItems) return [];
    return [
      at(
        group[0]!,
        "ability",
        "diag.too-few-items",
        `only ${group.length} item${group.length === 1 ? "" : "s"} for ability \`${ability}\`; at least ${minItems} are needed ` +
          `for a stable ranking of its parameters (the paper used about ${PAPER_ITEMS_PER_ABILITY}): add items, or measure ` +
          `the ranking's stability with \`ablation.stability: true\``,
        { ability },
      ),
    ];
  });
}

export function formatP(p: number): string {
  return p < 1e-4 ? p.toExponential(1) : p.toPrecision(2);
}

function formatCount(x: number): string {
  return Number.isInteger(x) ? String(x) : x.toFixed(1);
}
