// Builds the report model (its types: types.ts): everything a report shows, assembled once from
// results.json and the per-item files, for one metric. Every format (HTML, Markdown, LaTeX) and the VS Code webview render it;
// none of them computes anything of its own. The model is plain data (JSON-serialisable), so the
// webview and the HTML page receive it as JSON and draw the same heatmaps from it.
//
// A benchmark's metric is its own: the report's metric (acc or acc_norm) for multiple-choice
// benchmarks, exact_match for generate_until ones. A section of a model whose benchmarks mix both
// labels every column with its metric ("gsm8k (exact_match)") and its title names both; AIS is a
// share of the above-chance score under each column's own metric, so one colour scale serves all.
//
// A group lm-eval scores as a whole (results' `groups`) is a column after the benchmarks,
// "mmlu_stem (group: 19 tasks)", and a row of the baseline table: its aggregate of its tasks'
// scores under the report's metric (exact_match for a group of generation tasks).
import { cellFlips } from "../analysis/flips";
import { findSignatures } from "./signatures";
import { greyNotFluent } from "./fluency";
import type { BenchmarkItem } from "../analysis/generation";
import { ALL_METRICS, type ChoiceMetric, type Metric } from "../analysis/ais";
import {
  isGenerationResult,
  type BenchmarkResult,
  type CellMetric,
  type GroupResult,
  type ModelProfile,
  type ModelResults,
  type Specificity,
  type VariantResult,
} from "../results/schema";
import { formatK, scaleLimit } from "./format";
import { DamagedRunFileError, ReportInputError, type LoadedRun, type RunItems } from "./load";
import { expectationChecks } from "./expectations";
import { consistencyChecks } from "./consistency";
import { heatmapOf } from "./heatmap";
import { labelChecks } from "./labels";
import { averagingOf, groupLabel, metricLabelOf, variantLabel } from "./names";
import { starWords } from "./stars";
import type { Selection } from "../config/types";
import type {
  BaselineRow,
  ChunkedComparison,
  FlippedDocument,
  GroupMark,
  KSection,
  ModelReport,
  NegativeCell,
  NoiseRow,
  ProfileReport,
  Report,
  ReportCell,
  ReportRow,
  RuleComparison,
  StabilityAtK,
} from "./types";

export const METRICS: readonly Metric[] = ALL_METRICS;

export interface ReportOptions {
  /** The metric of the multiple-choice benchmarks' AIS; acc unless given. Generation benchmarks show exact_match. */
  metric?: ChoiceMetric;
  /** Only this k of the sweep (it must be one of the run's); every k when absent. */
  k?: number;
  /** Reads the per-item files for the flipped documents of negative cells; without it, none are listed. */
  items?: RunItems;
  /** At most this many flipped documents per cell (the rest are counted); all when absent. */
  maxDocuments?: number;
}

/** An ability's stability at k, from results' `stability` (null when not measured for it). */
export function stabilityAt(profile: ModelProfile, ability: string, k: number): StabilityAtK | null {
  const s = profile.stability?.find((x) => x.ability === ability);
  const at = s?.by_k.find((x) => sameK(x.k, k));
  return s && at ? { ability, halves: s.halves, n: at.n, shared: at.shared, jaccard: at.jaccard } : null;
}

/** The metric a benchmark's cells are read under: its own for generation (exact_match), `metric` otherwise. */
export function benchmarkMetric(benchmark: BenchmarkResult | undefined, metric: ChoiceMetric): Metric {
  return benchmark && isGenerationResult(benchmark) ? "exact_match" : metric;
}

/**
 * The metric of a group's column: the report's metric when the group is scored by it, else
 * exact_match when it is scored by that (a group of generation tasks), else the report's metric
 * (the column then says the group has no such score).
 */
export function groupMetric(group: GroupResult, metric: ChoiceMetric): Metric {
  if (group.aggregates.some((a) => a.metric === metric)) return metric;
  return group.aggregates.some((a) => a.metric === "exact_match") ? "exact_match" : metric;
}

/** The run's k equal to `k` up to printing precision; a ReportInputError naming the k there are. */
export function matchK(sweep: readonly number[], k: number, model: string): number {
  const found = sweep.find((x) => sameK(x, k));
  if (found === undefined)
    throw new ReportInputError(`k = ${k} is not in the sweep of model \`${model}\` (k: ${sweep.map(formatK).join(", ")})`);
  return found;
}

export function sameK(a: number, b: number): boolean {
  return Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b));
}

