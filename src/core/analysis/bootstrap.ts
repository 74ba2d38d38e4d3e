// Confidence intervals for AIS by a paired bootstrap over benchmark items (docs/method.md, "What
// this project adds": the original reports AIS without uncertainty although a few hundred items make
// differences of a few points noise).
//
// Paired: each resample draws item indices with replacement once, and the baseline score, the
// ablated score and chance are all recomputed on those same items, so the item-to-item
// variation common to baseline and variant cancels out of their difference.
//
// Why it is fast: a resample is stored as how often it drew each item (its multiplicity), and
// one set of resamples serves every cell of a benchmark. The baseline's correct count per
// resample is computed once per benchmark; a variant's count differs from it only on the items
// whose correctness the ablation flipped, so a cell costs resamples x flipped items instead of
// resamples x items. Multiplicities are packed several resamples to a float64 (see Resamples),
// which divides that cost once more by the number of lanes.
import { abilityImpactScore, CHANCE_TOLERANCE, meanOf, type AbilityImpact, type ScoreVector } from "./ais";
import { randomInt, seededRandom } from "../base/random";

export const DEFAULT_RESAMPLES = 1000;
export const DEFAULT_BOOTSTRAP_SEED = 0;
export const DEFAULT_CONFIDENCE = 0.95;

export interface BootstrapOptions {
  /** Number of bootstrap resamples; 1000 by default. */
  resamples?: number;
  /** Seed of the resample draws; the same seed and item count give the same resamples. */
  seed?: number;
  /** Coverage of the two-sided percentile interval; 0.95 by default. */
  confidence?: number;
}

export interface Interval {
  low: number;
  high: number;
  /** Coverage it was computed for, e.g. 0.95 for the 2.5% and 97.5% percentiles. */
  confidence: number;
}

export interface BootstrapEstimate {
  /** The statistic on all items (not a bootstrap mean). */
  estimate: AbilityImpact;
  /** Percentile interval over the resamples where the statistic is defined; null when none is, or the estimate is undefined. */
  interval: Interval | null;
  /** The interval excludes 0. */
  significant: boolean;
  /**
   * The two-sided bootstrap p-value of "the statistic is 0": 2 min(1 + #{v <= 0}, 1 + #{v >= 0}) /
   * (R + 1) over the defined resamples v, the level at which the percentile interval would just
   * reach 0; null where the interval is.
   */
  p: number | null;
  /** The defined resamples' standard deviation; null where the interval is. */
  sd: number | null;
  resamples: number;
  /** Resamples whose baseline fell to or below chance, so AIS was undefined there and left out of the interval. */
  undefinedResamples: number;
  /** Present when resamples were left out, saying how many, so no reader mistakes the interval's basis. */
  note?: string;
}

/** The options' resamples, confidence and seed, the defaults where they give none. */
export function bootstrapSettings(options: BootstrapOptions = {}): Required<BootstrapOptions> {
  return {
    resamples: options.resamples ?? DEFAULT_RESAMPLES,
    seed: options.seed ?? DEFAULT_BOOTSTRAP_SEED,
    confidence: options.confidence ?? DEFAULT_CONFIDENCE,
  };
}

/** The two-sided percentile interval of `values` (sorted in place) at `confidence`; null when there are none. */
export function percentileInterval(values: number[], confidence: number): Interval | null {
  if (values.length === 0) return null;
  values.sort((x, y) => x - y);
  const tail = (1 - confidence) / 2;
  return { low: percentile(values, tail), high: percentile(values, 1 - tail), confidence };
}

/**
 * The q-quantile of ascending `sorted`, by linear interpolation between closest ranks:
 * Hyndman & Fan's definition 7, the default of numpy.percentile and R's quantile().
 */
