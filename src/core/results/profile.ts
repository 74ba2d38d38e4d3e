// From the runner's `profile` output (PROTOCOL.md: profile.json, baseline.jsonl, one scores file
// per variant) to results: per (ability, selection, k, benchmark) the AIS with its paired
// bootstrap interval, specificity against the random control, flips, and the overlap of the
// abilities' top sets. Runner ids are mapped back to the user's ability names here. Multiple-choice
// benchmarks get cells under acc and acc_norm; generate_until benchmarks, whose generated tokens are
// decoded, cut, filtered and matched here (analysis/generation.ts), get one under exact_match.
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { benchmarkAccuracy, scoreItem, type ChoiceScore, type ScoredItem } from "../analysis/accuracy";
import { ALL_METRICS, chancePerItem, correctnessVector, meanOf, metricsOf, type Metric } from "../analysis/ais";
import { bootstrapGrid, type BootstrapEstimate, type GridBenchmark, type GridCell } from "../analysis/bootstrap";
import { cellFlips } from "../analysis/flips";
import { benchmarkExactMatch, cutAtStop, isGenerated, scoreGeneration, type BenchmarkItem } from "../analysis/generation";
import type { Doc } from "../lmeval/documents";
import { applyFiltersToAll, hasPythonStep } from "../lmeval/exactMatch";
import { jaccardFromCounts } from "../analysis/overlap";
import type { ResolvedBenchmark } from "../config/load";
import type { ImportanceMethod, Selection } from "../config/types";
import type { AbilityRef, ItemRef } from "../plan/job";
import { itemId } from "../plan/job";
import type { BenchmarkResult, CellMetric, ChoiceBenchmarkResult, ModelProfile, OverlapResult, Specificity, VariantBenchmark, VariantResult } from "./store";

/** profile.json, the manifest the runner writes last. */
export interface RunnerManifest {
  parameters: number;
  candidates: { tensors?: { name: string; numel: number; offset: number }[]; total: number };
  variants: { ability: string | null; selection: Selection; k: number; n: number; file: string; lowering?: number }[];
  overlap?: { k: number; n: number; abilities: string[]; intersections: number[][] }[];
}

/** A generation item's result line: the generated token ids and whether a stop sequence ended it. */
export interface RunnerGeneration {
  generated: number[];
  stopped: boolean;
}

/** Per item id, the choices' scores (a multiple-choice item) or the generation (a generate_until item). */
export type RunnerScores = Map<string, ChoiceScore[] | RunnerGeneration>;

/** Decodes generated token ids to text (ModelTokenizer.decode). */
export type Decoder = (ids: readonly number[]) => string;

/** Every metric a cell can have (acc and acc_norm: multiple choice; exact_match: generation). */
export const METRICS: readonly Metric[] = ALL_METRICS;

export async function readRunnerScores(file: string): Promise<RunnerScores> {
  const scores: RunnerScores = new Map();
  let text: string;
  try {
    text = await fs.readFile(file, "utf8");
  } catch {
    throw new Error(`the runner's scores are missing: ${file}`);
  }
  for (const [i, line] of text.split("\n").entries()) {
    if (line.trim() === "") continue;
    let row: { id?: unknown; choices?: unknown; generated?: unknown; stopped?: unknown };
    try {
      row = JSON.parse(line) as typeof row;
    } catch {
      throw new Error(`${file}:${i + 1}: not a JSON line`);
    }
    if (typeof row.id === "string" && Array.isArray(row.choices)) scores.set(row.id, row.choices as ChoiceScore[]);
    else if (typeof row.id === "string" && Array.isArray(row.generated) && row.generated.every((t) => Number.isInteger(t)) && typeof row.stopped === "boolean") {
      scores.set(row.id, { generated: row.generated as number[], stopped: row.stopped });
    } else throw new Error(`${file}:${i + 1}: expected {"id", "choices": [...]} or {"id", "generated": [...], "stopped"}`);
  }
  return scores;
}

/**
 * The benchmark items of a job with the runner's results, in job order (the order of `refs`).
 * Generated items need the model's tokenizer to decode their tokens; without `decode`, every item
 * must be multiple choice.
 */