const ROW_GROUPS: readonly Selection[] = ["top", "top_chunked", "bottom", "random"];

/** The variants at k, top abilities first (config order), then chunked top sets, bottom ones, random. */
export function variantsAt(model: ModelResults, k: number, profile: ModelProfile = model.profile!): VariantResult[] {
  const at = profile.variants.filter((v) => sameK(v.k, k));
  const group = (v: VariantResult) => ROW_GROUPS.indexOf(v.selection);
  return at
    .map((v, i) => ({ v, i }))
    .sort((a, b) => group(a.v) - group(b.v) || a.i - b.i)
    .map(({ v }) => v);
}

export async function buildReport(run: LoadedRun, options: ReportOptions = {}): Promise<Report> {
  const metric = options.metric ?? "acc";
  const { results } = run;
  if (options.k !== undefined && !results.models.some((m) => m.profile)) {
    throw new ReportInputError(`run ${results.run_id} has no ability profile (its config has no abilities), so there is no k to choose`);
  }
  const models: ModelReport[] = [];
  for (const model of results.models) {
    const profile = model.profile ? await profileReport(model, model.profile, metric, options, `${models.length}`) : null;
    const otherMethods = await Promise.all(
      (model.other_methods ?? []).map((p, r) => profileReport(model, p, metric, options, `${models.length}-${r + 1}`)),
    );
    models.push({
      name: model.name,
      path: model.path,
      dtype: model.dtype,
      baseline: [...model.benchmarks.map(baselineRow), ...(model.groups ?? []).map(groupBaselineRow)],
      hasGeneration: model.benchmarks.some(isGenerationResult),
      profile,
      otherMethods,
      findings: findSignatures(profile ? [profile, ...otherMethods] : []),
    });
  }
  return {
    metric,
    run: {
      id: results.run_id,
      created: results.created,
      configFile: results.config_file,
      runnerVersion: results.runner_version ?? null,
      resultsFile: run.resultsFile,
      dir: run.dir,
    },
    models,
  };
}

function baselineRow(b: BenchmarkResult): BaselineRow {
  const scoredBy = typeof b.scored_by === "string" ? { scoredBy: b.scored_by } : {};
  if (isGenerationResult(b)) {
    return {
      name: b.name,
      outputType: "generate_until",
      items: b.items,
      acc: null,
      acc_norm: null,
      exact_match: b.exact_match,
      chance: b.chance,
      filter: b.filter,
      exactMatchByFilter: { ...b.exact_match_by_filter },
      ...scoredBy,
    };
  }
  return {
    name: b.name,
    outputType: "multiple_choice",
    items: b.items,
    acc: b.acc,
    acc_norm: b.acc_norm,
    exact_match: null,
    chance: b.chance,
    ...scoredBy,
  };
}

/**
 * A group's row: its aggregates under each metric it is scored by; chance and documents of its
 * first; how each is averaged, per metric when they differ.
 */
function groupBaselineRow(g: GroupResult): BaselineRow {
  const scoreOf = (metric: Metric) => g.aggregates.find((a) => a.metric === metric) ?? null;
  const [acc, accNorm, exactMatch] = [scoreOf("acc"), scoreOf("acc_norm"), scoreOf("exact_match")];
  const first = g.aggregates[0]!;
  return {
    name: g.name,
    outputType: acc || accNorm ? "multiple_choice" : "generate_until",
    items: first.items,
    acc: acc?.score ?? null,
    acc_norm: accNorm?.score ?? null,
    exact_match: exactMatch?.score ?? null,
    chance: first.chance,
    ...(exactMatch ? { filter: exactMatch.filter, exactMatchByFilter: { [exactMatch.filter]: exactMatch.score } } : {}),
    group: {
      tasks: first.tasks.length,
      averaging: g.aggregates.every((a) => a.weight_by_size === first.weight_by_size)
        ? averagingOf(first.weight_by_size)
        : g.aggregates.map((a) => `${a.metric} ${averagingOf(a.weight_by_size)}`).join(", "),
    },
  };
}

/** The mark of a group's column under `metric`: the tasks of its aggregate of that metric (all its tasks when it has none). */
function groupMark(g: GroupResult, metric: Metric): GroupMark {
  const aggregate = g.aggregates.find((a) => a.metric === metric);
  return aggregate
    ? { tasks: aggregate.tasks.length, weightBySize: aggregate.weight_by_size }
    : { tasks: g.tasks.length, weightBySize: g.aggregates[0]?.weight_by_size ?? false };
}

