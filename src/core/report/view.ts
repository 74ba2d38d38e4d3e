// The results view's model: one figure of a run, as the user picks it (model, metric, k, and what
// the cells show: the AIS of the top sets, of the bottom sets, of the random control, or the top
// sets' specificity against the control), with what surrounds it (baselines, the ability
// overlap, the label check, the method) and a plain table of the same numbers for screen readers.
// Built from the report model, one k at a time, so switching a control costs one section.
import { interferenceHeatmap } from "./pairsFigure";
import type { ChoiceMetric } from "../analysis/ais";
import type { ImportanceMethod, Selection } from "../config/types";
import { formatK } from "./format";
import type { LoadedRun } from "./load";
import { heatmapOf } from "./heatmap";
import { buildReport, ruleComparisons, rulesOf } from "./model";
import type {
  BaselineRow,
  ConsistencyCheck,
  ExpectationCheck,
  Finding,
  Heatmap,
  HeatmapMeasure,
  KSection,
  LabelCheck,
  NegativeCell,
  NoiseRow,
  PairReport,
  ReportCell,
  ReportRow,
  RuleComparison,
  RunMeta,
} from "./types";
import { scaleLimit } from "./format";
import type { ModelFluency, OverlapResult, VariantFluency } from "../results/schema";
import { greyNotFluent } from "./fluency";
import { NOISE_WORDS, randomNullWords, SATURATED_MARK, SATURATED_WORDS } from "./stars";

/** What the cells show. */
export type CellsShown = "top" | "top_chunked" | "bottom" | "random" | "specificity";

/** The order of the benchmarks: the config's, or by snr (signal over noise), highest first. */
export type BenchmarkSort = "config" | "snr";

export interface ResultsQuery {
  model?: string;
  metric?: ChoiceMetric;
  k?: number;
  cells?: CellsShown;
  /** The importance rule whose profile is shown, when the run ranked by several. */
  method?: ImportanceMethod;
  /** The candidate set whose profile is shown, when the run ranked several (`ablation.candidates: [mlp, all]`). */
  candidates?: CandidateChoice;
  /** The benchmarks' order; the config's unless asked (and the run has the benchmarks' noise). */
  sort?: BenchmarkSort;
}

/** A candidate set as the results view names it: the MLP's weights, or every layer's. */
export type CandidateChoice = "mlp" | "all";

export interface ResultsView {
  run: RunMeta;
  /** The query as resolved against the run (defaults filled in, unknown values replaced). */
  query: {
    model: string;
    metric: ChoiceMetric;
    k: number | null;
    cells: CellsShown;
    method: ImportanceMethod | null;
    candidates: CandidateChoice | null;
    sort: BenchmarkSort;
  };
  /**
   * What each control can be set to for this run (`methods`: the model's rules, `candidates`: its
   * candidate sets; one or none, no choice).
   */
  choices: {
    models: string[];
    metrics: ChoiceMetric[];
    k: number[];
    cells: CellsShown[];
    methods: ImportanceMethod[];
    candidates: CandidateChoice[];
    /** The orders the benchmarks can take: both when the run measured their noise at this k, none otherwise. */
    sorts: BenchmarkSort[];
  };
  baseline: BaselineRow[];
  /** Null for a run without abilities. */
  profile: ProfileView | null;
}