export function scoredItems(refs: readonly ItemRef[], benchmarks: readonly ResolvedBenchmark[], scores: RunnerScores, source: string): ScoredItem[];
export function scoredItems(refs: readonly ItemRef[], benchmarks: readonly ResolvedBenchmark[], scores: RunnerScores, source: string, decode: Decoder, filtered?: ReadonlyMap<string, string[]>): BenchmarkItem[];
export function scoredItems(refs: readonly ItemRef[], benchmarks: readonly ResolvedBenchmark[], scores: RunnerScores, source: string, decode?: Decoder, filtered?: ReadonlyMap<string, string[]>): BenchmarkItem[] {
  const byId = new Map(benchmarks.flatMap((b) => b.task.items.map((i) => [itemId(b.name, i.index), { item: i, task: b.task }] as const)));
  return refs.map((ref): BenchmarkItem => {
    const found = byId.get(ref.id);
    if (!found) throw new Error(`${ref.id} is not an item of the job's benchmarks`);
    const { item, task } = found;
    const result = ref.parts ? joinedParts(ref.parts, scores) : scores.get(ref.id);
    if (item.kind === "generate_until") {
      if (!decode) throw new Error(`${ref.id} is a generate_until item: decoding its tokens needs the model's tokenizer`);
      if (result === undefined || Array.isArray(result)) throw new Error(`${source}: the generation of ${ref.id} is missing`);
      const doc = task.documents?.[ref.index];
      const rules = { until: task.generation?.until ?? [], filters: task.filters, exactMatch: task.exactMatch, ...(doc ? { doc } : {}) };
      return scoreGeneration(ref.benchmark, ref.index, item.target, result.generated, result.stopped, decode, rules, filtered?.get(ref.id));
    }
    if (!Array.isArray(result) || result.length !== item.choices.length) throw new Error(`${source}: the scores of ${ref.id} are missing or incomplete`);
    return scoreItem(ref.benchmark, ref.index, item.target, item.choices, result);
  });
}

/** Per source (scores.jsonl, baseline.jsonl, a variant's file) and item id, each filter pipeline's answer. */
export type FilteredAnswers = ReadonlyMap<string, ReadonlyMap<string, string[]>>;

/**
 * The answers of the benchmarks whose filters run a Python class (lm-eval's Filter API), which
 * sees every document's response at once: each pipeline applied to all of a benchmark's
 * responses from all `sources` together. Undefined when no benchmark has one.
 */
export async function pythonFilteredAnswers(refs: readonly ItemRef[], benchmarks: readonly ResolvedBenchmark[], sources: ReadonlyMap<string, RunnerScores>, decode: Decoder): Promise<FilteredAnswers | undefined> {
  const withPython = benchmarks.filter((b) => b.task.filters.some(hasPythonStep));
  if (withPython.length === 0) return undefined;
  const out = new Map<string, Map<string, string[]>>();
  for (const { name, task } of withPython) {
    const entries: { source: string; id: string; response: string; doc: Doc }[] = [];
    for (const [source, scores] of sources) {
      for (const ref of refs) {
        const result = ref.benchmark === name ? scores.get(ref.id) : undefined;
        if (result === undefined || Array.isArray(result)) continue;
        entries.push({ source, id: ref.id, response: cutAtStop(decode(result.generated), task.generation?.until ?? []), doc: task.documents?.[ref.index] ?? {} });
      }
    }
    const responses = entries.map((e) => [e.response]);
    const docs = entries.map((e) => e.doc);
    const perPipeline = await Promise.all(task.filters.map((pipeline) => applyFiltersToAll(pipeline, responses, docs)));
    entries.forEach((e, i) => {
      const bySource = out.get(e.source) ?? new Map<string, string[]>();
      bySource.set(e.id, perPipeline.map((answers) => answers[i]!));
      out.set(e.source, bySource);
    });
  }
  return out;
}

/**
 * The choices' scores of a document sent as several job items (plan/job.ts, truncation), in
 * choice order; undefined when a part is missing or does not have its choices.
 */
function joinedParts(parts: NonNullable<ItemRef["parts"]>, scores: RunnerScores): ChoiceScore[] | undefined {
  const total = parts.reduce((n, p) => n + p.choices.length, 0);
  const joined = new Array<ChoiceScore | undefined>(total).fill(undefined);
  for (const part of parts) {
    const result = scores.get(part.id);
    if (!Array.isArray(result) || result.length !== part.choices.length) return undefined;
    part.choices.forEach((c, j) => {
      joined[c] = result[j];
    });
  }
  return joined.every((score) => score !== undefined) ? (joined as ChoiceScore[]) : undefined;
}

