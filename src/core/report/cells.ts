// The flat shape of a run's cells, one row per (model, ability, rule, selection, k, benchmark, metric):
// what the CSV and JSON reports hold (documented in docs/report-formats.md). A benchmark has rows
// for its own metrics only: acc and acc_norm for multiple choice, exact_match for generate_until.
// A group scored as a whole has rows after the benchmarks, one per metric it is scored by, with
// `group_tasks` set.
import type { Metric } from "../analysis/ais";
import {
  profilesOf,
  type CellMetric,
  type ModelProfile,
  type ModelResults,
  type NoiseResult,
  type Results,
  type VariantBenchmark,
  type VariantResult,
} from "../results/schema";
import { DamagedRunFileError, ReportInputError, type RunItems } from "./load";
import { flippedDocuments, isStarred, matchK, METRICS, sameK, variantsAt } from "./model";

export interface CellFilter {
  /** Only this metric; every metric when absent. */
  metric?: Metric;
  /** Only this k; every k when absent. */
  k?: number;
}

export interface FlatCell {
  model: string;
  /** The ability's name; null for the random control. */
  ability: string | null;
  /** The importance rule that ranked the set (paper or signed); null for the random control, which no rule ranks. */
  method: string | null;
  /** `all` when the weights were drawn from the attention and MLP weights (`ablation.candidates`); absent: the MLP's. */
  candidates?: "all";
  selection: string;
  k: number;
  /** Parameters zeroed. */
  n: number;
  benchmark: string;
  /** acc, acc_norm (multiple choice) or exact_match (generate_until). */
  metric: Metric;
  /** Documents the benchmark scored. */
  items: number;
  baseline: number;
  ablated: number;
  chance: number;
  ais: number | null;
  ci_low: number | null;
  ci_high: number | null;
  confidence: number | null;
  /** Starred: q below the profile's threshold (in runs before stats: the interval excludes 0); never a saturated cell. */
  significant: boolean;
  /** AIS minus the random control's at the same k (top variants when random ran); null otherwise. */
  specificity: number | null;
  specificity_ci_low: number | null;
  specificity_ci_high: number | null;
  specificity_significant: boolean | null;
  right_to_wrong: number;
  wrong_to_right: number;
  undefined_resamples: number;
  /** Why the AIS is undefined; empty when it is defined. */
  reason: string;
  /** Why the specificity is undefined, where there is one and it is. */
  specificity_reason: string;
  note: string;
  /** A group's row: how many tasks its scores aggregate; absent (an empty CSV field) for a benchmark's. */
  group_tasks?: number;
  // Added with the tests (runs before them: null, but interval_excludes_0, which their star was)
  /** The two-sided p of "no effect" by `test`; null where AIS is undefined or the run predates the tests. */
  p: number | null;
  /** p adjusted over the cell's table by the profile's correction. */
  q: number | null;
  /** `mcnemar` (McNemar's exact test on the flips) or `bootstrap` (the paired bootstrap's p). */
  test: string | null;
  /** The interval excludes 0 (the uncorrected criterion). */
  interval_excludes_0: boolean;
  /** The ablated score is at chance (results/significance.ts isSaturated); null in runs before the mark. */
  saturated: boolean | null;
  specificity_p: number | null;
  specificity_q: number | null;
  specificity_test: string | null;
  /** A top cell against the random control's draws (ablation.random_draws > 1); null otherwise. */
  random_null_draws: number | null;
  random_null_mean: number | null;
  random_null_sd: number | null;
  random_null_p: number | null;
  random_null_margin: number | null;
  /** The benchmark's noise at this k and metric under the row's rule (ModelProfile.noise); null for the random control and runs without it. */
  benchmark_signal: number | null;
  benchmark_noise: number | null;
  benchmark_snr: number | null;
}

/** The columns of the CSV report, in order (the FlatCell fields). */
export const CELL_COLUMNS: readonly (keyof FlatCell)[] = [
  "model",
  "ability",
  "method",
  "selection",
  "k",
  "n",
  "benchmark",
  "metric",
  "items",
  "baseline",
  "ablated",
  "chance",
  "ais",
  "ci_low",
  "ci_high",
  "confidence",
  "significant",
  "specificity",
  "specificity_ci_low",
  "specificity_ci_high",
  "specificity_significant",
  "right_to_wrong",
  "wrong_to_right",
  "undefined_resamples",
  "reason",
  "specificity_reason",
  "note",
  "group_tasks",
  "p",
  "q",
  "test",
  "interval_excludes_0",
  "saturated",
  "specificity_p",
  "specificity_q",
  "specificity_test",
  "random_null_draws",
  "random_null_mean",
  "random_null_sd",
  "random_null_p",
  "random_null_margin",
  "benchmark_signal",
  "benchmark_noise",
  "benchmark_snr",
];