async function profileReport(
  model: ModelResults,
  profile: ModelProfile,
  metric: ChoiceMetric,
  options: ReportOptions,
  heatmapId: string,
): Promise<ProfileReport> {
  const sweep = [...profile.k].sort((a, b) => a - b);
  const ks = options.k === undefined ? sweep : [matchK(sweep, options.k, model.name)];
  const resultOf = new Map(model.benchmarks.map((b) => [b.name, b]));
  const groupOf = new Map((model.groups ?? []).map((g) => [g.name, g]));
  const limit = scaleLimit(
    profile.variants.flatMap((v) => [
      ...v.benchmarks.map((b) => b[benchmarkMetric(resultOf.get(b.name), metric)]?.ais ?? null),
      ...(v.groups ?? []).flatMap((b) => (groupOf.has(b.name) ? [b[groupMetric(groupOf.get(b.name)!, metric)]?.ais ?? null] : [])),
    ]),
  );
  const sections: KSection[] = [];
  for (const k of ks) {
    const variants = variantsAt(model, k, profile);
    if (variants.length === 0) continue;
    sections.push(await section(model, profile, variants, k, metric, limit, options, `heatmap-${heatmapId}-${sections.length}`));
  }
  return {
    parameters: profile.parameters,
    candidates: profile.candidates,
    k: sweep,
    selections: [...profile.selections],
    method: profile.method,
    seed: profile.seed,
    bootstrap: { resamples: profile.bootstrap.resamples, confidence: profile.bootstrap.confidence },
    abilities: profile.abilities.map((a) => ({
      name: a.name,
      id: a.id,
      sequences: a.sequences,
      ...(a.review ? { review: a.review } : {}),
    })),
    scaleLimit: limit,
    ...(profile.stats ? { stats: { ...profile.stats } } : {}),
    starWords: starWords(profile.stats),
    ...(profile.fluency ? { fluency: profile.fluency } : {}),
    ...(profile.candidate_set ? { candidate_set: profile.candidate_set } : {}),
    sections,
  };
}