export interface ProfileInputs {
  benchmarks: readonly ResolvedBenchmark[];
  refs: readonly ItemRef[];
  abilities: readonly AbilityRef[];
  /** The job's ablation: k ascending, as the runner numbers its files. */
  k: readonly number[];
  selections: readonly Selection[];
  method: ImportanceMethod;
  seed: number;
  bootstrap: { resamples: number; confidence: number };
  /** The model's tokenizer's decode; needed when a benchmark is generate_until. */
  decode?: Decoder;
  /** Answers of the pipelines with a Python filter class (pythonFilteredAnswers), by source. */
  filtered?: FilteredAnswers;
}

export interface AssembledProfile {
  /** The unmodified model's items (items.jsonl). */
  baseline: BenchmarkItem[];
  profile: ModelProfile;
  /** Per variant, its scored items, keyed by the variant's `items_file`. */
  variantItems: Map<string, BenchmarkItem[]>;
}

/** Where a variant's scored items go, relative to the model folder: variants/<runner file name>.items.jsonl. */
export function variantItemsFile(runnerFile: string): string {
  return path.posix.join("variants", path.posix.basename(runnerFile).replace(/\.jsonl$/, "") + ".items.jsonl");
}

/** Reads a runner output folder and assembles the results; `runnerDir` is the model folder's name for it. */
export async function readProfileOutput(outDir: string, inputs: ProfileInputs, runnerDir = "runner"): Promise<AssembledProfile> {
  const manifestFile = path.join(outDir, "profile.json");
  let manifest: RunnerManifest;
  try {
    manifest = JSON.parse(await fs.readFile(manifestFile, "utf8")) as RunnerManifest;
  } catch (e) {
    throw new Error(`the runner's manifest is missing or unreadable: ${manifestFile} (${(e as Error).message})`);
  }
  checkManifest(manifest, manifestFile);
  const baseline = await readRunnerScores(path.join(outDir, "baseline.jsonl"));
  const variantScores = new Map<string, RunnerScores>();
  for (const v of manifest.variants) variantScores.set(v.file, await readRunnerScores(path.join(outDir, v.file)));
  const sources = new Map([["baseline.jsonl", baseline], ...variantScores]);
  const filtered = inputs.decode ? await pythonFilteredAnswers(inputs.refs, inputs.benchmarks, sources, inputs.decode) : undefined;
  return assembleProfile(manifest, baseline, variantScores, { ...inputs, ...(filtered ? { filtered } : {}) }, runnerDir);
}

function checkManifest(manifest: RunnerManifest, file: string): void {
  const ok = typeof manifest === "object" && manifest !== null && typeof manifest.parameters === "number" &&
    typeof manifest.candidates?.total === "number" && Array.isArray(manifest.variants);
  if (!ok) throw new Error(`${file}: expected {"parameters", "candidates": {"total"}, "variants": [...]}`);
}

/** The job's k closest to a k the runner printed (they are equal unless printing lost digits). */
function jobK(k: readonly number[], value: number, file: string): number {
  const match = k.find((x) => Math.abs(x - value) <= 1e-12 * Math.max(1, Math.abs(x)));
  if (match === undefined) throw new Error(`${file}: k = ${value} is not one of the job's k values (${k.join(", ")})`);
  return match;
}