export interface ProfileView {
  method: ImportanceMethod;
  /** Every rule of the model side by side at this k; null when it was ranked by one. */
  rules: RuleComparison | null;
  parameters: number;
  candidates: number;
  /** `all` when the attention projections' weights were candidates too (`ablation.candidates`). */
  candidate_set?: "all";
  /** Parameters zeroed at this k. */
  n: number;
  selections: Selection[];
  seed: number;
  bootstrap: { resamples: number; confidence: number };
  /** `stability`: the Jaccard index of the top n of two halves of its items at this k; null when the run did not measure it. */
  abilities: { name: string; sequences: number; lowering: number | null; stability: number | null }[];
  heatmap: Heatmap;
  /** The same numbers as text, row by row, for screen readers. */
  table: { columns: string[]; rows: { label: string; cells: string[] }[] };
  /** The same numbers, one per cell (CSV). */
  values: CellValue[];
  reasons: string[];
  labels: LabelCheck[];
  /** The config's expected abilities per benchmark against this k's AIS; empty without `expects`. */
  expectations: ExpectationCheck[];
  /** Abilities with a second diagnostic set: the two AIS rows compared at this k; empty without one. */
  consistency: ConsistencyCheck[];
  /** Two abilities ablated together at this k; empty without pairs. */
  pairs: PairReport[];
  /** Their interference per pair and benchmark as a heatmap (report/pairsFigure.ts); null without pairs. */
  pairsHeatmap: Heatmap | null;
  overlap: OverlapResult | null;
  /** Cells of the figure's rows with a negative AIS (documents are asked for one cell at a time). */
  negativeCells: NegativeCell[];
  /** The rows drawn, with the variant each stands for (to ask for a cell's documents). */
  rows: { label: string; ability: string | null; selection: Selection; fluency?: VariantFluency }[];
  /** The unablated model's fluency measure (the row under the heatmap); absent in runs made before it existed. */
  fluency?: ModelFluency;
  benchmarks: string[];
  /** The failure signatures found in this rule's profile at this k (report/signatures.ts), for the header. */
  findings: Finding[];
  /** What the figure's marks mean: the star (the correction, or the interval before stats), saturation and the random null where they occur. */
  legend: { stars: string; saturated: string | null; randomNull: string | null; tested: boolean };
  /** Each benchmark's signal, noise and snr at this k, snr descending; empty in runs without it. */
  noise: NoiseRow[];
  /** What signal, noise and snr are, for the noise table. */
  noiseWords: string;
}

export interface CellValue {
  row: string;
  benchmark: string;
  metric: string;
  value: number | null;
  low: number | null;
  high: number | null;
  significant: boolean;
  /** Why the value is undefined. */
  reason: string | null;
  /** The cell's test; null in runs before them. */
  p: number | null;
  q: number | null;
  test: string | null;
  /** AIS cells: the ablated score is at chance (results/significance.ts isSaturated); null in runs before the mark. */
  saturated: boolean | null;
}

const CELLS_ORDER: readonly CellsShown[] = ["top", "top_chunked", "bottom", "random", "specificity"];

export async function resultsView(run: LoadedRun, query: ResultsQuery = {}): Promise<ResultsView> {
  const { results } = run;
  const models = results.models.map((m) => m.name);
  const model = results.models.find((m) => m.name === query.model) ?? results.models.find((m) => m.profile) ?? results.models[0];
  if (!model) throw new Error(`run ${results.run_id} has no models`);
  const hasChoice = model.benchmarks.some((b) => b.output_type !== "generate_until");
  const metrics: ChoiceMetric[] = hasChoice ? ["acc", "acc_norm"] : ["acc"];
  const metric = metrics.includes(query.metric as ChoiceMetric) ? query.metric! : "acc";
  const profile = model.profile;
  const sweep = profile ? [...profile.k].sort((a, b) => a - b) : [];
  const k = sweep.find((x) => query.k !== undefined && Math.abs(x - query.k) <= 1e-12 * x) ?? sweep.at(-1) ?? null;
  const selections = new Set(profile?.selections ?? []);
  const cellsChoices = CELLS_ORDER.filter((c) =>
    c === "specificity" ? selections.has("top") && selections.has("random") : selections.has(c),
  );
  const cells = cellsChoices.includes(query.cells as CellsShown) ? query.cells! : (cellsChoices[0] ?? "top");
  const report = await buildReport(run, { metric, ...(k !== null ? { k } : {}) });
  const modelReport = report.models.find((m) => m.name === model.name)!;
  const rules = rulesOf(modelReport);
  // the rule and candidate set asked for; a switch of one keeps the other where it can
  const setOf = (p: (typeof rules)[number]): CandidateChoice => p.candidate_set ?? "mlp";
  const shown =
    rules.find((p) => p.method === query.method && setOf(p) === (query.candidates ?? "mlp")) ??
    rules.find((p) => p.method === query.method) ??
    rules.find((p) => setOf(p) === query.candidates) ??
    rules[0];
  const methods = [...new Set(rules.map((p) => p.method))];
  const sets = [...new Set(rules.map(setOf))];
  const section = shown?.sections[0];
  const sorts: BenchmarkSort[] = section && section.noise.length > 0 ? ["config", "snr"] : [];
  const sort: BenchmarkSort = sorts.includes(query.sort as BenchmarkSort) ? query.sort! : "config";
  const comparison = ruleComparisons(modelReport).find((c) => section && c.k === section.k) ?? null;
  return {
    run: report.run,
    query: { model: model.name, metric, k, cells, method: shown?.method ?? null, candidates: shown ? setOf(shown) : null, sort },
    choices: {
      models,
      metrics,
      k: sweep,
      cells: cellsChoices,
      methods: methods.length > 1 ? methods : [],
      candidates: sets.length > 1 ? sets : [],
      sorts,
    },
    baseline: modelReport.baseline,
    profile:
      shown && section
        ? profileView(
            shown,
            sort === "snr" ? bySnr(section) : section,
            cells,
            comparison,
            modelReport.findings.filter((f) => f.method === shown.method && f.candidate_set === shown.candidate_set),
          )
        : null,
  };
}

