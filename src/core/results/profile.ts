// From the runner's `profile` output (PROTOCOL.md: profile.json, baseline.jsonl, one scores file
// per variant) to results: per (ability, selection, k, benchmark) the AIS with its paired
// bootstrap interval, specificity against the random control, flips, and the overlap of the
// abilities' top sets. Runner ids are mapped back to the user's ability names here. Multiple-choice
// benchmarks get cells under acc and acc_norm; generate_until benchmarks, whose generated tokens are
// decoded, cut, filtered and matched (items.ts, analysis/generation.ts), get one under exact_match;
// a task that scores itself in Python (taskScores.ts) gets one under its own metric's slot.
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { OutsideFolderError, pathWithinFolder } from "../base/fsutil";
import { benchmarkAccuracy, type ScoredItem } from "../analysis/accuracy";
import { ALL_METRICS, chancePerItem, scoreVector, meanOf, metricsOf, type Metric, type ScoreVector } from "../analysis/ais";
import { bootstrapGrid, type BootstrapEstimate, type GridBenchmark, type GridCell } from "../analysis/bootstrap";
import { cellFlips } from "../analysis/flips";
import { fluencyOf, variantFluency } from "./fluency";
import { benchmarkExactMatch, isGenerated, type BenchmarkItem } from "../analysis/generation";
import { jaccardFromCounts, jaccardIndex } from "../analysis/overlap";
import { pairImpact } from "../analysis/pairs";
import type { ResolvedBenchmark, ResolvedGroup } from "../config/load";
import { variantGroupCells } from "./groups";
import type { CandidateSet, ImportanceMethod, Selection } from "../config/types";
import type { AbilityRef, ItemRef } from "../plan/job";
import {
  decodingOnce,
  extrasOf,
  pythonFilteredAnswers,
  readRunnerScores,
  scoredItems,
  type Decoder,
  type FilteredAnswers,
  type RunnerScores,
  type TaskScores,
} from "./items";
import {
  estimateFields,
  specificityOf,
  type AbilityStability,
  type BenchmarkResult,
  type CellMetric,
  type ChoiceBenchmarkResult,
  type ModelFluency,
  type ModelProfile,
  type PairCell,
  type PairResult,
  type OverlapResult,
  type Specificity,
  type NoiseResult,
  type RandomDrawResult,
  type VariantBenchmark,
  type VariantResult,
} from "./schema";
import { pythonTaskScores } from "./taskScores";
import { withStars, type StatsSettings } from "./significance";
import { mcnemarExactP } from "../analysis/mcnemar";
import { againstRandomDraws } from "../analysis/randomNull";
import { benchmarkNoise } from "../analysis/noise";
import { DEFAULT_CORRECTION, DEFAULT_FDR } from "../analysis/multipleComparisons";
import { DEFAULT_MIN_EFFECT } from "../analysis/power";

/** profile.json, the manifest the runner writes last. */
export interface RunnerManifest {
  parameters: number;
  candidates: { tensors?: { name: string; numel: number; offset: number }[]; total: number };
  /** `top_chunked` variants also carry `top_n` (floor(k x P)) and `shared_with_top` (|chunked n exact top|). */
  variants: {
    ability: string | null;
    /** The rule that ranked the variant's weights; null for the random control, absent in manifests of runners before rules were listed. */
    method?: ImportanceMethod | null;
    /** The candidate set it was drawn from; present only when the job has several (`ablation.candidates` a list). */
    candidates?: CandidateSet;
    /** Which of the random control's draws (ablation.random_draws) a random variant is; absent with one draw. */
    draw?: number;
    selection: Selection;
    k: number;
    n: number;
    file: string;
    lowering?: number;
    top_n?: number;
    shared_with_top?: number;
  }[];
  overlap?: {
    method?: ImportanceMethod;
    candidates?: CandidateSet;
    k: number;
    n: number;
    abilities: string[];
    intersections: number[][];
  }[];
  /** When the job has several candidate sets: each one's size (`candidates` is the first's). */
  candidate_sets?: { name: CandidateSet; total: number }[];
  /** With `ablation.pairs`: per pair and k, the union of the two top sets scored (`n`: its size). */
  pairs?: { abilities: [string, string]; method?: ImportanceMethod; candidates?: CandidateSet; k: number; n: number; file: string }[];
  /** With `stability`: per ability (and rule), its halves' sizes and per k (the job's order) n and what the halves' top n share. */
  stability?: { ability: string; method?: ImportanceMethod; halves: number[]; n: number[]; shared: number[] }[];
}

