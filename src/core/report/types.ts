// The report model's shape: everything a report shows, as plain data (JSON-serialisable), for
// one metric. model.ts builds it from a run; the renderers (HTML, Markdown, LaTeX, SVG), the CLI's
// tables, the VS Code views and the webview read it, most of them needing only these types.
import type { Interval } from "../analysis/bootstrap";
import type { ChoiceMetric, Metric } from "../analysis/ais";
import type { Selection } from "../config/types";
import type { RandomNull } from "../analysis/randomNull";
import type { CellMetric, ModelFluency, ModelProfile, OverlapResult, ProfileStats, VariantFluency } from "../results/schema";

export interface Report {
  /** The multiple-choice metric (generate_until benchmarks are always exact_match). */
  metric: ChoiceMetric;
  run: RunMeta;
  models: ModelReport[];
}

export interface RunMeta {
  id: string;
  created: string;
  configFile: string;
  runnerVersion: string | null;
  resultsFile: string;
  dir: string;
}

export interface BaselineRow {
  name: string;
  outputType: "multiple_choice" | "generate_until";
  items: number;
  /** Multiple choice only (null for generation). */
  acc: number | null;
  acc_norm: number | null;
  /** Generation only (null for multiple choice): exact_match under the task's first filter. */
  exact_match: number | null;
  chance: number;
  /** Generation: the filter exact_match uses, and exact_match under every filter of the task. */
  filter?: string;
  exactMatchByFilter?: Record<string, number>;
  /** A group scored as a whole: how many tasks its scores aggregate, and how they are averaged in words. */
  group?: { tasks: number; averaging: string };
  /** The task's own Python scorer (`module.function`) whose score stands in acc or exact_match. */
  scoredBy?: string;
}

/** What marks a group's row or cell: how many tasks its score is over, and how they are averaged. */
export interface GroupMark {
  tasks: number;
  /** Weighted by their documents (lm-eval's weight_by_size); else each task counts once. */
  weightBySize: boolean;
}

export interface ModelReport {
  name: string;
  path: string;
  dtype: string;
  baseline: BaselineRow[];
  /** Some benchmark is generate_until (the baseline table has an exact_match column). */
  hasGeneration: boolean;
  /** Null for a run without abilities (it only scored the benchmarks). Ranked by the first rule of `ablation.method`. */
  profile: ProfileReport | null;
  /** The profiles of the other rules when `ablation.method` lists several (results.json's other_methods); else empty. */
  otherMethods: ProfileReport[];
  /** The failure signatures found in its profiles (report/signatures.ts), first rule first; empty when healthy. */
  findings: Finding[];
}

/** A way a profile goes wrong that the paper's analyses name (docs/method.md, "Reading a profile that went wrong"). */
export type Signature = "ais-near-zero" | "fluency-collapse" | "same-ais" | "negative-ais" | "unstable-ranking" | "label-fails";

/** One failure signature found in a finished run's profile, at the largest k its report shows. */
export interface Finding {
  signature: Signature;
  method: ProfileReport["method"];
  /** `all` when the profile's candidates were every layer's weights. */
  candidate_set?: "all";
  k: number;
  /** The abilities whose diagnostic datasets it points at; empty when it is about the whole profile. */
  abilities: string[];
  /** The labelled benchmark it points at (a failing label check). */
  benchmark?: string;
  /** The config key it points at when it is about the whole profile (`ablation.k`, `ablation.candidates`). */
  setting?: ["ablation", "k" | "candidates"];
  /** What was found, in one sentence. */
  title: string;
  /** The numbers that trigger it. */
  figures: string;
  /** The threshold they crossed, in words. */
  threshold: string;
  /** What to do about it. */
  remedy: string;
}