/** Pure assembly from parsed runner outputs (see readProfileOutput). */
export function assembleProfile(
  manifest: RunnerManifest,
  baselineScores: RunnerScores,
  variantScores: ReadonlyMap<string, RunnerScores>,
  inputs: ProfileInputs,
  runnerDir = "runner",
): AssembledProfile {
  const nameOf = new Map(inputs.abilities.map((a) => [a.id, a.name]));
  const abilityName = (id: string | null): string | null => {
    if (id === null) return null;
    const name = nameOf.get(id);
    if (name === undefined) throw new Error(`profile.json names ability \`${id}\`, which is not in the job (${[...nameOf.keys()].join(", ")})`);
    return name;
  };
  const score = (scores: RunnerScores, source: string): BenchmarkItem[] => scoredItems(inputs.refs, inputs.benchmarks, scores, source, inputs.decode ?? noDecoder, inputs.filtered?.get(source));
  const baseline = score(baselineScores, "baseline.jsonl");
  const benchmarkNames = inputs.benchmarks.map((b) => b.name);
  const baselineOf = new Map(benchmarkNames.map((name) => [name, baseline.filter((i) => i.benchmark === name)]));
  const metricsOfBenchmark = new Map(inputs.benchmarks.map((b) => [b.name, metricsOf(b.task.outputType)]));

  // Variants in a stable order: abilities in config order, selections as configured, k ascending; random last.
  const variants = manifest.variants.map((v) => ({ ...v, k: jobK(inputs.k, v.k, "profile.json"), name: abilityName(v.ability) }));
  const abilityOrder = new Map(inputs.abilities.map((a, i) => [a.id, i]));
  const rank = (v: (typeof variants)[number]) => [v.ability === null ? inputs.abilities.length : abilityOrder.get(v.ability)!, inputs.selections.indexOf(v.selection), v.k];
  variants.sort((a, b) => {
    const [ra, rb] = [rank(a), rank(b)];
    return ra[0]! - rb[0]! || ra[1]! - rb[1]! || ra[2]! - rb[2]!;
  });
  checkVariantsComplete(variants, inputs);

  const variantItems = new Map<string, BenchmarkItem[]>();
  const itemsOf = new Map<string, BenchmarkItem[]>();
  for (const v of variants) {
    const scores = variantScores.get(v.file);
    if (!scores) throw new Error(`the scores of variant ${v.file} were not read`);
    const items = score(scores, v.file);
    itemsOf.set(v.file, items);
    variantItems.set(variantItemsFile(v.file), items);
  }
  const randomAt = new Map(variants.filter((v) => v.selection === "random").map((v) => [v.k, v.file]));

  // One grid per metric, over the benchmarks scored by it: every benchmark's resamples shared by
  // all of its cells. Chance is 1/|choices| per multiple-choice item, 0 per generated one.
  const bootstrapOptions = { resamples: inputs.bootstrap.resamples, confidence: inputs.bootstrap.confidence, seed: inputs.seed };
  const cellMetrics = new Map<string, CellMetric>(); // `${file}\u0000${benchmark}\u0000${metric}`
  for (const metric of METRICS) {
    const gridBenchmarks: GridBenchmark[] = benchmarkNames
      .filter((name) => baselineOf.get(name)!.length > 0 && metricsOfBenchmark.get(name)!.includes(metric))
      .map((name) => ({ name, baseline: correctnessVector(baselineOf.get(name)!, metric), chance: chancePerItem(baselineOf.get(name)!) }));
    const cells: (GridCell & { file: string })[] = [];
    for (const v of variants) {
      const control = v.selection === "top" ? randomAt.get(v.k) : undefined;
      for (const g of gridBenchmarks) {
        const ablated = correctnessVector(itemsOf.get(v.file)!.filter((i) => i.benchmark === g.name), metric);
        const controlItems = control === undefined ? undefined : itemsOf.get(control)!.filter((i) => i.benchmark === g.name);
        cells.push({ file: v.file, benchmark: g.name, ablated, ...(controlItems ? { control: correctnessVector(controlItems, metric) } : {}) });
      }
    }
    for (const { cell, ais, specificity } of bootstrapGrid(gridBenchmarks, cells, bootstrapOptions)) {
      const before = baselineOf.get(cell.benchmark)!;
      const after = itemsOf.get(cell.file)!.filter((i) => i.benchmark === cell.benchmark);
      const flips = cellFlips(before, after, metric);
      cellMetrics.set(`${cell.file}\u0000${cell.benchmark}\u0000${metric}`, {
        baseline: meanOf(correctnessVector(before, metric)),
        ablated: meanOf(cell.ablated),
        chance: meanOf(chancePerItem(before)),
        ...estimateFields(ais),
        ...(specificity ? { specificity: specificityOf(specificity) } : {}),
        flips: { right_to_wrong: flips.rightToWrong.length, wrong_to_right: flips.wrongToRight.length },
      });
    }
  }
  const emptyCell = (file: string, name: string, metric: Metric): CellMetric => {
    const after = itemsOf.get(file)!.filter((i) => i.benchmark === name);
    return {
      baseline: 0, ablated: meanOf(correctnessVector(after, metric)), chance: 0, ais: null,
      reason: "AIS is undefined: the benchmark has no items", ci: null, significant: false, undefined_resamples: 0, flips: { right_to_wrong: 0, wrong_to_right: 0 },
    };
  };

  const results: VariantResult[] = variants.map((v) => ({
    ability: v.name,
    ability_id: v.ability,
    selection: v.selection,
    k: v.k,
    n: v.n,
    ...(typeof v.lowering === "number" ? { lowering: v.lowering } : {}),
    scores_file: path.posix.join(runnerDir, v.file),
    items_file: variantItemsFile(v.file),
    benchmarks: benchmarkNames.map((name): VariantBenchmark => {
      const metricOf = (metric: Metric) => cellMetrics.get(`${v.file}\u0000${name}\u0000${metric}`) ?? emptyCell(v.file, name, metric);
      return { name, ...Object.fromEntries(metricsOfBenchmark.get(name)!.map((metric) => [metric, metricOf(metric)])) };
    }),
  }));

  const overlap: OverlapResult[] = (manifest.overlap ?? []).map((o) => {
    const names = o.abilities.map((id) => nameOf.get(id) ?? id);
    const sizes = o.intersections.map((row, i) => row[i] ?? o.n);
    return { k: jobK(inputs.k, o.k, "profile.json overlap"), n: o.n, abilities: names, intersections: o.intersections, jaccard: jaccardFromCounts(o.intersections, sizes) };
  });

  return {
    baseline,
    variantItems,
    profile: {
      parameters: manifest.parameters,
      candidates: manifest.candidates.total,
      k: [...inputs.k],
      selections: [...inputs.selections],
      method: inputs.method,
      seed: inputs.seed,
      bootstrap: { ...inputs.bootstrap, seed: inputs.seed },
      abilities: inputs.abilities.map((a) => ({ name: a.name, id: a.id, sequences: a.sequences })),
      variants: results,
      overlap,
    },
  };
}