/** Every metric a cell can have (acc and acc_norm: multiple choice; exact_match: generation). */
export const METRICS: readonly Metric[] = ALL_METRICS;

export interface ProfileInputs {
  benchmarks: readonly ResolvedBenchmark[];
  refs: readonly ItemRef[];
  abilities: readonly AbilityRef[];
  /** The job's ablation: k ascending, as the runner numbers its files. */
  k: readonly number[];
  selections: readonly Selection[];
  /** The job's rules, in the config's order: one profile each. */
  methods: readonly ImportanceMethod[];
  seed: number;
  /** The random control's draws per k and candidate set (`ablation.random_draws`); absent: 1. */
  randomDraws?: number;
  bootstrap: { resamples: number; confidence: number };
  /** The model's tokenizer's decode; needed when a benchmark is generate_until. */
  decode?: Decoder;
  /** Answers of the pipelines with a Python filter class (pythonFilteredAnswers), by source. */
  filtered?: FilteredAnswers;
  /** The own scores of tasks that score themselves in Python (pythonTaskScores), by source. */
  taskScores?: TaskScores;
  /** Groups scored as a whole (lm-eval's aggregate_metric_list): each variant gets cells on them too. */
  groups?: readonly ResolvedGroup[];
  /** The job's candidate sets, in the config's order (absent: the MLP's); each rule ranks each set, one profile per pair. */
  candidateSets?: readonly CandidateSet[];
  /** The sets ranked by some rules only, with those rules; absent: every set by every rule. */
  candidateMethods?: Partial<Record<CandidateSet, readonly ImportanceMethod[]>>;
  /** The fluency text the job scored (`built-in` or its file) and the threshold; absent: fluency is not reported. */
  fluency?: { source: string; maxPerplexityRatio: number };
  /** How the cells are starred (the config's `stats`); absent: Benjamini-Hochberg at 0.05, minimum effect 0.1. */
  stats?: StatsSettings;
}

export interface AssembledProfile {
  /** The unmodified model's items (items.jsonl). */
  baseline: BenchmarkItem[];
  /** One per rule of the job, in its order: each with its own variants, the random control in every one. */
  profiles: ModelProfile[];
  /** Per variant, its scored items, keyed by the variant's `items_file`. */
  variantItems: Map<string, BenchmarkItem[]>;
}

/** Where a variant's scored items go, relative to the model folder: variants/<runner file name>.items.jsonl. */
export function variantItemsFile(runnerFile: string): string {
  return path.posix.join("variants", path.posix.basename(runnerFile).replace(/\.jsonl$/, "") + ".items.jsonl");
}

