// Power before the run: the smallest AIS each benchmark of a config detects at the config's
// confidence (alpha = 1 - `bootstrap.confidence`) and 80% power (analysis/power.ts), from its
// documents and a baseline. Once the config has a finished run, its baseline and chance are that
// run's (the caller reads them: run folders lie in a layer above, run/baselines.ts); before one,
// the baseline is unknown and the figure is given at an assumed baseline halfway between chance
// and 1, and chance is the items' own (mean of 1/|choices|, 0 for generate_until). A benchmark that
// cannot detect the config's `stats.min_effect` is a warning at its entry (`config.low-power`) with
// the documents it would need. `bprof validate` prints the figures (`powerLines`), the editor shows
// the warning and the figure in the benchmark's hover.
import { DEFAULT_POWER, documentsToDetect, minimumDetectableAis } from "../analysis/power";
import type { Problem } from "../base/problems";
import type { YamlSource } from "../base/yamlSource";
import type { ResolvedBenchmark } from "./resolved";

/** A benchmark's baseline score in a finished run, as one model scored it. */
export interface RunBaseline {
  benchmark: string;
  model: string;
  /** acc for multiple choice, exact_match for generate_until: the score AIS is read under by default. */
  metric: "acc" | "exact_match";
  baseline: number;
  chance: number;
}

/** The baselines of the config's newest finished run, in its models' order. */
export interface RunBaselines {
  runId: string;
  baselines: RunBaseline[];
}

/** The power of one benchmark (for one model of the run, when the run has several). */
export interface BenchmarkPower {
  benchmark: string;
  /** Its entry in the config's `benchmarks` (a group's tasks share one). */
  entry: number;
  documents: number;
  baseline: number;
  chance: number;
  /** Where the baseline is from: a finished run (the model that scored it, and the metric), or assumed (no run has scored it). */
  from: { runId: string; model: string; metric: RunBaseline["metric"] } | "assumed";
  /** The two-sided level, 1 - `bootstrap.confidence`. */
  alpha: number;
  power: number;
  /** The smallest AIS detected; null when none is: the baseline is at or below chance (no AIS is defined), or no AIS up to 1 is detectable. */
  detectable: number | null;
  /** The config's `stats.min_effect`. */
  minEffect: number;
  /** Documents needed to detect `minEffect` at this baseline; null when the baseline is at or below chance. */
  needed: number | null;
}

export interface PowerSettings {
  /** `bootstrap.confidence`. */
  confidence: number;
  /** `stats.min_effect`. */
  minEffect: number;
  /** The config's newest finished run's baselines; absent before a run (or where the caller cannot read runs). */
  baselines?: RunBaselines;
}

/** Chance of a benchmark from its items: the mean of 1/|choices| for multiple choice, 0 for generate_until (exact match). */
export function chanceOfItems(benchmark: ResolvedBenchmark): number {
  const items = benchmark.task.items;
  if (items.length === 0) return 0;
  return items.reduce((sum, item) => sum + (item.kind === "multiple_choice" ? 1 / item.choices.length : 0), 0) / items.length;
}

/** The baseline assumed before a run: halfway between chance and 1. */
export function assumedBaseline(chance: number): number {
  return (chance + 1) / 2;
}

/**
 * Each benchmark's power: one per model of the run that scored it (in the run's order), else one
 * at the assumed baseline. Benchmarks are matched to the run's by name; one the run did not score
 * (added since) gets the assumed baseline.
 */
export function benchmarkPowers(benchmarks: readonly (ResolvedBenchmark & { entry: number })[], settings: PowerSettings): BenchmarkPower[] {
  const alpha = 1 - settings.confidence;
  const power = DEFAULT_POWER;
  return benchmarks.flatMap((benchmark) => {
    const documents = benchmark.task.items.length;
    const figure = (baseline: number, chance: number, from: BenchmarkPower["from"]): BenchmarkPower => {
      const inputs = { baseline, chance, alpha, power };
      return {
        benchmark: benchmark.name,
        entry: benchmark.entry,
        documents,
        baseline,
        chance,
        from,
        alpha,
        power,
        detectable: documents > 0 ? minimumDetectableAis({ ...inputs, documents }) : null,
        minEffect: settings.minEffect,
        needed: documentsToDetect(inputs, settings.minEffect),
      };
    };
    const scored = (settings.baselines?.baselines ?? []).filter((b) => b.benchmark === benchmark.name);
    if (scored.length === 0) {
      const chance = chanceOfItems(benchmark);
      return [figure(assumedBaseline(chance), chance, "assumed")];
    }
    return scored.map((b) => figure(b.baseline, b.chance, { runId: settings.baselines!.runId, model: b.model, metric: b.metric }));
  });
}

/** Whether the benchmark detects the config's `stats.min_effect`. */
export function detectsMinEffect(p: BenchmarkPower): boolean {
  return p.detectable !== null && p.detectable <= p.minEffect;
}

/** A figure for a line: three decimals, trailing zeros dropped (0.25, 0.412, 0); two significant digits below 0.001. */
export function powerFigure(x: number): string {
  if (x !== 0 && Math.abs(x) < 0.001) return String(Number(x.toPrecision(2)));
  return String(Number(x.toFixed(3)));
}