async function section(
  model: ModelResults,
  profile: ModelProfile,
  variants: VariantResult[],
  k: number,
  choiceMetric: ChoiceMetric,
  limit: number,
  options: ReportOptions,
  id: string,
): Promise<KSection> {
  const groups = model.groups ?? [];
  const taskColumns = model.benchmarks.length;
  const benchmarks = [...model.benchmarks.map((b) => b.name), ...groups.map((g) => g.name)];
  const metrics = [...model.benchmarks.map((b) => benchmarkMetric(b, choiceMetric)), ...groups.map((g) => groupMetric(g, choiceMetric))];
  const marks = groups.map((g, i) => groupMark(g, metrics[taskColumns + i]!));
  const mixed = new Set(metrics).size > 1;
  const columns = benchmarks.map((name, c) => {
    if (c >= taskColumns) return groupLabel(name, marks[c - taskColumns]!, mixed ? metrics[c] : undefined);
    return mixed ? `${name} (${metrics[c]})` : name;
  });
  const metricLabel = metricLabelOf(metrics, choiceMetric);
  const reasons: string[] = [];
  const reasonNumber = (reason: string | undefined, fallback: string) => {
    const text = reason ?? fallback;
    const at = reasons.indexOf(text);
    return (at >= 0 ? at : reasons.push(text) - 1) + 1;
  };
  // the AIS cells' reasons are numbered first, so the AIS table's notes run 1, 2, ...; the
  // specificity's and the pairs' after them
  const later: (() => void)[] = [];
  const laterReason = (reason: string | undefined, fallback: string, set: (n: number) => void) =>
    later.push(() => set(reasonNumber(reason, fallback)));
  const rows: ReportRow[] = variants.map((v) => ({
    label: variantLabel(v),
    ability: v.ability,
    selection: v.selection,
    ...(v.lowering !== undefined ? { lowering: { count: v.lowering, share: v.n > 0 ? v.lowering / v.n : 0 } } : {}),
    ...(v.fluency ? { fluency: v.fluency } : {}),
    cells: benchmarks.map((name, c) => {
      if (c >= taskColumns) return groupCell(groups[c - taskColumns]!, v, metrics[c]!, marks[c - taskColumns]!, reasonNumber, laterReason);
      const cell = v.benchmarks.find((b) => b.name === name)?.[metrics[c]!];
      return cell ? reportCell(name, metrics[c]!, cell, reasonNumber, laterReason) : missingCell(name, metrics[c]!, reasonNumber);
    }),
  }));
  for (const assign of later) assign();

  const negativeCells: NegativeCell[] = [];
  for (const [r, v] of variants.entries()) {
    for (const cell of rows[r]!.cells) {
      // A group's documents are its tasks': their own cells list them.
      if (cell.ais === null || !(cell.ais < 0) || cell.group) continue;
      negativeCells.push(await negativeCell(model.name, v, rows[r]!.label, cell, options));
    }
  }

  const overlap = (profile.overlap ?? []).find((o) => sameK(o.k, k)) ?? null;
  // a chunked set's size is its own; the section's n is floor(k x parameters)
  const n = variants.find((v) => v.selection !== "top_chunked")?.n ?? variants[0]!.exact_top?.n ?? variants[0]!.n;
  const chunked = variants.flatMap((v): ChunkedComparison[] =>
    v.exact_top && v.ability !== null
      ? [{ ability: v.ability, chunkedN: v.n, topN: v.exact_top.n, shared: v.exact_top.shared, jaccard: v.exact_top.jaccard }]
      : [],
  );
  const confidence = profile.bootstrap.confidence;
  const title = `${model.name}: AIS (${metricLabel}) at k = ${formatK(k)}`;
  const pairs = (profile.pairs ?? [])
    .filter((p) => p.k === k)
    .map((p) => ({
      abilities: p.abilities,
      n: p.n,
      cells: model.benchmarks.map((b, c) => {
        const cell = p.benchmarks.find((x) => x.name === b.name)?.[metrics[c]!];
        return {
          benchmark: b.name,
          ais: cell?.ais ?? null,
          ci: cell?.ci ?? null,
          interference: cell?.interference ?? null,
          interferenceCi: cell?.interference_ci ?? null,
          significant: cell !== undefined && cell.interference !== null && cell.significant,
          ...(cell && cell.interference === null && cell.reason !== undefined ? { reason: reasonNumber(cell.reason, "") } : {}),
          ...(cell?.p !== undefined ? { p: cell.p } : {}),
          ...(cell?.q !== undefined ? { q: cell.q } : {}),
        };
      }),
    }));
  const randomDraws = drawsAt(profile, k);
  const allCells = rows.flatMap((r) => r.cells);
  return {
    k,
    n,
    benchmarks,
    metrics,
    columns,
    metricLabel,
    rows,
    chunked,
    stability: profile.abilities.flatMap((a) => stabilityAt(profile, a.name, k) ?? []),
    reasons,
    overlap,
    negativeCells,
    labels: labelChecks(model, rows),
    expectations: expectationChecks(
      model.benchmarks,
      rows,
      new Set(profile.abilities.flatMap((a) => (a.of !== undefined ? [a.name] : []))),
    ),
    consistency: consistencyChecks(profile.abilities, rows),
    pairs,
    noise: noiseRows(profile, k, benchmarks, metrics, columns),
    randomDraws,
    hasSaturated: allCells.some((c) => c.saturated),
    hasTests: allCells.some((c) => c.p !== undefined || c.specificity?.p !== undefined),
    hasSpecificity: rows.some((r) => r.cells.some((c) => c.specificity !== undefined)),
    heatmap: greyNotFluent(
      heatmapOf(id, title, rows, columns, reasons, metricLabel, limit, confidence, "ais", { stats: profile.stats, randomDraws }),
      rows,
      profile.fluency,
    ),
  };
}

/** The random control's draws at k when the run drew it several times (ablation.random_draws); null with one. */
function drawsAt(profile: ModelProfile, k: number): number | null {
  const later = (profile.random_draws ?? []).filter((d) => sameK(d.k, k)).length;
  return later > 0 ? later + 1 : null;
}

/**
 * The benchmarks' noise at k, each under its column's metric (results' `noise`), snr descending
 * (a benchmark without noise, whose snr is null, last); empty in runs without it.
 */
export function noiseRows(
  profile: ModelProfile,
  k: number,
  benchmarks: readonly string[],
  metrics: readonly Metric[],
  columns: readonly string[],
): NoiseRow[] {
  const rows = benchmarks.flatMap((benchmark, c): NoiseRow[] => {
    const found = (profile.noise ?? []).find((x) => sameK(x.k, k) && x.benchmark === benchmark && x.metric === metrics[c]);
    return found
      ? [
          {
            benchmark,
            column: columns[c]!,
            metric: found.metric,
            signal: found.signal,
            noise: found.noise,
            snr: found.snr,
            isNoise: found.snr !== null && found.snr < 1,
          },
        ]
      : [];
  });
  return rows
    .map((row, i) => ({ row, i }))
    .sort((a, b) => (b.row.snr ?? -Infinity) - (a.row.snr ?? -Infinity) || a.i - b.i)
    .map(({ row }) => row);
}

