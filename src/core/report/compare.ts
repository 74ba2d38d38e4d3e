// Two profiles compared (bprof compare): two models of one run, or the models of two runs, matched
// benchmark by benchmark (name and data hash) and ability by ability (name), at one k of the top
// selection under each profile's first importance rule. The figures: analysis/compare.ts.
import * as path from "node:path";
import { aisDifference, rankCorrelation, type AisDifference } from "../analysis/compare";
import { alignedVariant, chancePerItem, metricsOf, scoreVector, type Metric } from "../analysis/ais";
import type { BenchmarkItem } from "../analysis/generation";
import type { BootstrapOptions } from "../analysis/bootstrap";
import type { ModelProfile, ModelResults, Results } from "../results/schema";
import { ReportInputError, RunItems, type LoadedRun } from "./load";

/** One side of a comparison: a run and one of its models. */
export interface ProfileRef {
  run: LoadedRun;
  /** The model's name in the run; the run's only (or first) model when absent. */
  model?: string;
}

export interface ComparisonOptions extends BootstrapOptions {
  /** The k compared; default the largest k both profiles ran. */
  k?: number;
  /** acc or acc_norm for multiple-choice benchmarks (default acc); generate_until ones use exact_match. */
  metric?: Metric;
}

export interface ComparisonCell extends AisDifference {
  ability: string;
  benchmark: string;
  /** The two AIS have opposite signs (each defined and non-zero). */
  signDiffers: boolean;
}

export interface BenchmarkAgreement {
  benchmark: string;
  metric: Metric;
  /** Both profiles scored the same documents: the intervals are paired. */
  paired: boolean;
  /** Spearman's rank correlation of the two profiles' AIS over the abilities; null with fewer than 3 or a constant row. */
  rankCorrelation: number | null;
  /** Abilities whose AIS is defined on both sides (the correlation's pairs). */
  abilities: number;
}

export interface Comparison {
  a: { run: string; model: string; method: string };
  b: { run: string; model: string; method: string };
  k: number;
  abilities: string[];
  benchmarks: BenchmarkAgreement[];
  cells: ComparisonCell[];
  /** What could not be matched, and why. */
  unmatched: string[];
  resamples: number;
  confidence: number;
}

/** The comparison of two profiles; a ReportInputError says what does not allow one. */
export async function compareProfiles(refA: ProfileRef, refB: ProfileRef, options: ComparisonOptions = {}): Promise<Comparison> {
  const a = sideOf(refA, "A");
  const b = sideOf(refB, "B");
  const k = options.k ?? commonK(a.profile, b.profile);
  for (const side of [a, b]) {
    if (!side.profile.k.some((each) => sameK(each, k)))
      throw new ReportInputError(`${side.label} ran no k = ${k} (its k: ${side.profile.k.join(", ")})`);
  }
  const unmatched: string[] = [];
  const abilities = a.profile.abilities.map((x) => x.name).filter((name) => b.profile.abilities.some((y) => y.name === name));
  for (const [side, other] of [
    [a, b],
    [b, a],
  ] as const) {
    for (const ability of side.profile.abilities) {
      if (!other.profile.abilities.some((x) => x.name === ability.name))
        unmatched.push(`ability \`${ability.name}\` is only in ${side.label}`);
    }
  }
  const benchmarks: { name: string; metric: Metric }[] = [];
  for (const bench of a.model.benchmarks) {
    const other = b.model.benchmarks.find((x) => x.name === bench.name);
    if (!other) {
      unmatched.push(`benchmark \`${bench.name}\` is only in A`);
      continue;
    }
    if (bench.data_sha256 && other.data_sha256 && bench.data_sha256 !== other.data_sha256) {
      unmatched.push(`benchmark \`${bench.name}\` was scored on different data in A and B (data_sha256 differs)`);
      continue;
    }
    if ((bench.output_type ?? "multiple_choice") !== (other.output_type ?? "multiple_choice")) {
      unmatched.push(`benchmark \`${bench.name}\` is multiple choice on one side and generated on the other`);
      continue;
    }
    const metrics = metricsOf(bench.output_type, false);
    benchmarks.push({ name: bench.name, metric: options.metric && metrics.includes(options.metric) ? options.metric : metrics[0]! });
  }
  for (const bench of b.model.benchmarks)
    if (!a.model.benchmarks.some((x) => x.name === bench.name)) unmatched.push(`benchmark \`${bench.name}\` is only in B`);
  if (abilities.length === 0 || benchmarks.length === 0) {
    throw new ReportInputError(`A and B share no ${abilities.length === 0 ? "ability" : "benchmark"} to compare: ${unmatched.join("; ")}`);
  }

  const cells: ComparisonCell[] = [];
  const agreements: BenchmarkAgreement[] = [];
  for (const { name: benchmark, metric } of benchmarks) {
    const baselineA = itemsOf(await a.items.baseline(a.model.name), benchmark);
    const baselineB = itemsOf(await b.items.baseline(b.model.name), benchmark);
    const paired = sameDocuments(baselineA, baselineB);
    const row: ComparisonCell[] = [];
    for (const ability of abilities) {
      const scoresA = await cellScores(a, ability, k, benchmark, baselineA, metric);
      const scoresB = await cellScores(b, ability, k, benchmark, baselineB, metric);
      const difference = aisDifference(scoresA, scoresB, paired, options);
      row.push({ ability, benchmark, ...difference, signDiffers: oppositeSigns(difference) });
    }
    cells.push(...row);
    const both = row.filter((cell) => cell.a.defined && cell.b.defined);
    agreements.push({
      benchmark,
      metric,
      paired,
      abilities: both.length,
      rankCorrelation: rankCorrelation(
        both.map((cell) => (cell.a.defined ? cell.a.value : 0)),
        both.map((cell) => (cell.b.defined ? cell.b.value : 0)),
      ),
    });
  }
  return {
    a: { run: refA.run.results.run_id, model: a.model.name, method: a.profile.method },
    b: { run: refB.run.results.run_id, model: b.model.name, method: b.profile.method },
    k,
    abilities,
    benchmarks: agreements,
    cells,
    unmatched,
    resamples: cells[0]?.resamples ?? 0,
    confidence: cells[0]?.interval?.confidence ?? options.confidence ?? 0.95,
  };
}