export function percentile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) throw new RangeError("percentile of no values");
  if (!(q >= 0 && q <= 1)) throw new RangeError(`percentile: q must lie in [0, 1], got ${q}`);
  const position = (sorted.length - 1) * q;
  const below = Math.floor(position);
  const above = Math.min(below + 1, sorted.length - 1);
  const lower = sorted[below]!;
  return lower + (position - below) * (sorted[above]! - lower);
}

// ---------------------------------------------------------------------------------------------
// Resamples, packed
//
// Resample r's multiplicity of an item is an integer in [0, items], and so is the summed
// multiplicity of any set of distinct items (a resample draws `items` times in all). A float64
// adds integers below 2^53 exactly, so `lanes` resamples fit in one word as the digits of a
// number in base 2^laneBits: adding two words adds every lane at once, and no lane ever carries
// into the next. For 1000 items, 10 bits hold 1000 and 5 lanes fit.

const EXACT_BITS = 53;

/** Bootstrap draws of one item count: multiplicities per (item, resample), packed. */
export interface Resamples {
  items: number;
  resamples: number;
  seed: number;
  /** Resamples per float64 word. */
  lanes: number;
  /** 2^laneBits: the place value between neighbouring lanes. */
  laneBase: number;
  /** Words per item, ceil(resamples / lanes). */
  words: number;
  /** Item-major, so a cell reads one flipped item's words in order: [item * words + w] holds resamples w*lanes + j, weighted laneBase^j. */
  packed: Float64Array;
}

export function drawResamples(items: number, options: BootstrapOptions = {}): Resamples {
  const resamples = options.resamples ?? DEFAULT_RESAMPLES;
  const seed = options.seed ?? DEFAULT_BOOTSTRAP_SEED;
  if (!Number.isInteger(items) || items < 1) throw new RangeError(`cannot bootstrap a benchmark with ${items} items`);
  if (!Number.isInteger(resamples) || resamples < 1) throw new RangeError(`resamples must be a positive integer, got ${resamples}`);
  const laneBits = Math.ceil(Math.log2(items + 1));
  const lanes = Math.floor(EXACT_BITS / laneBits);
  if (lanes < 1) throw new RangeError(`cannot bootstrap ${items} items`);
  const laneBase = 2 ** laneBits;
  const words = Math.ceil(resamples / lanes);
  const packed = new Float64Array(items * words);
  const rand = seededRandom(seed);
  for (let r = 0; r < resamples; r++) {
    const word = Math.floor(r / lanes);
    const one = laneBase ** (r % lanes);
    for (let draw = 0; draw < items; draw++) packed[randomInt(rand, items) * words + word]! += one;
  }
  return { items, resamples, seed, lanes, laneBase, words, packed };
}

/** How often resample r drew `item`; for checks and readers, the hot paths never unpack one by one. */
export function multiplicity(drawn: Resamples, item: number, r: number): number {
  const word = drawn.packed[item * drawn.words + Math.floor(r / drawn.lanes)]!;
  return Math.floor(word / drawn.laneBase ** (r % drawn.lanes)) % drawn.laneBase;
}

/** Per resample, the summed multiplicity of `itemIds` (distinct items), unpacked into `out` times `weight`. */
export function addResampledCounts(drawn: Resamples, itemIds: ArrayLike<number>, weight: number, out: Float64Array): void {
  const { words, lanes, laneBase, packed, resamples } = drawn;
  const sums = new Float64Array(words);
  for (let k = 0; k < itemIds.length; k++) {
    const row = itemIds[k]! * words;
    for (let w = 0; w < words; w++) sums[w]! += packed[row + w]!;
  }
  for (let w = 0; w < words; w++) {
    let rest = sums[w]!;
    for (let j = 0, r = w * lanes; j < lanes && r < resamples; j++, r++) {
      const lane = rest % laneBase;
      out[r]! += weight * lane;
      rest = (rest - lane) / laneBase;
    }
  }
}

// ---------------------------------------------------------------------------------------------