/** Every (ability, selection, k) the job asked for, and random per k, must be in the manifest once. */
function checkVariantsComplete(variants: readonly { ability: string | null; selection: Selection; k: number; file: string }[], inputs: ProfileInputs): void {
  const key = (ability: string | null, selection: string, k: number) => `${ability ?? "(random)"} ${selection} k=${k}`;
  const seen = new Set<string>();
  for (const v of variants) {
    const id = key(v.ability, v.selection, v.k);
    if (seen.has(id)) throw new Error(`profile.json lists the variant ${id} twice`);
    seen.add(id);
  }
  const expected: string[] = [];
  for (const selection of inputs.selections) {
    for (const k of inputs.k) {
      if (selection === "random") expected.push(key(null, selection, k));
      else for (const a of inputs.abilities) expected.push(key(a.id, selection, k));
    }
  }
  const missing = expected.filter((e) => !seen.has(e));
  if (missing.length > 0) throw new Error(`profile.json lacks ${missing.length} variant(s) of the job: ${missing.slice(0, 5).join("; ")}`);
}

function estimateFields(e: BootstrapEstimate): Omit<CellMetric, "baseline" | "ablated" | "chance" | "flips" | "specificity"> {
  return {
    ais: e.estimate.defined ? e.estimate.value : null,
    ...(e.estimate.defined ? {} : { reason: e.estimate.reason }),
    ci: e.interval,
    significant: e.significant,
    undefined_resamples: e.undefinedResamples,
    ...(e.note ? { note: e.note } : {}),
  };
}

function specificityOf(e: BootstrapEstimate): Specificity {
  return {
    value: e.estimate.defined ? e.estimate.value : null,
    ...(e.estimate.defined ? {} : { reason: e.estimate.reason }),
    ci: e.interval,
    significant: e.significant,
  };
}

/**
 * The baseline's scores per benchmark, as results.json reports them for every run: acc, acc_norm
 * and chance for multiple choice; exact_match (first filter), per-filter exact_match and chance 0
 * for generate_until.
 */
export function baselineAccuracies(baseline: readonly ScoredItem[], benchmarks: readonly ResolvedBenchmark[]): ChoiceBenchmarkResult[];
export function baselineAccuracies(baseline: readonly BenchmarkItem[], benchmarks: readonly ResolvedBenchmark[]): BenchmarkResult[];
export function baselineAccuracies(baseline: readonly BenchmarkItem[], benchmarks: readonly ResolvedBenchmark[]): BenchmarkResult[] {
  return benchmarks.map((b): BenchmarkResult => {
    const items = baseline.filter((i) => i.benchmark === b.name);
    const label = b.ability === undefined ? {} : { ability: b.ability };
    if (b.task.outputType === "generate_until") {
      const generated = items.filter(isGenerated);
      if (generated.length !== items.length) throw new Error(`${b.name} is generate_until but has multiple-choice items`);
      return { name: b.name, task_file: b.task.file, output_type: "generate_until", ...label, ...benchmarkExactMatch(generated, b.task.filters.map((f) => f.name)) };
    }
    const scored = items.filter((i): i is ScoredItem => !isGenerated(i));
    if (scored.length !== items.length) throw new Error(`${b.name} is multiple_choice but has generated items`);
    return { name: b.name, task_file: b.task.file, output_type: "multiple_choice", ...label, ...benchmarkAccuracy(scored) };
  });
}

function noDecoder(): string {
  throw new Error("a generate_until benchmark's tokens cannot be decoded without the model's tokenizer (ProfileInputs.decode)");
}
