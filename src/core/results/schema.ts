// results.json: what a run's results hold, per model, benchmark and variant (documented in
// docs/results-schema.md), and the figures made from a bootstrap estimate for a cell.
import type { ReviewRecord } from "../diagnostic/review/forRun";
import type { BenchmarkAccuracy } from "../analysis/accuracy";
import type { Metric } from "../analysis/ais";
import type { BootstrapEstimate, Interval } from "../analysis/bootstrap";
import type { BenchmarkExactMatch } from "../analysis/generation";
import type { ImportanceMethod, Selection } from "../config/types";
import type { ExpectedAbility } from "../config/resolved";
import type { Correction } from "../analysis/multipleComparisons";
import type { RandomNull } from "../analysis/randomNull";

export const RESULTS_SCHEMA_VERSION = 1;

export interface Results {
  schema: "bprof.results";
  schema_version: number;
  run_id: string;
  created: string;
  config_file: string;
  runner_version?: string;
  /** Where the runner ran: "this machine", "gpu1 over SSH", "Slurm on login1". Absent in files written before targets. */
  target?: string;
  models: ModelResults[];
}

/** A multiple-choice benchmark's baseline scores. Files written before generation support lack `output_type`. */
/** Where a benchmark's documents were read, so a view can tell when the file changed since the run. */
export interface DataFileRecord {
  /** The data file of the test split (absolute); absent in files written before it was recorded. */
  data_file?: string;
  /** SHA-256 of its bytes when the run started. */
  data_sha256?: string;
}

export interface ChoiceBenchmarkResult extends BenchmarkAccuracy, DataFileRecord {
  name: string;
  task_file: string;
  output_type?: "multiple_choice";
  /** The ability the config labels the benchmark with, when it does. */
  ability?: string;
  /** The abilities the config expects the benchmark to need (`expects`), with their weights when it gives them. */
  expects?: ExpectedAbility[];
  /** The task's own Python scorer (`module.function`) whose score `acc` is the mean of, when it has one. */
  scored_by?: string;
}

/** A generate_until benchmark's baseline scores: exact_match (chance 0), no acc or acc_norm. */
export interface GenerationBenchmarkResult extends BenchmarkExactMatch, DataFileRecord {
  name: string;
  task_file: string;
  output_type: "generate_until";
  ability?: string;
  expects?: ExpectedAbility[];
  /** The task's own Python scorer (`module.function`) whose score `exact_match` is the mean of, when it has one. */
  scored_by?: string;
}

export type BenchmarkResult = ChoiceBenchmarkResult | GenerationBenchmarkResult;

export function isGenerationResult(b: BenchmarkResult): b is GenerationBenchmarkResult {
  return b.output_type === "generate_until";
}

export interface ModelResults {
  name: string;
  path: string;
  dtype: string;
  /**
   * The special tokens put around every context and diagnostic item (docs/prompts.md): the
   * tokenizer's own, or the config's `add_bos_token`. Absent in runs made before it was recorded,
   * which added none (lm-eval before 0.4.10).
   */
  special_tokens?: { before: number[]; after: number[]; source: "tokenizer" | "add_bos_token" };
  benchmarks: BenchmarkResult[];
  /**
   * The lm-eval groups of the config that lm-eval scores as a whole (aggregate_metric_list), with
   * the baseline's aggregates; absent when there are none.
   */
  groups?: GroupResult[];
  /** Present when the config has abilities (a `profile` run); ranked by the first rule of `ablation.method`. */
  profile?: ModelProfile;
  /**
   * When `ablation.method` lists several rules: the profiles of the rules after the first, in its
   * order, each from the same gradient pass with its own rankings, variants and AIS.
   */
  other_methods?: ModelProfile[];
}

/** A model's profiles, one per importance rule in the config's order (none for a run without abilities). */
export function profilesOf(model: Pick<ModelResults, "profile" | "other_methods">): ModelProfile[] {
  return model.profile ? [model.profile, ...(model.other_methods ?? [])] : [];
}

/** A group of benchmarks scored as lm-eval scores the group: a mean of its tasks' scores. */
export interface GroupResult {
  name: string;
  /** Every task under the group, nested groups flattened, by benchmark name. */
  tasks: string[];
  /** One per metric the group is scored by, in its aggregate_metric_list's order. */
  aggregates: GroupAggregateResult[];
}

export interface GroupAggregateResult {
  metric: Metric;
  /** The filter pipeline of the tasks' scores (lm-eval's `metric,filter`): `none` for multiple choice. */
  filter: string;
  /** The tasks' scores are weighted by their number of documents; else each task counts once. */
  weight_by_size: boolean;
  /** The tasks the aggregate is over: those scored by the metric under the filter, with documents. */
  tasks: string[];
  /** Their documents in all. */
  items: number;
  /** The unablated model's aggregate score. */
  score: number;
  /** The tasks' chance, aggregated the same way. */
  chance: number;
}