interface Side {
  label: string;
  model: ModelResults;
  profile: ModelProfile;
  items: RunItems;
  /** The side's results.json and its profile's field path there (`models[1].profile`), for messages. */
  resultsFile: string;
  where: string;
}

function sideOf(ref: ProfileRef, label: string): Side {
  const results: Results = ref.run.results;
  const model = ref.model === undefined ? results.models[0] : results.models.find((m) => m.name === ref.model);
  if (!model) {
    throw new ReportInputError(
      `${label}: run ${results.run_id} has no model \`${ref.model}\` (its models: ${results.models.map((m) => m.name).join(", ")})`,
    );
  }
  if (!model.profile)
    throw new ReportInputError(`${label}: model \`${model.name}\` of run ${results.run_id} has no profile (the run had no abilities)`);
  return {
    label: `${label} (${results.run_id}, ${model.name})`,
    model,
    profile: model.profile,
    items: new RunItems(ref.run.dir),
    resultsFile: ref.run.resultsFile,
    where: `models[${results.models.indexOf(model)}].profile`,
  };
}

/** The largest k both profiles ran. */
function commonK(a: ModelProfile, b: ModelProfile): number {
  const shared = a.k.filter((k) => b.k.some((other) => sameK(k, other)));
  if (shared.length === 0)
    throw new ReportInputError(`the two profiles share no k (A: ${a.k.join(", ")}; B: ${b.k.join(", ")}); name one with --k`);
  return Math.max(...shared);
}

function sameK(x: number, y: number): boolean {
  return Math.abs(x - y) <= 1e-12 * Math.max(Math.abs(x), Math.abs(y));
}

function itemsOf(items: readonly BenchmarkItem[], benchmark: string): BenchmarkItem[] {
  return items.filter((item) => item.benchmark === benchmark);
}

/** Both sides scored the same documents in the same order: a paired bootstrap applies. */
function sameDocuments(a: readonly BenchmarkItem[], b: readonly BenchmarkItem[]): boolean {
  return a.length === b.length && a.every((item, i) => item.index === b[i]!.index);
}

async function cellScores(side: Side, ability: string, k: number, benchmark: string, baseline: BenchmarkItem[], metric: Metric) {
  const v = side.profile.variants.findIndex((x) => x.ability === ability && x.selection === "top" && sameK(x.k, k));
  if (v < 0) throw new ReportInputError(`${side.label} has no top variant of \`${ability}\` at k = ${k}`);
  const variant = side.profile.variants[v]!;
  const scored = itemsOf(await side.items.variant(side.model.name, variant.items_file), benchmark);
  const ablated = alignedItems(side, v, benchmark, baseline, scored);
  return { baseline: scoreVector(baseline, metric), ablated: scoreVector(ablated, metric), chance: chancePerItem(baseline) };
}

/**
 * A variant's items of one benchmark in its baseline's document order; a ReportInputError naming
 * both files (and the field that names the variant's) where they do not score the same documents:
 * a run folder's items files can be damaged, or not the run's.
 */
function alignedItems(side: Side, v: number, benchmark: string, baseline: BenchmarkItem[], scored: BenchmarkItem[]): BenchmarkItem[] {
  try {
    return alignedVariant(baseline, scored);
  } catch (e) {
    if (e instanceof ReportInputError || !(e instanceof Error)) throw e;
    const modelDir = side.items.modelDir(side.model.name);
    const variantFile = path.join(modelDir, side.profile.variants[v]!.items_file);
    throw new ReportInputError(
      `${variantFile} (${side.where}.variants[${v}].items_file of ${side.resultsFile}) scores ${scored.length} documents of ` +
        `benchmark \`${benchmark}\`, ${path.join(modelDir, "items.jsonl")} ${baseline.length}: ${e.message}`,
    );
  }
}

function oppositeSigns(cell: AisDifference): boolean {
  if (!cell.a.defined || !cell.b.defined) return false;
  return (cell.a.value > 0 && cell.b.value < 0) || (cell.a.value < 0 && cell.b.value > 0);
}
