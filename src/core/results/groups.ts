// A group of lm-eval tasks scored as a whole (its aggregate_metric_list, lmeval/group.ts): lm-eval's
// score of the group is the mean of its tasks' scores, weighted by their documents when
// weight_by_size is true. Here that is computed for the baseline, each variant and chance, and the
// group's AIS is (P(theta) - P(theta_a)) / (P(theta) - P(chance)) on those aggregates.
//
// Its interval is a paired bootstrap over the union of the tasks' documents: every resample draws
// from all of them at once, and a document counts with its task's weight, 1/(its task's documents)
// when the tasks are averaged unweighted, 1 when weighted by size (then the aggregate is the plain
// mean over the union). A resample's AIS is its weighted lost score over its weighted margin, so
// the weights go into the score vectors the benchmark resampler reads, scaled to at most 1: the
// ratio does not change with the scale.
import { abilityImpactScore, chancePerItem, meanOf, scoreVector, type AbilityImpact, type ScoreVector } from "../analysis/ais";
import { BenchmarkResampler, type BootstrapEstimate, type BootstrapOptions } from "../analysis/bootstrap";
import type { BenchmarkItem } from "../analysis/generation";
import type { GroupAggregate, ResolvedGroup } from "../lmeval/group";
import { estimateFields, specificityOf, type CellMetric, type GroupResult, type VariantBenchmark } from "./schema";

/** The group's tasks under one aggregate, those with documents, in the group's order. */
interface AggregateParts {
  names: string[];
  sizes: number[];
  /** Per task, its documents' scores under the aggregate's metric and filter. */
  scores: ScoreVector[];
  chance: Float64Array[];
}

/** lm-eval's aggregate of the tasks' scores: their mean, weighted by `sizes` when `weightBySize`. */
function aggregateScore(scores: readonly number[], sizes: readonly number[], weightBySize: boolean): number {
  const weights = weightBySize ? sizes : sizes.map(() => 1);
  const total = weights.reduce((s, w) => s + w, 0);
  return total === 0 ? 0 : scores.reduce((s, v, i) => s + v * weights[i]!, 0) / total;
}

/** The baseline's scores of each group, for results.json. */
export function baselineGroups(groups: readonly ResolvedGroup[], baseline: readonly BenchmarkItem[]): GroupResult[] {
  const byTask = itemsByTask(baseline);
  return groups.map((group) => ({
    name: group.name,
    tasks: [...group.tasks],
    aggregates: group.aggregates.map((aggregate) => {
      const parts = partsOf(aggregate, byTask);
      return {
        metric: aggregate.metric,
        filter: aggregate.filter,
        weight_by_size: aggregate.weightBySize,
        tasks: parts.names,
        items: parts.sizes.reduce((s, n) => s + n, 0),
        score: aggregateOf(parts, parts.scores, aggregate.weightBySize),
        chance: aggregateOf(parts, parts.chance, aggregate.weightBySize),
      };
    }),
  }));
}

export interface GroupVariant {
  file: string;
  /** The random control's file at the variant's k, for a top variant's specificity. */
  control?: string;
}

/**
 * Each variant's cells on each group, one per aggregated metric, by the variant's file: the
 * aggregates of the baseline, the variant and chance, and the AIS with its paired-bootstrap
 * interval over the union of the group's documents.
 */
export function variantGroupCells(
  groups: readonly ResolvedGroup[],
  baseline: readonly BenchmarkItem[],
  variants: readonly GroupVariant[],
  itemsOf: ReadonlyMap<string, readonly BenchmarkItem[]>,
  options: BootstrapOptions,
): Map<string, VariantBenchmark[]> {
  const before = itemsByTask(baseline);
  const after = new Map([...itemsOf].map(([file, items]) => [file, itemsByTask(items)]));
  const cells = new Map<string, VariantBenchmark[]>(variants.map((v) => [v.file, groups.map((g) => ({ name: g.name }))]));
  groups.forEach((group, g) => {
    for (const aggregate of group.aggregates) {
      const parts = partsOf(aggregate, before);
      if (parts.names.length === 0) continue;
      const weights = documentWeights(parts.sizes, aggregate.weightBySize);
      const baselineScore = aggregateOf(parts, parts.scores, aggregate.weightBySize);
      const chance = aggregateOf(parts, parts.chance, aggregate.weightBySize);
      const resampler = new BenchmarkResampler(weighted(parts.scores, weights), weighted(parts.chance, weights), options);
      const variantScores = (file: string) => partsOf(aggregate, after.get(file)!, parts.names).scores;
      for (const v of variants) {
        const ablated = variantScores(v.file);
        const ablatedScore = aggregateOf(parts, ablated, aggregate.weightBySize);
        const impact = abilityImpactScore({ baseline: baselineScore, ablated: ablatedScore, chance });
        const cell: CellMetric = {
          baseline: baselineScore,
          ablated: ablatedScore,
          chance,
          ...estimateFields(withEstimate(resampler.ais(weighted(ablated, weights)), impact)),
          flips: flipCounts(parts.scores, ablated),
        };
        if (v.control !== undefined) {
          const control = variantScores(v.control);
          const controlImpact = abilityImpactScore({
            baseline: baselineScore,
            ablated: aggregateOf(parts, control, aggregate.weightBySize),
            chance,
          });
          const specificity: AbilityImpact =
            impact.defined && controlImpact.defined ? { defined: true, value: impact.value - controlImpact.value } : impact;
          cell.specificity = specificityOf(
            withEstimate(resampler.specificity(weighted(ablated, weights), weighted(control, weights)), specificity),
          );
        }
        cells.get(v.file)![g]![aggregate.metric] = cell;
      }
    }
  });
  return cells;
}