/**
 * The rules of a model side by side at each k of its first rule's sections: how many labelled
 * benchmarks each rule's top sets hurt most, and per ability the share of its top set whose zeroing
 * lowers its own loss (to first order). Empty for a model ranked by one rule.
 */
/** A model's profiles as reports show them, one per importance rule in the config's order (none without abilities). */
export function rulesOf(model: Pick<ModelReport, "profile" | "otherMethods">): ProfileReport[] {
  return model.profile ? [model.profile, ...model.otherMethods] : [];
}

export function ruleComparisons(model: Pick<ModelReport, "profile" | "otherMethods">): RuleComparison[] {
  const rules = rulesOf(model);
  if (rules.length < 2) return [];
  return rules[0]!.sections.map((first) => ({
    k: first.k,
    rules: rules.map((p) => {
      const s = p.sections.find((x) => sameK(x.k, first.k));
      return {
        method: p.method,
        ...(p.candidate_set ? { candidate_set: p.candidate_set } : {}),
        labelsHold: s?.labels.filter((l) => l.holds).length ?? 0,
        labelsChecked: s?.labels.length ?? 0,
        lowering: (s?.rows ?? [])
          .filter((r) => r.selection === "top" && r.ability !== null)
          .map((r) => ({ ability: r.ability!, share: r.lowering?.share ?? null })),
      };
    }),
  }));
}

/** Numbers a reason once the AIS cells' reasons are numbered: `set` receives its number. */
type LaterReason = (reason: string | undefined, fallback: string, set: (n: number) => void) => void;

/** Whether a cell of results.json is starred in the reports: its star (q below the threshold, or before stats its interval) where it has an AIS. */
export function isStarred(cell: Pick<CellMetric, "ais" | "significant" | "saturated">): boolean {
  return cell.ais !== null && cell.significant;
}

function reportCell(
  benchmark: string,
  metric: Metric,
  cell: CellMetric,
  reasonNumber: (r: string | undefined, f: string) => number,
  laterReason: LaterReason,
): ReportCell {
  const out: ReportCell = {
    benchmark,
    metric,
    baseline: cell.baseline,
    ablated: cell.ablated,
    chance: cell.chance,
    ais: cell.ais,
    ci: cell.ci,
    significant: isStarred(cell),
    flips: { rightToWrong: cell.flips.right_to_wrong, wrongToRight: cell.flips.wrong_to_right },
  };
  if (cell.ais === null) out.reason = reasonNumber(cell.reason, "AIS is undefined");
  if (cell.note) out.note = cell.note;
  if (cell.p !== undefined) out.p = cell.p;
  if (cell.q !== undefined) out.q = cell.q;
  if (cell.test !== undefined) out.test = cell.test;
  if (cell.interval_excludes_0 !== undefined) out.intervalExcludes0 = cell.interval_excludes_0;
  if (cell.saturated) out.saturated = true;
  if (cell.random_null) out.randomNull = { ...cell.random_null };
  if (cell.specificity) out.specificity = specificityCell(cell.specificity, laterReason);
  return out;
}

/** A variant's cell on a group: reportCell with the group's mark; n/a, saying why, where the group has no score under `metric`. */
function groupCell(
  g: GroupResult,
  v: VariantResult,
  metric: Metric,
  mark: GroupMark,
  reasonNumber: (r: string | undefined, f: string) => number,
  laterReason: LaterReason,
): ReportCell {
  const cell = v.groups?.find((c) => c.name === g.name)?.[metric];
  if (cell) return { ...reportCell(g.name, metric, cell, reasonNumber, laterReason), group: mark };
  const scored = g.aggregates.map((a) => a.metric);
  const reason = scored.includes(metric)
    ? undefined
    : `group \`${g.name}\` is scored by ${scored.join(" and ")} only (its aggregate_metric_list), not by ${metric}`;
  return { ...missingCell(g.name, metric, reasonNumber, reason), group: mark };
}