/** One benchmark's resamples, shared by every (ability, k, control) cell scored on it. */
export class BenchmarkResampler {
  readonly items: number;
  readonly resamples: number;
  readonly confidence: number;
  private readonly baseline: ScoreVector;
  private readonly drawn: Resamples;
  private readonly baselineScore: number;
  private readonly chanceScore: number;
  /** Per resample: baseline correct count minus summed chance, the AIS denominator in item units. */
  private readonly margin: Float64Array;
  /** Resamples where the baseline is above chance; AIS is defined on exactly these. */
  private readonly definedResampleIds: Int32Array;

  /**
   * @param baseline per-item score of the unablated model (1 correct, 0 wrong; a task's own score in [0, 1])
   * @param chance per-item chance (1/|choices|), or one value for all items (0 for exact match)
   * @param drawn resamples already drawn for this item count and these options, to share them
   */
  constructor(baseline: ScoreVector, chance: number | ArrayLike<number>, options: BootstrapOptions = {}, drawn?: Resamples) {
    this.drawn = drawn ?? drawResamples(baseline.length, options);
    checkSharedResamples(this.drawn, baseline.length, options);
    if (typeof chance !== "number" && chance.length !== baseline.length) {
      throw new RangeError(`chance has ${chance.length} values for ${baseline.length} items`);
    }
    this.items = baseline.length;
    this.resamples = this.drawn.resamples;
    this.confidence = options.confidence ?? DEFAULT_CONFIDENCE;
    if (!(this.confidence > 0 && this.confidence < 1)) throw new RangeError(`confidence must lie in (0, 1), got ${this.confidence}`);
    assertScores(baseline, "baseline");
    this.baseline = baseline;
    this.baselineScore = meanOf(baseline);
    this.chanceScore = typeof chance === "number" ? chance : meanOf(chance);
    this.margin = this.resampledMargins(chance);
    this.definedResampleIds = idsAbove(this.margin, CHANCE_TOLERANCE * this.items);
  }

  /** AIS of one ablated variant with its paired-bootstrap interval. */
  ais(ablated: ScoreVector): BootstrapEstimate {
    const estimate = abilityImpactScore({ baseline: this.baselineScore, ablated: this.scoreOf(ablated), chance: this.chanceScore });
    return this.estimateFrom(estimate, this.lostCounts(this.baseline, ablated));
  }

  /**
   * Specificity: AIS(top) - AIS(control at the same k), e.g. the random control; against several
   * controls (the random control's draws), their mean AIS. All AIS share the denominator, so per
   * resample it is (mean control correct - top correct) / margin, on the same resampled items.
   */
  specificity(top: ScoreVector, control: ScoreVector | readonly ScoreVector[]): BootstrapEstimate {
    const controls = isScoreVector(control) ? [control] : control;
    if (controls.length === 0) throw new RangeError("specificity needs at least one control");
    const aisOf = (v: ScoreVector) =>
      abilityImpactScore({ baseline: this.baselineScore, ablated: this.scoreOf(v), chance: this.chanceScore });
    const topAis = aisOf(top);
    const controlAis = controls.map(aisOf);
    const estimate: AbilityImpact =
      topAis.defined && controlAis.every((c) => c.defined)
        ? { defined: true, value: topAis.value - controlAis.reduce((s, c) => s + (c.defined ? c.value : 0), 0) / controls.length }
        : topAis;
    const lost = new Float64Array(this.resamples);
    for (const c of controls) {
      const one = this.lostCounts(c, top);
      for (let r = 0; r < this.resamples; r++) lost[r]! += one[r]! / controls.length;
    }
    return this.estimateFrom(estimate, lost);
  }

  private scoreOf(variant: ScoreVector): number {
    if (variant.length !== this.items) throw new RangeError(`variant has ${variant.length} items, the baseline ${this.items}`);
    assertScores(variant, "variant");
    return meanOf(variant);
  }