/** A model's rules side by side at one k (ruleComparisons), in the config's order. */
export interface RuleComparison {
  k: number;
  rules: {
    method: ProfileReport["method"];
    candidate_set?: "all";
    /** Labelled benchmarks whose ability's top set hurts them more than any other benchmark. */
    labelsHold: number;
    labelsChecked: number;
    /** Per ability, the share of its top set whose zeroing lowers its own loss (null where not counted). */
    lowering: { ability: string; share: number | null }[];
  }[];
}

/** A model's profile (results.json's ModelProfile) as reports show it: its variants laid out by k. */
export interface ProfileReport extends Pick<
  ModelProfile,
  "parameters" | "candidates" | "candidate_set" | "selections" | "method" | "seed" | "abilities"
> {
  /** The whole sweep, ascending (sections may show fewer: buildReport's options.k). */
  k: number[];
  /** The bootstrap's settings; its seed is results.json's alone. */
  bootstrap: Omit<ModelProfile["bootstrap"], "seed">;
  /** Limit of the diverging colour scale, shared by every heatmap of the model. */
  scaleLimit: number;
  /** How the profile's cells were starred; absent in runs made before it (a star was then an interval excluding 0). */
  stats?: ProfileStats;
  /** What a star means in this profile's tables, in words (report/stars.ts): the correction, or "the interval excludes 0". */
  starWords: string;
  /** The unablated model's fluency measure and its threshold; absent in runs made before it existed. */
  fluency?: ModelFluency;
  sections: KSection[];
}

/** Everything about one k of the sweep. */
export interface KSection {
  k: number;
  /** Parameters zeroed: floor(k x parameters). */
  n: number;
  benchmarks: string[];
  /** The metric of each benchmark's cells, in the order of `benchmarks`. */
  metrics: Metric[];
  /** Column headers: the benchmark's name, with its metric in parentheses when the columns' metrics differ. */
  columns: string[];
  /** The metrics shown, for titles: "acc", or "acc; exact_match for generate_until benchmarks". */
  metricLabel: string;
  /** Top abilities in config order, then chunked top sets, bottom ones, the random control. */
  rows: ReportRow[];
  /** Each ability's chunked top set (the released code's rule) against its exact top n, in ability order; empty without top_chunked. */
  chunked: ChunkedComparison[];
  /** Each ability's ranking stability at this k (two seeded halves of its items), in ability order; empty when the run did not measure it. */
  stability: StabilityAtK[];
  /** Why AIS (or specificity) is undefined where it is; cells refer to these by number (1-based). */
  reasons: string[];
  /** Some top cell has a specificity (random ran). */
  hasSpecificity: boolean;
  overlap: OverlapResult | null;
  heatmap: Heatmap;
  /** Cells of this metric with a negative AIS, with the documents that flipped. */
  negativeCells: NegativeCell[];
  /** The config's ability labels of benchmarks against this k's AIS, in benchmark order; empty without labels. */
  labels: LabelCheck[];
  /** The config's expected abilities of benchmarks (`expects`) against this k's AIS, in benchmark order; empty without `expects`. */
  expectations: ExpectationCheck[];
  /** Each ability with a second diagnostic set (`of`): its two AIS rows compared at this k; empty without one. */
  consistency: ConsistencyCheck[];
  /** Two abilities ablated together at this k (ablation.pairs), under the first rule; empty without pairs. */
  pairs: PairReport[];
  /** Each benchmark's signal, noise and snr at this k under its column's metric, snr descending; empty in runs without it. */
  noise: NoiseRow[];
  /** The random control's draws at this k when there are several (ablation.random_draws): the top cells' random null is over them; else null. */
  randomDraws: number | null;
  /** Some cell of the section is saturated (its legend explains the mark). */
  hasSaturated: boolean;
  /** Some cell of the section has a p-value (a run with the tests: its tests table). */
  hasTests: boolean;
}

/** One benchmark's noise at one k (results' ModelProfile.noise): the spread of the abilities' AIS over its noise. */
export interface NoiseRow {
  benchmark: string;
  /** The section's column header of the benchmark. */
  column: string;
  metric: Metric;
  signal: number;
  noise: number;
  /** Null when the noise is 0. */
  snr: number | null;
  /** snr below 1: the abilities' differences on this benchmark are within its noise. */
  isNoise: boolean;
}

