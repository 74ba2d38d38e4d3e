// Results of one model with a profile, written by hand for tests of what reads them (the report
// model, the terminal's tables, the failure signatures, fluency): the cells a test chooses inside
// the frame every such results.json shares; and the report model's cells, for tests of the checks
// that read them (expectations, consistency).
import type { ReportCell } from "../../src/core/report/types";
import type { CellMetric, ModelProfile, Results, VariantResult } from "../../src/core/results/schema";

/** The demo's eleven benchmarks, by name. */
export const DEMO_BENCHMARKS = [
  "analogical",
  "commonsense",
  "contextual",
  "deductive",
  "inductive",
  "knowledge",
  "quantitative",
  "semantic",
  "spatial",
  "temporal",
  "mixed",
].map((name) => `demo_${name}`);

/**
 * A cell with this AIS on a baseline of 0.8 over chance 0.25 (the ablated score that gives it), an
 * interval of `halfWidth` either side, significant where it excludes 0 unless said.
 */
export function aisCell(
  ais: number,
  options: { halfWidth?: number; significant?: boolean; flips?: { right_to_wrong: number; wrong_to_right: number } } = {},
): CellMetric {
  const halfWidth = options.halfWidth ?? 0.05;
  return {
    baseline: 0.8,
    ablated: 0.8 - ais * 0.55,
    chance: 0.25,
    ais,
    ci: { low: ais - halfWidth, high: ais + halfWidth, confidence: 0.95 },
    significant: options.significant ?? Math.abs(ais) > halfWidth,
    undefined_resamples: 0,
    flips: options.flips ?? { right_to_wrong: ais > 0 ? 3 : 0, wrong_to_right: ais < 0 ? 3 : 0 },
  };
}

/**
 * A report cell on acc with this AIS (baseline 0.8, ablated 0.5, chance 0.25, no flips) and
 * interval; a group's of two tasks where said.
 */
export function reportCell(
  benchmark: string,
  ais: number | null,
  options: { ci: [number, number] | null; significant: boolean; group?: boolean },
): ReportCell {
  return {
    benchmark,
    metric: "acc",
    baseline: 0.8,
    ablated: 0.5,
    chance: 0.25,
    ais,
    ci: options.ci && { low: options.ci[0], high: options.ci[1], confidence: 0.95 },
    significant: options.significant,
    flips: { rightToWrong: 0, wrongToRight: 0 },
    ...(options.group ? { group: { tasks: 2, weightBySize: true } } : {}),
  };
}

/** Ability number `a`'s top set at k = 0.01 (n = 1000), its files named after the number, with its cells per benchmark. */
export function topVariant(ability: string, a: number, benchmarks: VariantResult["benchmarks"]): VariantResult {
  return {
    ability,
    ability_id: `a${a}`,
    selection: "top",
    k: 0.01,
    n: 1000,
    scores_file: `runner/v${a}.jsonl`,
    items_file: `variants/v${a}.items.jsonl`,
    benchmarks,
  };
}

/** The frame of a profile of topVariant's sets: the paper's rule, top sets alone at k = 0.01, of a model of 100,000 parameters. */
export function topSetsProfile(): Pick<ModelProfile, "parameters" | "candidates" | "k" | "selections" | "method"> {
  return { parameters: 1e5, candidates: 6e4, k: [0.01], selections: ["top"], method: "paper" };
}

export interface OneModelRun {
  benchmarks: readonly string[];
  /** Every benchmark's baseline. */
  baseline: { items: number; acc: number; acc_norm: number; chance: number };
  /** The profile; its seed, bootstrap (1000 resamples, 95%) and overlap (none) unless given. */
  profile: Omit<ModelProfile, "seed" | "bootstrap" | "overlap"> & Partial<ModelProfile>;
  /** Benchmarks' ability labels. */
  labels?: ReadonlyMap<string, string>;
  model?: string;
  /** The model's folder: /p/model unless given. */
  path?: string;
  run?: Partial<Pick<Results, "run_id" | "created" | "config_file" | "runner_version">>;
}

export function oneModelResults(o: OneModelRun): Results {
  return {
    schema: "bprof.results",
    schema_version: 1,
    run_id: "20261127-000000-abcd",
    created: "2026-11-27T00:00:00.000Z",
    config_file: "/p/x.bprof.yaml",
    runner_version: "test",
    ...o.run,
    models: [
      {
        name: o.model ?? "demo-llama",
        path: o.path ?? "/p/model",
        dtype: "float32",
        benchmarks: o.benchmarks.map((name) => ({
          name,
          task_file: `/p/${name}.yaml`,
          ...o.baseline,
          ...(o.labels?.has(name) ? { ability: o.labels.get(name)! } : {}),
        })),
        profile: { seed: 1, bootstrap: { resamples: 1000, confidence: 0.95, seed: 1 }, overlap: [], ...o.profile },
      },
    ],
  };
}