/** The run's k values a filter keeps, per model (a k given must be in every profiled model's sweep). */
function keptK(sweep: readonly number[], filter: CellFilter, model: string): number[] {
  const sorted = [...sweep].sort((a, b) => a - b);
  return filter.k === undefined ? sorted : [matchK(sorted, filter.k, model)];
}

export function checkFilter(results: Results, filter: CellFilter): void {
  if (filter.k !== undefined && !results.models.some((m) => m.profile)) {
    throw new ReportInputError(`run ${results.run_id} has no ability profile (its config has no abilities), so there is no k to choose`);
  }
}

export function flatCells(results: Results, filter: CellFilter = {}): FlatCell[] {
  checkFilter(results, filter);
  const metrics = filter.metric ? [filter.metric] : METRICS;
  const rows: FlatCell[] = [];
  for (const model of results.models) {
    if (!model.profile) continue;
    const itemsOf = new Map(model.benchmarks.map((b) => [b.name, b.items]));
    const groupOf = new Map((model.groups ?? []).map((g) => [g.name, g]));
    for (const { profile, v } of variantsOfRules(model, filter)) {
      for (const b of v.benchmarks) {
        for (const metric of metrics) {
          const cell = b[metric];
          if (cell) rows.push(flatCell(model.name, profile, v, b, metric, cell, itemsOf.get(b.name) ?? 0));
        }
      }
      for (const b of v.groups ?? []) {
        for (const metric of metrics) {
          const cell = b[metric];
          const aggregate = groupOf.get(b.name)?.aggregates.find((a) => a.metric === metric);
          if (cell && aggregate) rows.push(flatCell(model.name, profile, v, b, metric, cell, aggregate.items, aggregate.tasks.length));
        }
      }
    }
  }
  return rows;
}

/**
 * Every rule's variants at the filter's k, the rules in the config's order; the random control,
 * shared by the rules, once (with the first).
 */
function variantsOfRules(model: ModelResults, filter: CellFilter): { profile: ModelProfile; v: VariantResult }[] {
  return profilesOf(model).flatMap((profile, r) =>
    keptK(profile.k, filter, model.name).flatMap((k) =>
      variantsAt(model, k, profile)
        .filter((v) => firstOfItsSet(model, r) || v.ability !== null)
        .map((v) => ({ profile, v })),
    ),
  );
}

/** Whether profile r is its candidate set's first: the random control of a set is listed once, with it. */
export function firstOfItsSet(model: ModelResults, r: number): boolean {
  const profiles = profilesOf(model);
  return profiles.findIndex((p) => p.candidate_set === profiles[r]!.candidate_set) === r;
}

function flatCell(
  model: string,
  profile: ModelProfile,
  v: VariantResult,
  b: VariantBenchmark,
  metric: Metric,
  cell: CellMetric,
  items: number,
  groupTasks?: number,
): FlatCell {
  const s = cell.specificity;
  const noise =
    v.ability === null ? undefined : profile.noise?.find((x) => sameK(x.k, v.k) && x.benchmark === b.name && x.metric === metric);
  const r = cell.random_null;
  return {
    model,
    ability: v.ability,
    method: v.ability === null ? null : profile.method,
    ...(profile.candidate_set ? { candidates: profile.candidate_set } : {}),
    selection: v.selection,
    k: v.k,
    n: v.n,
    benchmark: b.name,
    metric,
    items,
    baseline: cell.baseline,
    ablated: cell.ablated,
    chance: cell.chance,
    ais: cell.ais,
    ci_low: cell.ci?.low ?? null,
    ci_high: cell.ci?.high ?? null,
    confidence: cell.ci?.confidence ?? null,
    significant: isStarred(cell),
    specificity: s?.value ?? null,
    specificity_ci_low: s?.ci?.low ?? null,
    specificity_ci_high: s?.ci?.high ?? null,
    specificity_significant: s ? s.value !== null && s.significant : null,
    right_to_wrong: cell.flips.right_to_wrong,
    wrong_to_right: cell.flips.wrong_to_right,
    undefined_resamples: cell.undefined_resamples ?? 0,
    reason: cell.ais === null ? (cell.reason ?? "AIS is undefined") : "",
    specificity_reason: s && s.value === null ? (s.reason ?? "specificity is undefined") : "",
    note: cell.note ?? "",
    ...(groupTasks !== undefined ? { group_tasks: groupTasks } : {}),
    p: cell.p ?? null,
    q: cell.q ?? null,
    test: cell.test ?? null,
    // before stats the star was the interval's criterion
    interval_excludes_0: cell.interval_excludes_0 ?? (cell.ais !== null && cell.significant),
    saturated: profile.stats ? cell.saturated === true : null,
    specificity_p: s?.p ?? null,
    specificity_q: s?.q ?? null,
    specificity_test: s?.test ?? null,
    random_null_draws: r?.draws ?? null,
    random_null_mean: r?.mean ?? null,
    random_null_sd: r?.sd ?? null,
    random_null_p: r?.p ?? null,
    random_null_margin: r?.margin ?? null,
    benchmark_signal: noise?.signal ?? null,
    benchmark_noise: noise?.noise ?? null,
    benchmark_snr: noise?.snr ?? null,
  };
}