function percent(x: number): string {
  return `${Number((x * 100).toFixed(1))}%`;
}

/** "at 95% confidence and 80% power". */
export function powerLevel(p: Pick<BenchmarkPower, "alpha" | "power">): string {
  return `at ${percent(1 - p.alpha)} confidence and ${percent(p.power)} power`;
}

/** Where the baseline is from, in words: "baseline acc 0.412 from run R", or "baseline unknown, assumed 0.681 halfway between chance and 1". */
function baselineWords(p: BenchmarkPower): string {
  return p.from === "assumed"
    ? `baseline unknown, assumed ${powerFigure(p.baseline)} halfway between chance and 1`
    : `baseline ${p.from.metric} ${powerFigure(p.baseline)} from run ${p.from.runId}`;
}

/** The baseline a warning speaks of: "the baseline acc 0.9 of run R", or "the assumed baseline 0.653". */
function baselineName(p: BenchmarkPower): string {
  return p.from === "assumed"
    ? `the assumed baseline ${powerFigure(p.baseline)}`
    : `the baseline ${p.from.metric} ${powerFigure(p.baseline)} of run ${p.from.runId}`;
}

/** The same with chance: "the baseline acc 0.9 of run R (chance 0.25)", or how the assumed one is made. */
function baselinePhrase(p: BenchmarkPower): string {
  return p.from === "assumed"
    ? `a baseline assumed halfway between chance ${powerFigure(p.chance)} and 1 (${powerFigure(p.baseline)}: no finished run has scored it)`
    : `${baselineName(p)} (chance ${powerFigure(p.chance)})`;
}

/** What the benchmark detects, in words: "detects AIS >= 0.061", "detects no AIS up to 1", "no AIS is defined (...)". */
function detectsWords(p: BenchmarkPower): string {
  if (p.documents === 0) return "detects nothing: it has no documents";
  if (!(p.baseline > p.chance)) return "no AIS is defined: the baseline is at or below chance";
  return p.detectable === null ? `detects no AIS up to 1 ${powerLevel(p)}` : `detects AIS >= ${powerFigure(p.detectable)} ${powerLevel(p)}`;
}

/** The model in a line, when the run scored the benchmark with several. */
function modelPart(p: BenchmarkPower, all: readonly BenchmarkPower[]): string {
  if (p.from === "assumed") return "";
  const of = all.filter((q) => q.entry === p.entry && q.benchmark === p.benchmark);
  return of.length > 1 ? `, model ${p.from.model}` : "";
}

/**
 * `bprof validate`'s lines, one per benchmark (and model, when the run has several):
 * `power: gsm8k (1319 documents, baseline exact_match 0.412 from run R; chance 0): detects AIS >= 0.129 at 95% confidence and 80% power`;
 * before a run `(..., baseline unknown, assumed 0.5 halfway between chance and 1; chance 0)`.
 */
export function powerLines(powers: readonly BenchmarkPower[]): string[] {
  return powers.map(
    (p) =>
      `power: ${p.benchmark}${modelPart(p, powers)} (${p.documents} documents, ${baselineWords(p)}; chance ${powerFigure(p.chance)}): ${detectsWords(p)}`,
  );
}

/**
 * A `config.low-power` warning at the entry of each benchmark that cannot detect `stats.min_effect`
 * (for some model of the run): what it detects, at which baseline, and the documents it would need;
 * at a baseline at or below chance, that no AIS is defined there.
 */
export function powerProblems(source: YamlSource, powers: readonly BenchmarkPower[]): Problem[] {
  const byBenchmark = new Map<string, BenchmarkPower[]>();
  for (const p of powers) {
    if (p.documents === 0 || detectsMinEffect(p)) continue;
    const key = `${p.entry}\0${p.benchmark}`;
    byBenchmark.set(key, [...(byBenchmark.get(key) ?? []), p]);
  }
  return [...byBenchmark.values()].map((short) => {
    const first = short[0]!;
    const several = powers.filter((p) => p.entry === first.entry && p.benchmark === first.benchmark).length > 1;
    const reasons = short.map((p) => {
      const model = several && p.from !== "assumed" ? `for model ${p.from.model}, ` : "";
      if (!(p.baseline > p.chance))
        return `${model}${baselineName(p)} is at or below chance ${powerFigure(p.chance)}: no AIS is defined there, so no ablation's effect can be measured on it`;
      const detects = p.detectable === null ? "detect no AIS up to 1" : `detect only AIS >= ${powerFigure(p.detectable)}`;
      return `${model}its ${p.documents} documents ${detects} at ${baselinePhrase(p)}; it would need ${p.needed} documents`;
    });
    const needed = Math.max(...short.map((p) => p.needed ?? 0));
    return source.at(
      ["benchmarks", first.entry],
      "config.low-power",
      `benchmark \`${first.benchmark}\` cannot detect an AIS of ${powerFigure(first.minEffect)} (\`stats.min_effect\`) ${powerLevel(first)}: ${reasons.join("; ")}`,
      needed > 0 ? { data: { documents: needed } } : {},
    );
  });
}