/** Reads a runner output folder and assembles the results; `runnerDir` is the model folder's name for it. */
export async function readProfileOutput(outDir: string, given: ProfileInputs, runnerDir = "runner"): Promise<AssembledProfile> {
  // each generation decoded once, for the Python filters, the task's scorer and the items alike
  const inputs = given.decode ? { ...given, decode: decodingOnce(given.decode) } : given;
  const manifestFile = path.join(outDir, "profile.json");
  let manifest: RunnerManifest;
  try {
    manifest = JSON.parse(
      await fs.readFile(await pathWithinFolder(outDir, "profile.json", "the runner's folder"), "utf8"),
    ) as RunnerManifest;
  } catch (e) {
    if (e instanceof OutsideFolderError) throw e;
    throw new Error(`the runner's manifest is missing or unreadable: ${manifestFile} (${(e as Error).message})`);
  }
  checkManifest(manifest, manifestFile);
  // A resumed run folder can come with a repository: the files its manifest names are read only inside it.
  const scoresIn = async (file: string) => readRunnerScores(await pathWithinFolder(outDir, file, "the runner's folder"));
  const baseline = await scoresIn("baseline.jsonl");
  const variantScores = new Map<string, RunnerScores>();
  for (const v of manifest.variants) variantScores.set(v.file, await scoresIn(v.file));
  for (const p of manifest.pairs ?? []) variantScores.set(p.file, await scoresIn(p.file));
  const sources = new Map([["baseline.jsonl", baseline], ...variantScores]);
  const decode = inputs.decode ?? noDecoder;
  const filtered = inputs.decode ? await pythonFilteredAnswers(inputs.refs, inputs.benchmarks, sources, inputs.decode) : undefined;
  const taskScores = await pythonTaskScores(inputs.refs, inputs.benchmarks, sources, decode, filtered);
  return assembleProfile(
    manifest,
    baseline,
    variantScores,
    { ...inputs, ...(filtered ? { filtered } : {}), ...(taskScores ? { taskScores } : {}) },
    runnerDir,
  );
}