/** A benchmark's noise at one k and metric, under one rule (results' ModelProfile.noise). */
export interface FlatNoise extends NoiseResult {
  model: string;
  method: string;
  candidates?: "all";
  /** snr below 1: the abilities' differences on the benchmark are within its noise. */
  is_noise: boolean;
}

export function flatNoise(results: Results, filter: CellFilter = {}): FlatNoise[] {
  const rows: FlatNoise[] = [];
  for (const model of results.models) {
    for (const profile of profilesOf(model)) {
      const ks = keptK(profile.k, filter, model.name);
      for (const n of profile.noise ?? []) {
        if (!ks.some((k) => sameK(k, n.k)) || (filter.metric && n.metric !== filter.metric)) continue;
        rows.push({
          model: model.name,
          method: profile.method,
          ...(profile.candidate_set ? { candidates: profile.candidate_set } : {}),
          k: n.k,
          metric: n.metric,
          benchmark: n.benchmark,
          signal: n.signal,
          noise: n.noise,
          snr: n.snr,
          is_noise: n.snr !== null && n.snr < 1,
        });
      }
    }
  }
  return rows;
}

export interface FlatOverlap {
  model: string;
  /** The importance rule whose top sets these are. */
  method: string;
  k: number;
  n: number;
  ability_a: string;
  ability_b: string;
  /** |A n B| of the two top sets (on the diagonal, the set's size). */
  intersection: number;
  jaccard: number;
}

export function flatOverlap(results: Results, filter: CellFilter = {}): FlatOverlap[] {
  const rows: FlatOverlap[] = [];
  for (const model of results.models) {
    for (const profile of profilesOf(model)) {
      const ks = keptK(profile.k, filter, model.name);
      for (const o of profile.overlap ?? []) {
        if (!ks.some((k) => Math.abs(k - o.k) <= 1e-9 * Math.max(k, o.k))) continue;
        o.abilities.forEach((a, i) =>
          o.abilities.forEach((b, j) => {
            rows.push({
              model: model.name,
              method: profile.method,
              k: o.k,
              n: o.n,
              ability_a: a,
              ability_b: b,
              intersection: o.intersections[i]![j]!,
              jaccard: o.jaccard[i]![j]!,
            });
          }),
        );
      }
    }
  }
  return rows;
}

/** An ability's chunked top set at one k against its exact top n (results' `exact_top`). */
export interface FlatChunked {
  model: string;
  /** The importance rule whose top sets these are. */
  method: string;
  ability: string;
  k: number;
  /** The exact top set's size, floor(k x parameters). */
  n: number;
  /** The chunked set's size. */
  chunked_n: number;
  shared: number;
  jaccard: number;
}

export function flatChunked(results: Results, filter: CellFilter = {}): FlatChunked[] {
  const rows: FlatChunked[] = [];
  for (const model of results.models) {
    for (const { profile, v } of variantsOfRules(model, filter)) {
      if (!v.exact_top || v.ability === null) continue;
      rows.push({
        model: model.name,
        method: profile.method,
        ability: v.ability,
        k: v.k,
        n: v.exact_top.n,
        chunked_n: v.n,
        shared: v.exact_top.shared,
        jaccard: v.exact_top.jaccard,
      });
    }
  }
  return rows;
}