/** A pair of abilities ablated together at one k: per benchmark (the section's metric) its AIS and interference. */
export interface PairReport {
  abilities: [string, string];
  /** Weights zeroed: the union of the two top sets. */
  n: number;
  cells: {
    benchmark: string;
    ais: number | null;
    ci: Interval | null;
    /** AIS(A+B) - AIS(A) - AIS(B). */
    interference: number | null;
    interferenceCi: Interval | null;
    /** Starred over the pair table (as ReportCell.significant). */
    significant: boolean;
    /** Number of the reason in the section's `reasons` where the interference is undefined and the run says why (saturation). */
    reason?: number;
    /** The interference's p and its q over the pair table; absent in runs before them. */
    p?: number | null;
    q?: number | null;
  }[];
}

/** An ability's AIS row against its second diagnostic set's at one k (report/consistency.ts). */
export interface ConsistencyCheck {
  ability: string;
  /** The second set's name (its row). */
  set: string;
  /** Benchmarks where both AIS are defined (the correlation's pairs). */
  benchmarks: number;
  /** Spearman's rank correlation of the two rows across those benchmarks; null with fewer than 3 or a constant row. */
  rankCorrelation: number | null;
  /** Benchmarks where one set's interval excludes the other set's AIS. */
  disagreements: { benchmark: string; ais: number; setAis: number }[];
}

/**
 * What a benchmark was expected to need (`expects`) against what the profile measured at one k:
 * an ability "shows" when its top set's AIS on the benchmark is positive and its interval excludes 0.
 */
export interface ExpectationCheck {
  benchmark: string;
  /** The expected abilities in the config's order, with the AIS of their top sets (null: undefined or not ablated). */
  expected: { ability: string; weight: number | null; ais: number | null; significant: boolean }[];
  /** Expected abilities that show. */
  confirmed: string[];
  /** Abilities not expected that show. */
  unexpected: string[];
  /**
   * With weights: Spearman's rank correlation of the weights (0 for an ability not listed) with the
   * AIS, over the profile's abilities whose AIS is defined; null without weights, with fewer than 3, or a constant side.
   */
  rankCorrelation: number | null;
}

/**
 * A benchmark the config labels with an ability, checked against the profile at one k: ablating
 * the ability's top set should hurt this benchmark more than any benchmark without that label.
 */
export interface LabelCheck {
  benchmark: string;
  ability: string;
  /** AIS of the ability's top set on the benchmark; null when undefined or the ability has no top variant. */
  ais: number | null;
  /** The largest defined AIS of the same row on a benchmark not labelled with the ability. */
  largestOther: { benchmark: string; ais: number } | null;
  /** `ais` is defined and larger than `largestOther`. */
  holds: boolean;
}

/** How much the top n ranked from two seeded halves of an ability's items share at one k. */
export interface StabilityAtK {
  ability: string;
  halves: [number, number];
  n: number;
  shared: number;
  jaccard: number;
}

/** An ability's `top_chunked` set at one k against the exact top n (results' `exact_top`). */
export interface ChunkedComparison {
  ability: string;
  /** Weights in the chunked set (a little more than n). */
  chunkedN: number;
  /** n = floor(k x parameters), the exact top set's size. */
  topN: number;
  shared: number;
  jaccard: number;
}

export interface ReportRow {
  label: string;
  ability: string | null;
  selection: Selection;
  /**
   * Of the section's n zeroed weights, those whose zeroing lowers the ability's own loss (first
   * order), and their share of n; top and bottom rows.
   */
  lowering?: { count: number; share: number };
  /** The variant's fluency measure against the model's; when it is not fluent its heatmap cells are greyed. */
  fluency?: VariantFluency;
  cells: ReportCell[];
}