function checkManifest(manifest: RunnerManifest, file: string): void {
  const ok =
    typeof manifest === "object" &&
    manifest !== null &&
    typeof manifest.parameters === "number" &&
    typeof manifest.candidates?.total === "number" &&
    Array.isArray(manifest.variants);
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
    if (name === undefined)
      throw new Error(`profile.json names ability \`${id}\`, which is not in the job (${[...nameOf.keys()].join(", ")})`);
    return name;
  };
  const score = (scores: RunnerScores, source: string): BenchmarkItem[] =>
    scoredItems(
      inputs.refs,
      inputs.benchmarks,
      scores,
      source,
      inputs.decode ?? noDecoder,
      extrasOf(source, inputs.filtered, inputs.taskScores),
    );
  const baseline = score(baselineScores, "baseline.jsonl");
  const benchmarkNames = inputs.benchmarks.map((b) => b.name);
  const baselineOf = new Map(benchmarkNames.map((name) => [name, baseline.filter((i) => i.benchmark === name)]));
  const metricsOfBenchmark = new Map(inputs.benchmarks.map((b) => [b.name, metricsOf(b.task.outputType, b.task.scorer !== undefined)]));

  // Variants in a stable order: abilities in config order, selections as configured, k ascending; random last.
  // a manifest of one rule may not name it (runners before rules were listed)
  const ruleOf = (method: ImportanceMethod | null | undefined) => method ?? inputs.methods[0]!;
  const sets = inputs.candidateSets ?? ["mlp"];
  // a job of one candidate set does not name it
  const setOf = (set: CandidateSet | undefined) => set ?? sets[0]!;
  const variants = manifest.variants.map((v) => ({
    ...v,
    method: v.ability === null ? null : ruleOf(v.method),
    set: setOf(v.candidates),
    k: jobK(inputs.k, v.k, "profile.json"),
    name: abilityName(v.ability),
  }));
  const abilityOrder = new Map(inputs.abilities.map((a, i) => [a.id, i]));
  const rank = (v: (typeof variants)[number]) => [
    v.ability === null ? inputs.abilities.length : abilityOrder.get(v.ability)!,
    inputs.selections.indexOf(v.selection),
    v.k,
  ];
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
  // each candidate set's variants are held to the random control drawn from that set: its first
  // draw is the random variant, every draw (ablation.random_draws) the null its cells stand against
  const controlKey = (set: CandidateSet, k: number) => `${set}\u0000${k}`;
  const drawOf = (v: { draw?: number }) => v.draw ?? 0;
  const randomAt = new Map<string, string[]>();
  for (const v of [...variants].filter((x) => x.selection === "random").sort((a, b) => drawOf(a) - drawOf(b))) {
    const key = controlKey(v.set, v.k);
    randomAt.set(key, [...(randomAt.get(key) ?? []), v.file]);
  }
  const firstRandomAt = (set: CandidateSet, k: number) => randomAt.get(controlKey(set, k))?.[0];

  // One grid per metric, over the benchmarks scored by it: every benchmark's resamples shared by
  // all of its cells. Chance is 1/|choices| per multiple-choice item, 0 per generated one.
  const bootstrapOptions = { resamples: inputs.bootstrap.resamples, confidence: inputs.bootstrap.confidence, seed: inputs.seed };
  const cellMetrics = new Map<string, CellMetric>(); // `${file}\u0000${benchmark}\u0000${metric}`
  const cellSd = new Map<string, number | null>(); // the same keys: each cell's bootstrap sd, for the benchmarks' noise
  for (const metric of METRICS) {
    const gridBenchmarks: GridBenchmark[] = benchmarkNames
      .filter((name) => baselineOf.get(name)!.length > 0 && metricsOfBenchmark.get(name)!.includes(metric))
      .map((name) => ({ name, baseline: scoreVector(baselineOf.get(name)!, metric), chance: chancePerItem(baselineOf.get(name)!) }));
    const cells: (GridCell & { file: string })[] = [];
    for (const v of variants) {
      const controls = v.selection === "top" ? randomAt.get(controlKey(v.set, v.k)) : undefined;
      for (const g of gridBenchmarks) {
        const ablated = scoreVector(
          itemsOf.get(v.file)!.filter((i) => i.benchmark === g.name),
          metric,
        );
        const control = controls?.map((file) =>
          scoreVector(
            itemsOf.get(file)!.filter((i) => i.benchmark === g.name),
            metric,
          ),
        );
        cells.push({
          file: v.file,
          benchmark: g.name,
          ablated,
          ...(control ? { control: control.length === 1 ? control[0]! : control } : {}),
        });
      }
    }
    const baselineVectors = new Map(gridBenchmarks.map((g) => [g.name, g.baseline]));
    for (const { cell, ais, specificity } of bootstrapGrid(gridBenchmarks, cells, bootstrapOptions)) {
      const before = baselineOf.get(cell.benchmark)!;
      const after = itemsOf.get(cell.file)!.filter((i) => i.benchmark === cell.benchmark);
      const flips = cellFlips(before, after, metric);
      const key = `${cell.file}\u0000${cell.benchmark}\u0000${metric}`;
      const binary = isBinary(baselineVectors.get(cell.benchmark)!) && isBinary(cell.ablated);
      const estimated = estimateFields(ais);
      cellMetrics.set(key, {
        baseline: meanOf(scoreVector(before, metric)),
        ablated: meanOf(cell.ablated),
        chance: meanOf(chancePerItem(before)),
        ...estimated,
        // 0/1 scores: McNemar's exact test on the flips, the discordant documents; else the bootstrap's p
        ...(binary
          ? {
              test: "mcnemar" as const,
              p: estimated.ais === null ? null : mcnemarExactP(flips.rightToWrong.length, flips.wrongToRight.length),
            }
          : {}),
        ...(specificity ? { specificity: specificityCell(specificity, cell.ablated, cell.control!) } : {}),
        flips: { right_to_wrong: flips.rightToWrong.length, wrong_to_right: flips.wrongToRight.length },
      });
      cellSd.set(key, ais.sd);
    }
  }
  const emptyCell = (file: string, name: string, metric: Metric): CellMetric => {
    const after = itemsOf.get(file)!.filter((i) => i.benchmark === name);
    return {
      baseline: 0,
      ablated: meanOf(scoreVector(after, metric)),
      chance: 0,
      ais: null,
      reason: "AIS is undefined: the benchmark has no items",
      ci: null,
      significant: false,
      undefined_resamples: 0,
      flips: { right_to_wrong: 0, wrong_to_right: 0 },
    };
  };

  const groupCells = inputs.groups?.length
    ? variantGroupCells(
        inputs.groups,
        baseline,
        variants.map((v) => {
          const control = v.selection === "top" ? firstRandomAt(v.set, v.k) : undefined;
          return { file: v.file, ...(control ? { control } : {}) };
        }),
        itemsOf,
        bootstrapOptions,
      )
    : undefined;
  const modelFluency = inputs.fluency ? modelFluencyOf(baselineScores, inputs.fluency) : undefined;
  const fluencyOfVariant = (file: string) => (modelFluency ? variantFluency(modelFluency, variantScores.get(file)!) : undefined);
  // the random control's first draw is its variant; the later draws are the null's spread (random_draws)
  const shown = variants.filter((v) => drawOf(v) === 0);
  const randomNullOf = (v: (typeof variants)[number], name: string, metric: Metric, cell: CellMetric): Pick<CellMetric, "random_null"> => {
    const files = v.selection === "top" ? (randomAt.get(controlKey(v.set, v.k)) ?? []) : [];
    if (files.length < 2 || cell.ais === null) return {};
    const draws = files.map((file) => cellMetrics.get(`${file}\u0000${name}\u0000${metric}`)?.ais ?? null);
    const placed = againstRandomDraws(cell.ais, draws);
    return placed ? { random_null: placed } : {};
  };
  const results: (VariantResult & { method: ImportanceMethod | null; set: CandidateSet })[] = shown.map((v) => ({
    method: v.method,
    set: v.set,
    ability: v.name,
    ability_id: v.ability,
    selection: v.selection,
    k: v.k,
    n: v.n,
    ...(typeof v.lowering === "number" ? { lowering: v.lowering } : {}),
    ...(typeof v.top_n === "number" && typeof v.shared_with_top === "number"
      ? { exact_top: { n: v.top_n, shared: v.shared_with_top, jaccard: jaccardIndex(v.shared_with_top, v.n, v.top_n) } }
      : {}),
    scores_file: path.posix.join(runnerDir, v.file),
    items_file: variantItemsFile(v.file),
    benchmarks: benchmarkNames.map((name): VariantBenchmark => {
      const metricOf = (metric: Metric) => {
        const cell = cellMetrics.get(`${v.file}\u0000${name}\u0000${metric}`) ?? emptyCell(v.file, name, metric);
        return { ...cell, ...randomNullOf(v, name, metric, cell) };
      };
      return { name, ...Object.fromEntries(metricsOfBenchmark.get(name)!.map((metric) => [metric, metricOf(metric)])) };
    }),
    ...(groupCells ? { groups: groupCells.get(v.file)! } : {}),
    ...optionalField("fluency", fluencyOfVariant(v.file)),
  }));

  const overlap: (OverlapResult & { method: ImportanceMethod; set: CandidateSet })[] = (manifest.overlap ?? []).map((o) => {
    const names = o.abilities.map((id) => nameOf.get(id) ?? id);
    const sizes = o.intersections.map((row, i) => row[i] ?? o.n);
    return {
      method: ruleOf(o.method),
      set: setOf(o.candidates),
      k: jobK(inputs.k, o.k, "profile.json overlap"),
      n: o.n,
      abilities: names,
      intersections: o.intersections,
      jaccard: jaccardFromCounts(o.intersections, sizes),
    };
  });

  // stability goes with the MLP set alone (the config refuses it beside `all`)
  const stability = manifest.stability?.map((s): AbilityStability & { method: ImportanceMethod; set: CandidateSet } => {
    if (s.halves.length !== 2 || s.n.length !== inputs.k.length || s.shared.length !== inputs.k.length) {
      throw new Error(`profile.json: the stability of \`${s.ability}\` does not hold two halves and one count per k`);
    }
    return {
      method: ruleOf(s.method),
      set: sets[0]!,
      ability: abilityName(s.ability)!,
      ability_id: s.ability,
      halves: [s.halves[0]!, s.halves[1]!],
      by_k: inputs.k.map((k, i) => ({ k, n: s.n[i]!, shared: s.shared[i]!, jaccard: jaccardIndex(s.shared[i]!, s.n[i]!, s.n[i]!) })),
    };
  });

  // a pair per rule (and candidate set) and k, each under the profile of its rule
  const pairs = (manifest.pairs ?? []).map((p): PairResult & { method: ImportanceMethod; set: CandidateSet } => {
    const k = jobK(inputs.k, p.k, "profile.json pairs");
    const scores = variantScores.get(p.file);
    if (!scores) throw new Error(`the scores of pair ${p.file} were not read`);
    const items = score(scores, p.file);
    variantItems.set(variantItemsFile(p.file), items);
    const topOf = (id: string) => {
      const v = variants.find(
        (x) => x.ability === id && x.selection === "top" && x.k === k && x.method === ruleOf(p.method) && x.set === setOf(p.candidates),
      );
      if (!v) throw new Error(`profile.json: the pair ${p.abilities.join(" + ")} at k = ${k} has no top variant of \`${id}\``);
      return itemsOf.get(v.file)!;
    };
    const [a, b] = [topOf(p.abilities[0]), topOf(p.abilities[1])];
    return {
      method: ruleOf(p.method),
      set: setOf(p.candidates),
      abilities: [abilityName(p.abilities[0])!, abilityName(p.abilities[1])!],
      ability_ids: p.abilities,
      k,
      n: p.n,
      scores_file: path.posix.join(runnerDir, p.file),
      items_file: variantItemsFile(p.file),
      benchmarks: benchmarkNames.map((name) => {
        const before = baselineOf.get(name)!;
        const on = (list: BenchmarkItem[]) => list.filter((i) => i.benchmark === name);
        const cells =
          before.length === 0
            ? []
            : metricsOfBenchmark.get(name)!.map((metric) => {
                const impact = pairImpact(
                  {
                    baseline: scoreVector(before, metric),
                    a: scoreVector(on(a), metric),
                    b: scoreVector(on(b), metric),
                    both: scoreVector(on(items), metric),
                    chance: chancePerItem(before),
                  },
                  bootstrapOptions,
                );
                const cell: PairCell = {
                  ais: impact.ais.defined ? impact.ais.value : null,
                  ci: impact.aisInterval,
                  interference: impact.interference,
                  interference_ci: impact.interval,
                  p: impact.p,
                  significant: impact.significant,
                };
                return [metric, cell] as const;
              });
        return { name, ...Object.fromEntries(cells) };
      }),
    };
  });

  // one profile per candidate set and rule: its own variants, overlap and stability; its set's
  // random control in each
  const ofRule = <T extends { method: ImportanceMethod | null; set: CandidateSet }>(
    list: readonly T[],
    m: ImportanceMethod,
    set: CandidateSet,
  ): Omit<T, "method" | "set">[] =>
    list.filter((x) => (x.method === null || x.method === m) && x.set === set).map(({ method: _rule, set: _set, ...rest }) => rest);
  const rules = sets.flatMap((set) => (inputs.candidateMethods?.[set] ?? inputs.methods).map((method) => ({ set, method })));
  const candidatesOf = (set: CandidateSet) => manifest.candidate_sets?.find((c) => c.name === set)?.total ?? manifest.candidates.total;
  // the later draws of the random control, per candidate set: their cells' scores and AIS
  const drawsOf = (set: CandidateSet): RandomDrawResult[] =>
    variants
      .filter((v) => drawOf(v) > 0 && v.set === set)
      .map((v) => ({
        k: v.k,
        draw: drawOf(v),
        n: v.n,
        scores_file: path.posix.join(runnerDir, v.file),
        items_file: variantItemsFile(v.file),
        benchmarks: benchmarkNames.map((name) => ({
          name,
          ...Object.fromEntries(
            metricsOfBenchmark.get(name)!.flatMap((metric) => {
              const cell = cellMetrics.get(`${v.file}\u0000${name}\u0000${metric}`);
              return cell ? [[metric, { ablated: cell.ablated, ais: cell.ais }]] : [];
            }),
          ),
        })),
      }));
  // each benchmark's noise under a rule and set: its abilities' top cells against their bootstrap and the random draws
  const noiseOf = (method: ImportanceMethod, set: CandidateSet): NoiseResult[] =>
    inputs.k.flatMap((k) =>
      METRICS.flatMap((metric) =>
        benchmarkNames.flatMap((name) => {
          if (!metricsOfBenchmark.get(name)!.includes(metric)) return [];
          const tops = shown.filter((v) => v.selection === "top" && v.k === k && v.set === set && v.method === method);
          const cells = tops.map((v) => {
            const key = `${v.file}\u0000${name}\u0000${metric}`;
            return { ais: cellMetrics.get(key)?.ais ?? null, sd: cellSd.get(key) ?? null };
          });
          const draws = (randomAt.get(controlKey(set, k)) ?? []).map(
            (file) => cellMetrics.get(`${file}\u0000${name}\u0000${metric}`)?.ais ?? null,
          );
          const noise = benchmarkNoise(cells, draws.length > 1 ? draws : []);
          return noise ? [{ k, metric, benchmark: name, ...noise }] : [];
        }),
      ),
    );
  const stats = inputs.stats ?? { correction: DEFAULT_CORRECTION, threshold: DEFAULT_FDR, minEffect: DEFAULT_MIN_EFFECT };
  const profiles = rules
    .map(({ set, method }): ModelProfile => ({
      parameters: manifest.parameters,
      candidates: candidatesOf(set),
      k: [...inputs.k],
      selections: [...inputs.selections],
      method,
      seed: inputs.seed,
      bootstrap: { ...inputs.bootstrap, seed: inputs.seed },
      abilities: inputs.abilities.map((a) => ({
        name: a.name,
        id: a.id,
        sequences: a.sequences,
        ...(a.of !== undefined ? { of: a.of } : {}),
        ...(a.review !== undefined ? { review: a.review } : {}),
      })),
      variants: ofRule(results, method, set),
      overlap: ofRule(overlap, method, set),
      ...(stability ? { stability: ofRule(stability, method, set) } : {}),
      ...(pairs.some((p) => p.method === method && p.set === set)
        ? { pairs: pairs.filter((p) => p.method === method && p.set === set).map(({ method: _rule, set: _set, ...rest }) => rest) }
        : {}),
      ...optionalField("fluency", modelFluency),
      ...(set === "all" ? { candidate_set: "all" as const } : {}),
      ...nonEmpty("noise", noiseOf(method, set)),
      ...nonEmpty("random_draws", drawsOf(set)),
    }))
    // the random control's cells are in every profile: each starred over its own tables, on its own copy
    .map((profile) => withStars(structuredClone(profile), stats));
  return { baseline, variantItems, profiles };
}