/**
 * The section with its benchmarks in the order of their snr, highest first (report/model.ts
 * noiseRows); those without one (groups, a benchmark with too few defined cells) after them, in
 * the config's order. Tasks stay before groups, so the pairs' cells (tasks only) keep their place.
 */
export function bySnr(section: KSection): KSection {
  const rank = new Map(section.noise.map((n, i) => [n.benchmark, i]));
  const order = section.benchmarks
    .map((b, c) => ({ c, at: rank.get(b) ?? section.noise.length + c }))
    .sort((a, b) => a.at - b.at)
    .map((x) => x.c);
  const permute = <T>(list: readonly T[]): T[] => order.map((c) => list[c]!);
  const taskColumns = section.pairs[0]?.cells.length ?? 0;
  return {
    ...section,
    benchmarks: permute(section.benchmarks),
    metrics: permute(section.metrics),
    columns: permute(section.columns),
    rows: section.rows.map((r) => ({ ...r, cells: permute(r.cells) })),
    pairs: section.pairs.map((p) => ({ ...p, cells: order.filter((c) => c < taskColumns).map((c) => p.cells[c]!) })),
  };
}

function profileView(
  profile: NonNullable<Awaited<ReturnType<typeof buildReport>>["models"][number]["profile"]>,
  section: KSection,
  cells: CellsShown,
  rules: RuleComparison | null,
  findings: Finding[],
): ProfileView {
  const selection: Selection = cells === "specificity" ? "top" : cells;
  const rows = section.rows.filter((r) => r.selection === selection);
  const measure: HeatmapMeasure = cells === "specificity" ? "specificity" : "ais";
  const values = rows.flatMap((r) => r.cells.map((c) => (measure === "ais" ? c.ais : (c.specificity?.value ?? null))));
  // AIS keeps the model's scale across k (so figures compare); specificity gets its own.
  const limit = measure === "ais" ? profile.scaleLimit : scaleLimit(values);
  const what =
    cells === "specificity"
      ? "specificity vs random"
      : cells === "random"
        ? "AIS of the random control"
        : cells === "top_chunked"
          ? "AIS (top sets, chunked as the released code)"
          : `AIS (${cells} sets)`;
  const title = `${what}, ${section.metricLabel}, k = ${formatK(section.k)}`;
  const heatmap = greyNotFluent(
    heatmapOf(
      `results-${profile.method}${profile.candidate_set ? `-${profile.candidate_set}` : ""}-${cells}-${section.k}`,
      title,
      rows,
      section.columns,
      section.reasons,
      section.metricLabel,
      limit,
      profile.bootstrap.confidence,
      measure,
      { stats: profile.stats, randomDraws: section.randomDraws },
    ),
    rows,
    profile.fluency,
  );
  const shownCells = rows.flatMap((r) => r.cells);
  const lowering = new Map(section.rows.filter((r) => r.selection === "top").map((r) => [r.ability, r.lowering?.share ?? null]));
  return {
    method: profile.method,
    rules,
    parameters: profile.parameters,
    candidates: profile.candidates,
    ...(profile.candidate_set ? { candidate_set: profile.candidate_set } : {}),
    n: section.n,
    selections: profile.selections,
    seed: profile.seed,
    bootstrap: profile.bootstrap,
    abilities: profile.abilities.map((a) => ({
      name: a.name,
      sequences: a.sequences,
      lowering: lowering.get(a.name) ?? null,
      stability: section.stability.find((s) => s.ability === a.name)?.jaccard ?? null,
    })),
    heatmap,
    table: { columns: section.columns, rows: rows.map((r) => ({ label: r.label, cells: r.cells.map((c) => cellText(c, measure)) })) },
    values: rows.flatMap((r) => r.cells.map((c) => cellValue(r.label, c, measure, section.reasons, profile.stats !== undefined))),
    reasons: section.reasons,
    labels: section.labels,
    expectations: section.expectations,
    consistency: section.consistency,
    pairs: section.pairs,
    pairsHeatmap: interferenceHeatmap(section.pairs, section.benchmarks, profile.bootstrap.confidence, section.k, "pairs", {
      reasons: section.reasons,
      stats: profile.stats,
    }),
    overlap: section.overlap,
    negativeCells: section.negativeCells.filter((c) => c.selection === selection),
    rows: rows.map((r: ReportRow) => ({
      label: r.label,
      ability: r.ability,
      selection: r.selection,
      ...(r.fluency ? { fluency: r.fluency } : {}),
    })),
    ...(profile.fluency ? { fluency: profile.fluency } : {}),
    benchmarks: section.benchmarks,
    findings,
    legend: {
      stars: profile.starWords,
      tested: shownCells.some((c) => (measure === "ais" ? c.p : c.specificity?.p) !== undefined),
      saturated: measure === "ais" && shownCells.some((c) => c.saturated) ? `${SATURATED_MARK} = ${SATURATED_WORDS}` : null,
      randomNull:
        measure === "ais" && section.randomDraws !== null && shownCells.some((c) => c.randomNull)
          ? `random null: ${randomNullWords(section.randomDraws)}`
          : null,
    },
    noise: section.noise,
    noiseWords: NOISE_WORDS,
  };
}