function specificityCell(s: Specificity, laterReason: LaterReason): NonNullable<ReportCell["specificity"]> {
  const out: NonNullable<ReportCell["specificity"]> = {
    value: s.value,
    ci: s.ci,
    significant: s.value !== null && s.significant,
    ...(s.p !== undefined ? { p: s.p } : {}),
    ...(s.q !== undefined ? { q: s.q } : {}),
    ...(s.test !== undefined ? { test: s.test } : {}),
  };
  if (s.value === null) laterReason(s.reason, "specificity is undefined", (n) => (out.reason = n));
  return out;
}

function missingCell(
  benchmark: string,
  metric: Metric,
  reasonNumber: (r: string | undefined, f: string) => number,
  reason?: string,
): ReportCell {
  return {
    benchmark,
    metric,
    baseline: 0,
    ablated: 0,
    chance: 0,
    ais: null,
    ci: null,
    significant: false,
    reason: reasonNumber(reason, "the run has no result for this cell"),
    flips: { rightToWrong: 0, wrongToRight: 0 },
  };
}

async function negativeCell(model: string, v: VariantResult, row: string, cell: ReportCell, options: ReportOptions): Promise<NegativeCell> {
  const metric = cell.metric;
  const out: NegativeCell = {
    row,
    ability: v.ability,
    selection: v.selection,
    benchmark: cell.benchmark,
    metric,
    ais: cell.ais!,
    ci: cell.ci,
    significant: cell.significant,
    ...(cell.q !== undefined ? { q: cell.q } : {}),
    rightToWrong: cell.flips.rightToWrong,
    wrongToRight: cell.flips.wrongToRight,
    documents: [],
    omitted: 0,
  };
  if (!options.items) return out;
  try {
    const documents = await flippedDocuments(options.items, model, v, cell.benchmark, metric);
    const max = options.maxDocuments ?? Infinity;
    out.documents = documents.slice(0, max);
    out.omitted = documents.length - out.documents.length;
  } catch (e) {
    // a damaged file is bad input; one that is missing (or not the run's to read) only leaves the documents out
    if (e instanceof DamagedRunFileError) throw e;
    out.error = e instanceof Error ? e.message : String(e);
  }
  return out;
}

/**
 * The documents of one cell whose correctness under `metric` the ablation changed, both
 * directions, in document order: cellFlips over the benchmark's items in items.jsonl and in the
 * variant's items file.
 */
export async function flippedDocuments(
  items: RunItems,
  model: string,
  v: VariantResult,
  benchmark: string,
  metric: Metric,
): Promise<FlippedDocument[]> {
  const recorded = await items.recordedFlips(model);
  if (recorded) return recorded.get(flipsKey(v.items_file, benchmark, metric)) ?? [];
  const before = (await items.baseline(model)).filter((i) => i.benchmark === benchmark);
  const after = (await items.variant(model, v.items_file)).filter((i) => i.benchmark === benchmark);
  return flipsAsDocuments(before, after, metric);
}

/** The key of a cell's documents in a run's flips.jsonl. */
export function flipsKey(itemsFile: string, benchmark: string, metric: Metric): string {
  return `${itemsFile}\u0000${benchmark}\u0000${metric}`;
}

/** The documents whose correctness under `metric` differs between the baseline's and a variant's items of one benchmark, in document order. */
export function flipsAsDocuments(before: readonly BenchmarkItem[], after: readonly BenchmarkItem[], metric: Metric): FlippedDocument[] {
  const flips = cellFlips(before, after, metric);
  const documents = [
    ...flips.rightToWrong.map((f) => ({ f, direction: "right_to_wrong" as const })),
    ...flips.wrongToRight.map((f) => ({ f, direction: "wrong_to_right" as const })),
  ];
  const order = new Map(before.map((item, i) => [item.index, i]));
  documents.sort((a, b) => order.get(a.f.index)! - order.get(b.f.index)!);
  return documents.map(({ f, direction }): FlippedDocument => {
    if (f.kind === "generate_until") {
      return {
        kind: "generate_until",
        index: f.index,
        direction,
        target: f.target,
        baselineAnswer: f.before.answer,
        ablatedAnswer: f.after.answer,
        baselineResponse: f.before.response,
        ablatedResponse: f.after.response,
      };
    }
    return {
      index: f.index,
      direction,
      target: f.target,
      baselinePrediction: f.before.prediction,
      ablatedPrediction: f.after.prediction,
      baselineLogprobs: f.before.logprobs,
      ablatedLogprobs: f.after.logprobs,
      choiceBytes: f.choiceBytes,
    };
  });
}