/** Whether a score vector holds correctness only (0 or 1 per document), which McNemar's test takes. */
function isBinary(scores: ScoreVector): boolean {
  return scores instanceof Uint8Array;
}

/**
 * A top cell's specificity from its bootstrap estimate: against one random draw of 0/1 scores,
 * McNemar's exact test on the documents the two variants score differently; against several
 * draws (their mean) or a task's own scores, the bootstrap's p.
 */
function specificityCell(e: BootstrapEstimate, top: ScoreVector, control: ScoreVector | readonly ScoreVector[]): Specificity {
  const cell = specificityOf(e);
  if (!(control instanceof Uint8Array) || !isBinary(top) || cell.value === null) return cell;
  let controlOnly = 0;
  let topOnly = 0;
  for (let i = 0; i < top.length; i++) {
    if (control[i]! > top[i]!) controlOnly++;
    else if (top[i]! > control[i]!) topOnly++;
  }
  return { ...cell, test: "mcnemar", p: mcnemarExactP(controlOnly, topOnly) };
}

function nonEmpty<K extends string, T>(key: K, list: T[]): { [P in K]?: T[] } {
  return (list.length === 0 ? {} : { [key]: list }) as { [P in K]?: T[] };
}

function optionalField<K extends string, T>(key: K, value: T | undefined): { [P in K]?: T } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: T };
}