function itemsByTask(items: readonly BenchmarkItem[]): Map<string, BenchmarkItem[]> {
  const byTask = new Map<string, BenchmarkItem[]>();
  for (const item of items) {
    const list = byTask.get(item.benchmark);
    if (list) list.push(item);
    else byTask.set(item.benchmark, [item]);
  }
  return byTask;
}

/** The aggregate's tasks that have documents (or the tasks `names`, in that order), with their scores. */
function partsOf(
  aggregate: GroupAggregate,
  byTask: ReadonlyMap<string, readonly BenchmarkItem[]>,
  names?: readonly string[],
): AggregateParts {
  const parts: AggregateParts = { names: [], sizes: [], scores: [], chance: [] };
  for (const name of names ?? aggregate.tasks) {
    const items = byTask.get(name) ?? [];
    if (names === undefined && items.length === 0) continue;
    parts.names.push(name);
    parts.sizes.push(items.length);
    parts.scores.push(aggregateItemScores(items, aggregate));
    parts.chance.push(chancePerItem(items));
  }
  return parts;
}

/**
 * Each document's score under the aggregate's metric and filter: the task's own cells' scores
 * under its first filter (and for multiple choice), correctness under another filter.
 */
function aggregateItemScores(items: readonly BenchmarkItem[], aggregate: GroupAggregate): ScoreVector {
  const first = items[0];
  if (!first || first.kind !== "generate_until" || first.filters[0]?.name === aggregate.filter) return scoreVector(items, aggregate.metric);
  return Uint8Array.from(items, (item) =>
    item.kind === "generate_until" && item.filters.find((f) => f.name === aggregate.filter)?.correct ? 1 : 0,
  );
}

function aggregateOf(parts: AggregateParts, values: readonly ArrayLike<number>[], weightBySize: boolean): number {
  return aggregateScore(values.map(meanOf), parts.sizes, weightBySize);
}

/** Each task's weight per document, at most 1; undefined when every document counts alike. */
function documentWeights(sizes: readonly number[], weightBySize: boolean): number[] | undefined {
  if (weightBySize || new Set(sizes).size <= 1) return undefined;
  const smallest = Math.min(...sizes);
  return sizes.map((n) => smallest / n);
}

/** The tasks' vectors end to end, each document's value times its task's weight. */
function weighted(values: readonly ArrayLike<number>[], weights: readonly number[] | undefined): ScoreVector {
  const total = values.reduce((s, v) => s + v.length, 0);
  const allBinary = weights === undefined && values.every((v) => v instanceof Uint8Array);
  const out = allBinary ? new Uint8Array(total) : new Float64Array(total);
  let at = 0;
  values.forEach((v, t) => {
    for (let i = 0; i < v.length; i++) out[at++] = v[i]! * (weights?.[t] ?? 1);
  });
  return out;
}

/** Documents whose correctness the ablation changed, over all the tasks (a task's own score counts as right from one half). */
function flipCounts(before: readonly ScoreVector[], after: readonly ScoreVector[]): CellMetric["flips"] {
  let rightToWrong = 0;
  let wrongToRight = 0;
  before.forEach((b, t) => {
    const a = after[t]!;
    for (let i = 0; i < b.length; i++) {
      const [was, is] = [b[i]! >= 0.5, a[i]! >= 0.5];
      if (was && !is) rightToWrong++;
      else if (!was && is) wrongToRight++;
    }
  });
  return { right_to_wrong: rightToWrong, wrong_to_right: wrongToRight };
}

/**
 * The resampler's interval around the AIS of the aggregates themselves: it saw the weighted
 * vectors, whose means are the aggregates only up to a scale (and rounding), and an AIS it cannot
 * define gets no interval.
 */
function withEstimate(e: BootstrapEstimate, estimate: AbilityImpact): BootstrapEstimate {
  if (estimate.defined && e.estimate.defined) return { ...e, estimate };
  return { ...e, estimate, interval: null, significant: false };
}