export interface ReportCell {
  benchmark: string;
  /** The metric the cell is computed under (the benchmark's own). */
  metric: Metric;
  baseline: number;
  ablated: number;
  chance: number;
  ais: number | null;
  ci: Interval | null;
  /**
   * Starred: its q over its table is below the profile's threshold (in runs before stats: its
   * interval excludes 0); never a saturated cell.
   */
  significant: boolean;
  /** Number of the reason in the section's `reasons`, when `ais` is null. */
  reason?: number;
  note?: string;
  /** The cell's test: its two-sided p, its q over the table, which test; absent in runs made before them. */
  p?: number | null;
  q?: number | null;
  test?: CellMetric["test"];
  /** The interval excludes 0 (the uncorrected criterion); absent in runs before stats. */
  intervalExcludes0?: boolean;
  /** The ablated score is at chance: marked beside its figure. */
  saturated?: true;
  /** A top cell against the random control's draws at its k (ablation.random_draws > 1). */
  randomNull?: RandomNull;
  specificity?: {
    value: number | null;
    ci: Interval | null;
    significant: boolean;
    reason?: number;
    p?: number | null;
    q?: number | null;
    test?: CellMetric["test"];
  };
  flips: { rightToWrong: number; wrongToRight: number };
  /** The column is a group: the cell's scores aggregate its tasks'. */
  group?: GroupMark;
}

export interface NegativeCell {
  row: string;
  ability: string | null;
  selection: Selection;
  benchmark: string;
  metric: Metric;
  ais: number;
  ci: Interval | null;
  /** Starred (ReportCell.significant). */
  significant: boolean;
  /** Its q over its table; absent in runs before them. */
  q?: number | null;
  rightToWrong: number;
  wrongToRight: number;
  /** Both directions, in document order; empty when the items were not read. */
  documents: FlippedDocument[];
  /** Documents left out by ReportOptions.maxDocuments. */
  omitted: number;
  /** Why the documents could not be recovered (a missing item file). */
  error?: string;
}

export type FlippedDocument = ChoiceDocument | GenerationDocument;

/** A multiple-choice document that flipped. */
export interface ChoiceDocument {
  /** Never set: documents without a kind are multiple choice. */
  kind?: "multiple_choice";
  /** Document index in the benchmark's test split. */
  index: number;
  direction: "right_to_wrong" | "wrong_to_right";
  target: number;
  baselinePrediction: number;
  ablatedPrediction: number;
  /** Summed log-likelihood of each choice, before and after the ablation. */
  baselineLogprobs: number[];
  ablatedLogprobs: number[];
  /** UTF-8 length of each choice (acc_norm compares log-likelihood per byte). */
  choiceBytes: number[];
}

/** A generated document that flipped: the answer and the generation (cut at the stop string) before and after. */
export interface GenerationDocument {
  kind: "generate_until";
  index: number;
  direction: "right_to_wrong" | "wrong_to_right";
  target: string;
  baselineAnswer: string;
  ablatedAnswer: string;
  baselineResponse: string;
  ablatedResponse: string;
}

/** What the browser needs to draw one AIS heatmap with chart.js; colours are computed here. */
export interface Heatmap {
  id: string;
  title: string;
  rows: string[];
  columns: string[];
  /** Row indices where a new group (bottom selections, the random control) starts. */
  groupStarts: number[];
  cells: HeatmapCell[];
  scale: { limit: number; ticks: number[]; tickLabels: string[]; stops: string[]; title: string };
  undefinedFill: string;
}

export interface HeatmapCell {
  row: number;
  column: number;
  value: number | null;
  /** "0.31*", "−0.12", "n/a". */
  label: string;
  /** The reason's number, drawn small after "n/a". */
  footnote?: string;
  fill: string;
  text: string;
  significant: boolean;
  tooltip: string[];
}

/** What a heatmap's cells show: the AIS of each row's variant, or (top rows) its specificity against the random control. */
export type HeatmapMeasure = "ais" | "specificity";