/** The unablated model's fluency, from the baseline's scores of the fluency text; undefined when the job scored none. */
function modelFluencyOf(scores: RunnerScores, fluency: NonNullable<ProfileInputs["fluency"]>): ModelFluency | undefined {
  const measured = fluencyOf(scores);
  return measured && { text: fluency.source, ...measured, max_perplexity_ratio: fluency.maxPerplexityRatio };
}

/** Every (ability, selection, k) the job asked for, and random per k (each of its draws), must be in the manifest once. */
function checkVariantsComplete(
  variants: readonly {
    ability: string | null;
    method: ImportanceMethod | null;
    set: CandidateSet;
    selection: Selection;
    k: number;
    file: string;
    draw?: number;
  }[],
  inputs: ProfileInputs,
): void {
  const several = inputs.methods.length > 1;
  const sets = inputs.candidateSets ?? ["mlp"];
  const draws = inputs.randomDraws ?? 1;
  const key = (ability: string | null, method: ImportanceMethod | null, set: CandidateSet, selection: string, k: number, draw = 0) =>
    `${ability ?? "(random)"}${several && method ? ` (${method})` : ""}${sets.length > 1 ? ` [${set}]` : ""} ${selection} k=${k}` +
    (draws > 1 && selection === "random" ? ` draw ${draw}` : "");
  const seen = new Set<string>();
  for (const v of variants) {
    const id = key(v.ability, v.method, v.set, v.selection, v.k, v.draw);
    if (seen.has(id)) throw new Error(`profile.json lists the variant ${id} twice`);
    seen.add(id);
  }
  const expected: string[] = [];
  for (const selection of inputs.selections) {
    for (const k of inputs.k) {
      for (const set of sets) {
        if (selection === "random") for (let d = 0; d < draws; d++) expected.push(key(null, null, set, selection, k, d));
        else
          for (const m of inputs.candidateMethods?.[set] ?? inputs.methods)
            for (const a of inputs.abilities) expected.push(key(a.id, m, set, selection, k));
      }
    }
  }
  const missing = expected.filter((e) => !seen.has(e));
  if (missing.length > 0) throw new Error(`profile.json lacks ${missing.length} variant(s) of the job: ${missing.slice(0, 5).join("; ")}`);
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
    const label = {
      ...(b.ability === undefined ? {} : { ability: b.ability }),
      ...(b.expects === undefined ? {} : { expects: b.expects }),
      ...(b.task.scorer ? { scored_by: `${b.task.scorer.ref.module}.${b.task.scorer.ref.name}` } : {}),
    };
    if (b.task.outputType === "generate_until") {
      const generated = items.filter(isGenerated);
      if (generated.length !== items.length) throw new Error(`${b.name} is generate_until but has multiple-choice items`);
      return {
        name: b.name,
        task_file: b.task.file,
        output_type: "generate_until",
        ...label,
        ...benchmarkExactMatch(
          generated,
          b.task.filters.map((f) => f.name),
        ),
      };
    }
    const scored = items.filter((i): i is ScoredItem => !isGenerated(i));
    if (scored.length !== items.length) throw new Error(`${b.name} is multiple_choice but has generated items`);
    return { name: b.name, task_file: b.task.file, output_type: "multiple_choice", ...label, ...benchmarkAccuracy(scored) };
  });
}

function noDecoder(): string {
  throw new Error("a generate_until benchmark's tokens cannot be decoded without the model's tokenizer (ProfileInputs.decode)");
}