/** The ability pipeline's results for one model (docs/results-schema.md). */
/** The unablated model's fluency measure (docs/method.md, "Fluency"), and the threshold its variants are held to. */
export interface ModelFluency {
  /** `built-in`, or the config's `ablation.fluency.text` file. */
  text: string;
  /** Tokens scored (the paragraphs' continuations). */
  tokens: number;
  /** Mean log-likelihood per token of the text, in nats. */
  loglik_per_token: number;
  /** exp(-loglik_per_token). */
  perplexity: number;
  /** A variant whose perplexity exceeds this many times `perplexity` is marked as not fluent. */
  max_perplexity_ratio: number;
}

/** A variant's fluency measure against the model's. */
export interface VariantFluency {
  loglik_per_token: number;
  perplexity: number;
  /** Its perplexity over the unablated model's. */
  perplexity_ratio: number;
  /** perplexity_ratio is at most the profile's max_perplexity_ratio. */
  fluent: boolean;
}

/** Two abilities ablated together at one k (ablation.pairs): the union of their top sets under the first rule. */
export interface PairResult {
  abilities: [string, string];
  ability_ids: [string, string];
  k: number;
  /** Weights zeroed: the size of the union. */
  n: number;
  scores_file: string;
  items_file: string;
  /** Per benchmark and metric: AIS(A+B) and the interference AIS(A+B) - AIS(A) - AIS(B), each with its interval. */
  benchmarks: ({ name: string } & Partial<Record<Metric, PairCell>>)[];
}

export interface PairCell {
  ais: number | null;
  ci: Interval | null;
  /** Null when undefined: an AIS of the three is undefined, or the pair or either ability alone is saturated (`reason`). */
  interference: number | null;
  interference_ci: Interval | null;
  /** Why `interference` is null: "saturated: not defined" when a score it is made of is at chance (significance.ts isSaturated). */
  reason?: string;
  /** The interference's two-sided bootstrap p-value; its q over the pair table (ModelProfile.stats). Absent in runs before them. */
  p?: number | null;
  q?: number | null;
  /** Starred: q below the profile's threshold (before stats: the interval excludes 0). */
  significant: boolean;
}

export interface ModelProfile {
  /** P: every parameter of the model once, as the runner counted it. */
  parameters: number;
  /** The MLP weights that can be ablated. */
  candidates: number;
  k: number[];
  selections: Selection[];
  /** How importance was read off the gradient sums; results written before it existed are `paper`. */
  method: ImportanceMethod;
  seed: number;
  bootstrap: { resamples: number; confidence: number; seed: number };
  /** `of`: the ability this entry is a second diagnostic set of (the config's `of`). */
  abilities: { name: string; id: string; sequences: number; of?: string; review?: ReviewRecord }[];
  variants: VariantResult[];
  overlap: OverlapResult[];
  /** Per ability, how stable its ranking is (two seeded halves of its items); only in runs with `ablation.stability`. */
  stability?: AbilityStability[];
  /** How the stars of this profile were set (absent in runs before them: a star was an interval excluding 0). */
  stats?: ProfileStats;
  /** Per k, metric and benchmark, how much of its profile is signal (analysis/noise.ts); absent before it, or with fewer than two abilities. */
  noise?: NoiseResult[];
  /**
   * The random control's draws after the first (ablation.random_draws), per k: their AIS per
   * benchmark; absent with one draw. The first draw is the random variant itself.
   */
  random_draws?: RandomDrawResult[];
  /** Two abilities ablated together (ablation.pairs), in the first rule's profile; absent without pairs. */
  pairs?: PairResult[];
  /** The unablated model's fluency measure; absent in runs made before it existed. */
  fluency?: ModelFluency;
  /** `all` when the attention projections' weights were candidates too (`ablation.candidates`); absent: the MLP's only. */
  candidate_set?: "all";
}

/** The config's `stats`: which correction set the stars over each table, at which threshold, and the effect the power is checked for. */
export interface ProfileStats {
  correction: Correction;
  /** A cell is starred when its q (its p with `none`) is below this. */
  threshold: number;
  min_effect: number;
}

/** One benchmark's noise under one k and metric: the spread of the abilities' AIS over the spread of chance (BenchmarkNoise). */
export interface NoiseResult {
  k: number;
  metric: Metric;
  benchmark: string;
  signal: number;
  noise: number;
  snr: number | null;
}

/** A random draw after the first at one k: n weights drawn with its own seed, its cells' ablated score and AIS. */
export interface RandomDrawResult {
  k: number;
  /** 1, 2, ...: the first draw (0) is the random variant. */
  draw: number;
  n: number;
  scores_file: string;
  items_file: string;
  benchmarks: ({ name: string } & Partial<Record<Metric, { ablated: number; ais: number | null }>>)[];
}

/** An ability's top sets ranked from two seeded halves of its diagnostic items, compared per k. */
export interface AbilityStability {
  ability: string;
  ability_id: string;
  /** Items in the first half and in the second. */
  halves: [number, number];
  /** Per k of the sweep, ascending: n = floor(k x parameters), the weights the halves' top n share, their Jaccard index. */
  by_k: { k: number; n: number; shared: number; jaccard: number }[];
}