/** An ability's ranking stability at one k (results' `stability`). */
export interface FlatStability {
  model: string;
  /** The importance rule whose top sets these are. */
  method: string;
  ability: string;
  k: number;
  n: number;
  half_a: number;
  half_b: number;
  shared: number;
  jaccard: number;
}

export function flatStability(results: Results, filter: CellFilter = {}): FlatStability[] {
  const rows: FlatStability[] = [];
  for (const model of results.models) {
    for (const profile of profilesOf(model)) {
      const ks = keptK(profile.k, filter, model.name);
      for (const s of profile.stability ?? []) {
        for (const at of s.by_k) {
          if (!ks.some((k) => Math.abs(k - at.k) <= 1e-9 * Math.max(k, at.k))) continue;
          rows.push({
            model: model.name,
            method: profile.method,
            ability: s.ability,
            k: at.k,
            n: at.n,
            half_a: s.halves[0],
            half_b: s.halves[1],
            shared: at.shared,
            jaccard: at.jaccard,
          });
        }
      }
    }
  }
  return rows;
}

export interface FlatDocument {
  model: string;
  ability: string | null;
  /** The rule that ranked the set; null for the random control. */
  method: string | null;
  selection: string;
  k: number;
  benchmark: string;
  metric: Metric;
  /** The cell's AIS (negative: these lists are kept for cells with a negative AIS). */
  ais: number;
  index: number;
  direction: "right_to_wrong" | "wrong_to_right";
  /** Multiple choice: the gold choice's index; generation: the target text. */
  target: number | string;
  /** Multiple choice: the predicted choice's index; generation: the filtered answer. */
  baseline_prediction: number | string;
  ablated_prediction: number | string;
  /** Multiple choice only. */
  baseline_logprobs?: number[];
  ablated_logprobs?: number[];
  choice_bytes?: number[];
  /** Generation only: the generated text cut at the stop string, before and after. */
  baseline_response?: string;
  ablated_response?: string;
}

/**
 * The flipped documents of every cell with a negative AIS (per metric kept), from the item files;
 * `errors` says which cells' documents could not be recovered (a missing or damaged item file).
 */
export async function flatFlippedDocuments(
  results: Results,
  items: RunItems,
  filter: CellFilter = {},
): Promise<{ documents: FlatDocument[]; errors: string[] }> {
  checkFilter(results, filter);
  const metrics = filter.metric ? [filter.metric] : METRICS;
  const rows: FlatDocument[] = [];
  const errors: string[] = [];
  for (const model of results.models) {
    for (const { profile, v } of variantsOfRules(model, filter)) {
      for (const b of v.benchmarks) {
        for (const metric of metrics) {
          const ais = b[metric]?.ais ?? null;
          if (ais === null || !(ais < 0)) continue;
          let documents;
          try {
            documents = await flippedDocuments(items, model.name, v, b.name, metric);
          } catch (e) {
            // as the other reports: a damaged file is bad input, a missing one a warning
            if (e instanceof DamagedRunFileError) throw e;
            errors.push(`${model.name}, ${v.ability ?? "random"} ${v.selection} k=${v.k}, ${b.name} (${metric}): ${(e as Error).message}`);
            continue;
          }
          for (const d of documents) {
            const cellOf = {
              model: model.name,
              ability: v.ability,
              method: v.ability === null ? null : profile.method,
              selection: v.selection,
              k: v.k,
              benchmark: b.name,
              metric,
              ais,
              index: d.index,
              direction: d.direction,
            };
            if (d.kind === "generate_until") {
              rows.push({
                ...cellOf,
                target: d.target,
                baseline_prediction: d.baselineAnswer,
                ablated_prediction: d.ablatedAnswer,
                baseline_response: d.baselineResponse,
                ablated_response: d.ablatedResponse,
              });
              continue;
            }
            rows.push({
              ...cellOf,
              target: d.target,
              baseline_prediction: d.baselinePrediction,
              ablated_prediction: d.ablatedPrediction,
              baseline_logprobs: d.baselineLogprobs,
              ablated_logprobs: d.ablatedLogprobs,
              choice_bytes: d.choiceBytes,
            });
          }
        }
      }
    }
  }
  return { documents: rows, errors };
}