/** What a cell shows under `measure`: its value, interval, significance and the number of its reason. */
function measured(cell: ReportCell, measure: HeatmapMeasure) {
  const s = cell.specificity;
  return measure === "ais"
    ? {
        value: cell.ais,
        ci: cell.ci,
        significant: cell.significant,
        reason: cell.reason,
        p: cell.p,
        q: cell.q,
        test: cell.test,
        saturated: cell.saturated === true,
      }
    : {
        value: s?.value ?? null,
        ci: s?.ci ?? null,
        significant: s?.significant ?? false,
        reason: s?.reason ?? cell.reason,
        p: s?.p,
        q: s?.q,
        test: s?.test,
        saturated: false,
      };
}

/** A cell as text: "0.312* [0.120, 0.501]" (* starred), "1.000* sat. [...]" (saturated), "n/a (1)" (the reason's number). */
function cellText(cell: ReportCell, measure: HeatmapMeasure): string {
  const { value, ci, significant, reason, saturated } = measured(cell, measure);
  if (value === null) return `n/a${reason ? ` (${reason})` : ""}`;
  const mark = `${significant ? "*" : ""}${saturated ? ` ${SATURATED_MARK}` : ""}`;
  return `${value.toFixed(3)}${mark}${ci ? ` [${ci.low.toFixed(3)}, ${ci.high.toFixed(3)}]` : ""}`;
}

function cellValue(row: string, cell: ReportCell, measure: HeatmapMeasure, reasons: readonly string[], tested: boolean): CellValue {
  const { value, ci, significant, reason, p, q, test, saturated } = measured(cell, measure);
  return {
    row,
    benchmark: cell.benchmark,
    metric: cell.metric,
    value,
    low: ci?.low ?? null,
    high: ci?.high ?? null,
    significant,
    reason: value === null ? (reasons[(reason ?? 1) - 1] ?? null) : null,
    p: p ?? null,
    q: q ?? null,
    test: test ?? null,
    saturated: tested && measure === "ais" ? saturated : null,
  };
}

/** The figure's numbers as CSV, a row per cell (the baselines, for a run without abilities). */
export function viewCsv(view: ResultsView): string {
  const lines = (header: string[], rows: unknown[][]) =>
    [header, ...rows].map((r) => r.map((v) => csvCell(v ?? "")).join(",")).join("\n") + "\n";
  if (!view.profile)
    return lines(
      ["benchmark", "items", "acc", "acc_norm", "exact_match", "chance"],
      view.baseline.map((b) => [b.name, b.items, b.acc, b.acc_norm, b.exact_match, b.chance]),
    );
  const { model, k, cells } = view.query;
  const measure = cells === "specificity" ? "specificity" : "ais";
  return lines(
    [
      "model",
      "k",
      "cells",
      "row",
      "benchmark",
      "metric",
      measure,
      "ci_low",
      "ci_high",
      "significant",
      "reason",
      "p",
      "q",
      "test",
      "saturated",
    ],
    view.profile.values.map((v) => [
      model,
      k,
      cells,
      v.row,
      v.benchmark,
      v.metric,
      v.value,
      v.low,
      v.high,
      v.significant,
      v.reason,
      v.p,
      v.q,
      v.test,
      v.saturated,
    ]),
  );
}

function csvCell(value: unknown): string {
  const text = String(value);
  return /[",\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