/** A chunked top set against the exact top n of the same ability and k. */
export interface ExactTopComparison {
  n: number;
  shared: number;
  /** shared / (chunked size + n - shared). */
  jaccard: number;
}

export interface VariantResult {
  /** The ability's name; null for the random control. */
  ability: string | null;
  /** The runner's id of the ability (file names); null for the random control. */
  ability_id: string | null;
  selection: Selection;
  k: number;
  /** Parameters zeroed: floor(k x parameters). */
  n: number;
  /**
   * Of the n, the weights whose zeroing lowers the ability's own diagnostic loss to first order
   * (-theta x g < 0); top and bottom variants only.
   */
  lowering?: number;
  /**
   * `top_chunked` variants: the exact top set of the same k (its size n = floor(k x parameters)),
   * how many weights the chunked set shares with it, and their Jaccard index.
   */
  exact_top?: ExactTopComparison;
  /** The runner's scores, relative to the model's folder. */
  scores_file: string;
  /** Scored items (as items.jsonl), relative to the model's folder. */
  items_file: string;
  benchmarks: VariantBenchmark[];
  /** The variant's cells on each group of ModelResults.groups (`name`: the group's), under the group's metrics; absent without groups. */
  groups?: VariantBenchmark[];
  /** Its fluency measure against the model's (ModelProfile.fluency); absent when the run has none. */
  fluency?: VariantFluency;
}

/**
 * A variant's cells on one benchmark, one per metric of the benchmark: `acc` and `acc_norm` for
 * multiple choice, `exact_match` for generate_until.
 */
export interface VariantBenchmark {
  name: string;
  acc?: CellMetric;
  acc_norm?: CellMetric;
  exact_match?: CellMetric;
}

export interface CellMetric {
  baseline: number;
  ablated: number;
  chance: number;
  /** Null when undefined (baseline at or below chance); `reason` says why. */
  ais: number | null;
  reason?: string;
  ci: Interval | null;
  /**
   * Starred: the cell's q over its table (model x rule x k x metric; ModelProfile.stats) is
   * below the threshold. In runs before stats: the interval excludes 0.
   */
  significant: boolean;
  /** The two-sided p-value of "no effect" by `test`; null where AIS is undefined. Absent in runs before them. */
  p?: number | null;
  /** mcnemar: exact, on the flips (0/1 scores); bootstrap: the paired bootstrap's (a task's own scores, groups). */
  test?: "mcnemar" | "bootstrap";
  /** p adjusted over the table by ModelProfile.stats.correction. */
  q?: number | null;
  /** The interval excludes 0 (the uncorrected criterion, shown beside the star). */
  interval_excludes_0?: boolean;
  /** The ablated score is at chance (at or below it, or its AIS interval reaches 1): the benchmark can fall no further, and AIS is at its ceiling. */
  saturated?: true;
  /** A top cell against every random draw at its k (ablation.random_draws; analysis/randomNull.ts). */
  random_null?: RandomNull;
  /** Resamples left out of the interval because their baseline was at or below chance. */
  undefined_resamples: number;
  note?: string;
  /** AIS of this variant minus AIS of the random control at the same k (top variants, when random ran). */
  specificity?: Specificity;
  flips: { right_to_wrong: number; wrong_to_right: number };
}

export interface Specificity {
  /** AIS(top) minus the random draws' mean AIS; null when undefined or either side is saturated (`reason`). */
  value: number | null;
  reason?: string;
  ci: Interval | null;
  /** Starred over the profile's specificity table, as CellMetric.significant. */
  significant: boolean;
  p?: number | null;
  test?: "mcnemar" | "bootstrap";
  q?: number | null;
}

/** A cell's AIS fields from its bootstrap estimate (the scores and flips come from elsewhere). */
export function estimateFields(e: BootstrapEstimate): Omit<CellMetric, "baseline" | "ablated" | "chance" | "flips" | "specificity"> {
  return {
    ais: e.estimate.defined ? e.estimate.value : null,
    ...(e.estimate.defined ? {} : { reason: e.estimate.reason }),
    ci: e.interval,
    significant: e.significant,
    p: e.p,
    test: "bootstrap",
    interval_excludes_0: e.significant,
    undefined_resamples: e.undefinedResamples,
    ...(e.note ? { note: e.note } : {}),
  };
}

/** A top cell's specificity from its bootstrap estimate against the random control. */
export function specificityOf(e: BootstrapEstimate): Specificity {
  return {
    value: e.estimate.defined ? e.estimate.value : null,
    ...(e.estimate.defined ? {} : { reason: e.estimate.reason }),
    ci: e.interval,
    significant: e.significant,
    p: e.p,
    test: "bootstrap",
  };
}

export interface OverlapResult {
  k: number;
  n: number;
  /** Ability names, the order of the matrices' rows and columns. */
  abilities: string[];
  /** |A n B| of the top sets; the diagonal holds each set's size. */
  intersections: number[][];
  /** |A n B| / |A u B|. */
  jaccard: number[][];
}
