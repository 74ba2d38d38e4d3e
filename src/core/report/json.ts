// JSON report: the run's metadata, and its cells, overlaps and flipped documents as flat arrays
// (schema `bprof.report`, version 1, documented in docs/report-formats.md).
import { ALL_METRICS } from "../analysis/ais";
import { isGenerationResult, profilesOf, type Results } from "../results/schema";
import {
  firstOfItsSet,
  flatCells,
  flatChunked,
  flatFlippedDocuments,
  flatNoise,
  flatOverlap,
  flatStability,
  type CellFilter,
} from "./cells";
import type { LoadedRun, RunItems } from "./load";
import { buildReport } from "./model";

export const REPORT_SCHEMA_VERSION = 1;

/**
 * A JSON file's text, indented, with every character a terminal or an older JavaScript engine
 * would act on as a `\uXXXX` escape: JSON.stringify escapes the C0 controls but writes DEL, the C1
 * controls (CSI among them) and U+2028/U+2029 as they are. The value read back is the same.
 */
export function jsonText(value: unknown): string {
  return (
    JSON.stringify(value, null, 2).replace(/[\u007f-\u009f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`) +
    "\n"
  );
}

export async function renderJson(run: LoadedRun, items: RunItems, filter: CellFilter = {}): Promise<{ text: string; warnings: string[] }> {
  const { results } = run;
  const flipped = await flatFlippedDocuments(results, items, filter);
  // the failure signatures as every other report finds them: at the largest k kept, under the metric kept
  const metric = filter.metric === "acc_norm" ? "acc_norm" : "acc";
  const built = await buildReport(run, { metric, ...(filter.k !== undefined ? { k: filter.k } : {}) });
  const report = {
    schema: "bprof.report",
    schema_version: REPORT_SCHEMA_VERSION,
    run: {
      id: results.run_id,
      created: results.created,
      config_file: results.config_file,
      runner_version: results.runner_version ?? null,
      results_file: run.resultsFile,
    },
    filter: { metric: filter.metric ?? null, k: filter.k ?? null },
    models: results.models.map((m) => modelMeta(m)),
    cells: flatCells(results, filter),
    overlap: flatOverlap(results, filter),
    chunked: flatChunked(results, filter),
    stability: flatStability(results, filter),
    fluency: flatFluency(results, filter),
    findings: built.models.flatMap((m) => m.findings.map((f) => ({ model: m.name, ...f }))),
    // per k of the report, under its metric: the checks of `expects` and of second diagnostic sets
    expectations: built.models.flatMap((m) =>
      (m.profile?.sections ?? []).flatMap((s) => s.expectations.map((e) => ({ model: m.name, k: s.k, ...e }))),
    ),
    consistency: built.models.flatMap((m) =>
      (m.profile?.sections ?? []).flatMap((s) => s.consistency.map((c) => ({ model: m.name, k: s.k, ...c }))),
    ),
    pairs: flatPairs(results, filter),
    noise: flatNoise(results, filter),
    flipped_documents: flipped.documents,
    warnings: flipped.errors,
  };
  return { text: jsonText(report), warnings: flipped.errors };
}

/** One row per pair, k, benchmark and metric (ablation.pairs): the union's AIS and the interference. */
function flatPairs(results: Results, filter: CellFilter) {
  return results.models.flatMap((m) =>
    (m.profile?.pairs ?? [])
      .filter((p) => filter.k === undefined || p.k === filter.k)
      .flatMap((p) =>
        p.benchmarks.flatMap((b) =>
          ALL_METRICS.filter((metric) => b[metric] && (filter.metric === undefined || filter.metric === metric)).map((metric) => ({
            model: m.name,
            abilities: p.abilities,
            k: p.k,
            n: p.n,
            benchmark: b.name,
            metric,
            ...b[metric]!,
          })),
        ),
      ),
  );
}

function modelMeta(m: Results["models"][number]) {
  const p = m.profile;
  return {
    name: m.name,
    path: m.path,
    dtype: m.dtype,
    baseline: m.benchmarks.map((b) =>
      isGenerationResult(b)
        ? {
            benchmark: b.name,
            output_type: b.output_type,
            items: b.items,
            exact_match: b.exact_match,
            filter: b.filter,
            exact_match_by_filter: b.exact_match_by_filter,
            ...(b.expects ? { expects: b.expects } : {}),
            chance: b.chance,
          }
        : {
            benchmark: b.name,
            items: b.items,
            acc: b.acc,
            acc_norm: b.acc_norm,
            chance: b.chance,
            ...(b.expects ? { expects: b.expects } : {}),
          },
    ),
    groups: m.groups ?? [],
    profile: p
      ? {
          parameters: p.parameters,
          candidates: p.candidates,
          k: [...p.k].sort((a, b) => a - b),
          selections: p.selections,
          method: p.method,
          seed: p.seed,
          bootstrap: p.bootstrap,
          abilities: p.abilities,
          ...(p.fluency ? { fluency: p.fluency } : {}),
          // how the cells were starred, and the random control's draws per k (runs before them: absent)
          ...(p.stats ? { stats: p.stats } : {}),
          ...(p.random_draws?.length ? { random_draws: randomDrawsOf(p) } : {}),
          // the rules after the first, when the run ranked by several (the cells name each row's rule)
          ...(m.other_methods?.length ? { other_methods: m.other_methods.map((o) => o.method) } : {}),
          ...(m.other_methods?.some((o) => o.candidate_set !== p.candidate_set)
            ? { candidate_sets: profilesOf(m).map((o) => o.candidate_set ?? "mlp") }
            : p.candidate_set
              ? { candidate_set: p.candidate_set }
              : {}),
        }
      : null,
  };
}

/** The random control's draws per k, the first (the random variant) included: the most at any k. */
function randomDrawsOf(p: NonNullable<Results["models"][number]["profile"]>): number {
  const perK = new Map<number, number>();
  for (const d of p.random_draws ?? []) perK.set(d.k, (perK.get(d.k) ?? 1) + 1);
  return Math.max(1, ...perK.values());
}

/** Every variant's fluency measure at the filter's k, one object each; empty for runs made before it. */
function flatFluency(results: Results, filter: CellFilter) {
  return results.models.flatMap((m) =>
    profilesOf(m).flatMap((p, r) =>
      p.variants
        .filter(
          (v) =>
            v.fluency && (filter.k === undefined || Math.abs(v.k - filter.k) <= 1e-12 * v.k) && (firstOfItsSet(m, r) || v.ability !== null),
        )
        .map((v) => ({
          model: m.name,
          ability: v.ability,
          method: v.ability === null ? null : p.method,
          ...(p.candidate_set ? { candidates: p.candidate_set } : {}),
          selection: v.selection,
          k: v.k,
          ...v.fluency!,
        })),
    ),
  );
}