  /**
   * Per resample, the summed score of `before` minus that of `after`. Only items where they differ
   * count, grouped by the difference: two groups (+1, -1) for correctness, one packed sum each.
   */
  private lostCounts(before: ScoreVector, after: ScoreVector): Float64Array {
    const byDifference = new Map<number, number[]>([
      [1, []],
      [-1, []],
    ]);
    for (let item = 0; item < this.items; item++) {
      const difference = before[item]! - after[item]!;
      if (difference === 0) continue;
      const group = byDifference.get(difference);
      if (group === undefined) byDifference.set(difference, [item]);
      else group.push(item);
    }
    const lost = new Float64Array(this.resamples);
    for (const [value, items] of byDifference) if (items.length > 0) addResampledCounts(this.drawn, items, value, lost);
    return lost;
  }

  /**
   * Per resample, the baseline's correct count minus the summed chance of the drawn items. Items
   * are grouped by their chance value (one group per number of choices, usually), so each group
   * costs one packed sum.
   */
  private resampledMargins(chance: number | ArrayLike<number>): Float64Array {
    const margin = new Float64Array(this.resamples);
    for (const [value, items] of itemsByValue(this.baseline)) if (value !== 0) addResampledCounts(this.drawn, items, value, margin);
    if (typeof chance === "number") {
      for (let r = 0; r < this.resamples; r++) margin[r]! -= chance * this.items;
      return margin;
    }
    for (const [value, items] of itemsByValue(chance)) {
      const drawnCount = new Float64Array(this.resamples);
      addResampledCounts(this.drawn, items, 1, drawnCount);
      for (let r = 0; r < this.resamples; r++) margin[r]! -= value * drawnCount[r]!;
    }
    return margin;
  }

  private estimateFrom(estimate: AbilityImpact, lost: Float64Array): BootstrapEstimate {
    const undefinedResamples = this.resamples - this.definedResampleIds.length;
    const base = { estimate, resamples: this.resamples, undefinedResamples, ...this.noteFor(undefinedResamples) };
    if (!estimate.defined || this.definedResampleIds.length === 0)
      return { ...base, interval: null, significant: false, p: null, sd: null };
    const values = new Float64Array(this.definedResampleIds.length);
    for (let j = 0; j < values.length; j++) {
      const r = this.definedResampleIds[j]!;
      values[j] = lost[r]! / this.margin[r]!;
    }
    values.sort();
    const tail = (1 - this.confidence) / 2;
    const interval = { low: percentile(values, tail), high: percentile(values, 1 - tail), confidence: this.confidence };
    return { ...base, interval, significant: interval.low > 0 || interval.high < 0, p: bootstrapP(values), sd: standardDeviation(values) };
  }

  private noteFor(undefinedResamples: number): { note?: string } {
    if (undefinedResamples === 0) return {};
    const kept = this.resamples - undefinedResamples;
    return {
      note: `${undefinedResamples} of ${this.resamples} resamples had a baseline at or below chance, where AIS is undefined; the interval uses the other ${kept}.`,
    };
  }
}

/** The two-sided bootstrap p-value of 0 among `values` (BootstrapEstimate.p), with the +1 that keeps it above 0. */
export function bootstrapP(values: ArrayLike<number>): number {
  let atOrBelow = 0;
  let atOrAbove = 0;
  for (let i = 0; i < values.length; i++) {
    if (values[i]! <= 0) atOrBelow++;
    if (values[i]! >= 0) atOrAbove++;
  }
  return Math.min(1, (2 * (1 + Math.min(atOrBelow, atOrAbove))) / (values.length + 1));
}

function standardDeviation(values: ArrayLike<number>): number {
  if (values.length < 2) return 0;
  let mean = 0;
  for (let i = 0; i < values.length; i++) mean += values[i]!;
  mean /= values.length;
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += (values[i]! - mean) ** 2;
  return Math.sqrt(sum / (values.length - 1));
}

function isScoreVector(v: ScoreVector | readonly ScoreVector[]): v is ScoreVector {
  return v instanceof Uint8Array || v instanceof Float64Array;
}

/** AIS compares scores on one scale: correctness (0 or 1), or a task's own score in [0, 1]. */
function assertScores(values: ScoreVector, name: string): void {
  const bad = values.findIndex((v) => !(v >= 0 && v <= 1));
  if (bad >= 0) throw new RangeError(`${name} scores must lie in [0, 1]; item ${bad} holds ${values[bad]}`);
}

function checkSharedResamples(drawn: Resamples, items: number, options: BootstrapOptions): void {
  if (drawn.items !== items) throw new RangeError(`resamples drawn for ${drawn.items} items, the baseline has ${items}`);
  if (options.resamples !== undefined && options.resamples !== drawn.resamples)
    throw new RangeError("the shared resamples were drawn with a different resample count");
  if (options.seed !== undefined && options.seed !== drawn.seed)
    throw new RangeError("the shared resamples were drawn with a different seed");
}

function idsAbove(values: Float64Array, threshold: number): Int32Array {
  const ids: number[] = [];
  for (let i = 0; i < values.length; i++) if (values[i]! > threshold) ids.push(i);
  return Int32Array.from(ids);
}

function itemsByValue(values: ArrayLike<number>): Map<number, number[]> {
  const groups = new Map<number, number[]>();
  for (let item = 0; item < values.length; item++) {
    const group = groups.get(values[item]!);
    if (group === undefined) groups.set(values[item]!, [item]);
    else group.push(item);
  }
  return groups;
}

// ---------------------------------------------------------------------------------------------

export interface GridBenchmark {
  name: string;
  /** Per-item score of the unablated model. */
  baseline: ScoreVector;
  /** Per-item chance, or one value for every item (0 for exact-match generation). */
  chance: number | ArrayLike<number>;
}

export interface GridCell {
  /** Name of the GridBenchmark the variant was scored on. */
  benchmark: string;
  /** Per-item score of the ablated model, in the baseline's item order. */
  ablated: ScoreVector;
  /** Per-item score of a control ablation at the same k (random or bottom), for specificity; several: the random control's draws, against their mean. */
  control?: ScoreVector | readonly ScoreVector[];
}

export interface GridCellEstimate<C extends GridCell> {
  cell: C;
  ais: BootstrapEstimate;
  /** AIS(ablated) - AIS(control); null when the cell has no control. */
  specificity: BootstrapEstimate | null;
}

/**
 * Intervals for many cells at once. Every benchmark is resampled with the same seed, so its
 * resamples depend only on its item count: benchmarks of equal size share one draw, and a
 * benchmark analysed alone gets the intervals it gets inside the grid.
 */
export function bootstrapGrid<C extends GridCell>(
  benchmarks: readonly GridBenchmark[],
  cells: readonly C[],
  options: BootstrapOptions = {},
): GridCellEstimate<C>[] {
  const drawnBySize = new Map<number, Resamples>();
  const resamplers = new Map<string, BenchmarkResampler>();
  for (const benchmark of benchmarks) {
    if (resamplers.has(benchmark.name)) throw new Error(`benchmark "${benchmark.name}" appears twice in the grid`);
    const size = benchmark.baseline.length;
    const drawn = drawnBySize.get(size) ?? drawResamples(size, options);
    drawnBySize.set(size, drawn);
    resamplers.set(benchmark.name, new BenchmarkResampler(benchmark.baseline, benchmark.chance, options, drawn));
  }
  return cells.map((cell) => {
    const resampler = resamplers.get(cell.benchmark);
    if (resampler === undefined) throw new Error(`cell refers to benchmark "${cell.benchmark}", which is not in the grid`);
    return {
      cell,
      ais: resampler.ais(cell.ablated),
      specificity: cell.control === undefined ? null : resampler.specificity(cell.ablated, cell.control),
    };
  });
}
