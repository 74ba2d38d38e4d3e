// Reading a finished run for a report: results.json, checked against schema version 1 before
// anything is read from it, and the per-item files (items.jsonl, variants/*.items.jsonl) that
// the flipped-document lists are recovered from. Bad input is a ReportInputError with one line
// that says what is wrong and where.
import { promises as fs } from "node:fs";
import * as path from "node:path";
import type { ScoredItem } from "../analysis/accuracy";
import { ALL_METRICS, metricsOf, type Metric } from "../analysis/ais";
import type { BenchmarkItem, GeneratedItem } from "../analysis/generation";
import { isDirectory, isWithinFolder, OutsideFolderError, pathWithinFolder } from "../base/fsutil";
import { modelFolderName } from "../config/modelFolder";
import { RESULTS_SCHEMA_VERSION, type Results } from "../results/schema";
import type { FlippedDocument } from "./types";

/** Input a report cannot be made from (a missing run, another schema, a damaged file). */
export class ReportInputError extends Error {
  override name = "ReportInputError";
}

export interface LoadedRun {
  /** The run folder (where results.json lies). */
  dir: string;
  resultsFile: string;
  results: Results;
}

export const RESULTS_FILE = "results.json";

/** Reads and checks a run's results.json; `target` is the run folder or the results file itself. */
export async function loadRun(target: string): Promise<LoadedRun> {
  const resultsFile = (await isDirectory(target)) ? await fileOfRun(target, RESULTS_FILE) : target;
  let text: string;
  try {
    text = await fs.readFile(resultsFile, "utf8");
  } catch {
    const dir = path.dirname(resultsFile);
    throw new ReportInputError(
      (await isDirectory(dir)) && path.basename(resultsFile) === RESULTS_FILE
        ? `${dir} has no ${RESULTS_FILE}: the run did not finish (resume it with \`bprof run --resume\`), or it is not a run folder`
        : `cannot read ${resultsFile}`,
    );
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new ReportInputError(`${resultsFile} is not valid JSON (${(e as Error).message})`);
  }
  return { dir: path.dirname(path.resolve(resultsFile)), resultsFile: path.resolve(resultsFile), results: checkResults(raw, resultsFile) };
}

/** The shape of results.json version 1 (docs/results-schema.md), as far as reports read it. */
export function checkResults(raw: unknown, file: string): Results {
  if (!isObject(raw) || raw.schema !== "bprof.results") {
    const schema = isObject(raw) && typeof raw.schema === "string" ? ` (its schema is \`${raw.schema}\`)` : "";
    throw new ReportInputError(`${file} is not a Benchmark Profiler results file${schema}: expected "schema": "bprof.results"`);
  }
  if (raw.schema_version !== RESULTS_SCHEMA_VERSION) {
    throw new ReportInputError(
      `${file} has schema_version ${JSON.stringify(raw.schema_version)}; this bprof reads version ${RESULTS_SCHEMA_VERSION}`,
    );
  }
  const at = (where: string, what: string) => new ReportInputError(`${file}: ${where}: expected ${what}`);
  const need = (value: unknown, ok: boolean, where: string, what: string) => {
    if (!ok) throw at(where, what);
    return value;
  };
  const str = (v: unknown, where: string) => need(v, typeof v === "string", where, "a string");
  const num = (v: unknown, where: string) => need(v, typeof v === "number" && Number.isFinite(v), where, "a number");
  const numOrNull = (v: unknown, where: string) =>
    need(v, v === null || (typeof v === "number" && Number.isFinite(v)), where, "a number or null");
  const arr = (v: unknown, where: string) => need(v, Array.isArray(v), where, "an array") as unknown[];
  const obj = (v: unknown, where: string) => need(v, isObject(v), where, "an object") as Record<string, unknown>;
  const interval = (v: unknown, where: string) => {
    if (v === null) return;
    const ci = obj(v, where);
    for (const key of ["low", "high", "confidence"]) num(ci[key], `${where}.${key}`);
  };
  const cellOf = (v: unknown, cw: string) => {
    const cell = obj(v, cw);
    for (const key of ["baseline", "ablated", "chance"]) num(cell[key], `${cw}.${key}`);
    numOrNull(cell.ais, `${cw}.ais`);
    interval(cell.ci, `${cw}.ci`);
    need(cell.significant, typeof cell.significant === "boolean", `${cw}.significant`, "true or false");
    const flips = obj(cell.flips, `${cw}.flips`);
    num(flips.right_to_wrong, `${cw}.flips.right_to_wrong`);
    num(flips.wrong_to_right, `${cw}.flips.wrong_to_right`);
    if (cell.specificity !== undefined) {
      const s = obj(cell.specificity, `${cw}.specificity`);
      numOrNull(s.value, `${cw}.specificity.value`);
      interval(s.ci, `${cw}.specificity.ci`);
    }
  };
  const strings = (v: unknown, where: string) => arr(v, where).forEach((s, i) => str(s, `${where}[${i}]`));

  /** A model's profile (results.json's ModelProfile) at `pw`: throws naming the first field that is wrong. */
  const checkProfile = (
    raw: unknown,
    pw: string,
    outputTypeOf: ReadonlyMap<string, "multiple_choice" | "generate_until">,
    groupMetrics: ReadonlyMap<string, Metric[]>,
  ): void => {
    const p = obj(raw, pw);
    for (const key of ["parameters", "candidates", "seed"]) num(p[key], `${pw}.${key}`);
    arr(p.k, `${pw}.k`).forEach((k, i) => num(k, `${pw}.k[${i}]`));
    arr(p.selections, `${pw}.selections`).forEach((s, i) => str(s, `${pw}.selections[${i}]`));
    // results written before the method could be chosen used the paper's
    p.method ??= "paper";
    need(p.method, p.method === "paper" || p.method === "signed", `${pw}.method`, "paper or signed");
    const bootstrap = obj(p.bootstrap, `${pw}.bootstrap`);
    for (const key of ["resamples", "confidence"]) num(bootstrap[key], `${pw}.bootstrap.${key}`);
    arr(p.abilities, `${pw}.abilities`).forEach((a, i) => str(obj(a, `${pw}.abilities[${i}]`).name, `${pw}.abilities[${i}].name`));
    for (const [s, stabilityRaw] of arr(p.stability ?? [], `${pw}.stability`).entries()) {
      const sw = `${pw}.stability[${s}]`;
      const stability = obj(stabilityRaw, sw);
      str(stability.ability, `${sw}.ability`);
      for (const [i, byK] of arr(stability.by_k, `${sw}.by_k`).entries()) {
        const at = obj(byK, `${sw}.by_k[${i}]`);
        for (const key of ["k", "n", "shared", "jaccard"]) num(at[key], `${sw}.by_k[${i}].${key}`);
      }
    }
    for (const [v, variantRaw] of arr(p.variants, `${pw}.variants`).entries()) {
      const vw = `${pw}.variants[${v}]`;
      const variant = obj(variantRaw, vw);
      need(variant.ability, variant.ability === null || typeof variant.ability === "string", `${vw}.ability`, "a string or null");
      need(
        variant.selection,
        ["top", "top_chunked", "bottom", "random"].includes(variant.selection as string),
        `${vw}.selection`,
        "top, top_chunked, bottom or random",
      );
      num(variant.k, `${vw}.k`);
      num(variant.n, `${vw}.n`);
      if (variant.exact_top !== undefined) {
        const exact = obj(variant.exact_top, `${vw}.exact_top`);
        for (const key of ["n", "shared", "jaccard"]) num(exact[key], `${vw}.exact_top.${key}`);
      }
      need(variant.items_file, isPathInFolder(variant.items_file), `${vw}.items_file`, "a path inside the model's folder");
      for (const [b, benchRaw] of arr(variant.benchmarks, `${vw}.benchmarks`).entries()) {
        const bw = `${vw}.benchmarks[${b}]`;
        const bench = obj(benchRaw, bw);
        str(bench.name, `${bw}.name`);
        for (const metric of metricsOf(outputTypeOf.get(bench.name as string))) cellOf(bench[metric], `${bw}.${metric}`);
      }
      for (const [b, groupRaw] of arr(variant.groups ?? [], `${vw}.groups`).entries()) {
        const gw = `${vw}.groups[${b}]`;
        const group = obj(groupRaw, gw);
        const metrics = groupMetrics.get(str(group.name, `${gw}.name`) as string);
        need(group.name, metrics !== undefined, `${gw}.name`, `the name of one of ${pw.slice(0, pw.indexOf("."))}.groups`);
        // A metric whose tasks have no documents has no cell.
        for (const metric of metrics!) if (group[metric] !== undefined) cellOf(group[metric], `${gw}.${metric}`);
      }
    }
    for (const [o, overlapRaw] of arr(p.overlap ?? [], `${pw}.overlap`).entries()) {
      const ow = `${pw}.overlap[${o}]`;
      const overlap = obj(overlapRaw, ow);
      num(overlap.k, `${ow}.k`);
      const names = arr(overlap.abilities, `${ow}.abilities`);
      for (const key of ["intersections", "jaccard"]) {
        const matrix = arr(overlap[key], `${ow}.${key}`);
        need(
          matrix,
          matrix.length === names.length && matrix.every((row) => Array.isArray(row) && row.length === names.length),
          `${ow}.${key}`,
          `a ${names.length} x ${names.length} matrix`,
        );
      }
    }
  };

  str(raw.run_id, "run_id");
  str(raw.created, "created");
  for (const [m, modelRaw] of arr(raw.models, "models").entries()) {
    const where = `models[${m}]`;
    const model = obj(modelRaw, where);
    for (const key of ["name", "path", "dtype"]) str(model[key], `${where}.${key}`);
    // A benchmark without output_type is multiple choice (files written before generate_until ran).
    const outputTypeOf = new Map<string, "multiple_choice" | "generate_until">();
    for (const [b, benchRaw] of arr(model.benchmarks, `${where}.benchmarks`).entries()) {
      const bw = `${where}.benchmarks[${b}]`;
      const bench = obj(benchRaw, bw);
      str(bench.name, `${bw}.name`);
      const outputType = bench.output_type ?? "multiple_choice";
      need(
        outputType,
        outputType === "multiple_choice" || outputType === "generate_until",
        `${bw}.output_type`,
        "multiple_choice or generate_until",
      );
      outputTypeOf.set(bench.name as string, outputType as "multiple_choice" | "generate_until");
      const keys = outputType === "generate_until" ? ["items", "exact_match", "chance"] : ["items", "acc", "acc_norm", "chance"];
      for (const key of keys) num(bench[key], `${bw}.${key}`);
    }
    // Groups scored as a whole (files written before them have none): their metrics, by name.
    const groupMetrics = new Map<string, Metric[]>();
    for (const [g, groupRaw] of arr(model.groups ?? [], `${where}.groups`).entries()) {
      const gw = `${where}.groups[${g}]`;
      const group = obj(groupRaw, gw);
      str(group.name, `${gw}.name`);
      strings(group.tasks, `${gw}.tasks`);
      const aggregates = arr(group.aggregates, `${gw}.aggregates`);
      need(aggregates, aggregates.length > 0, `${gw}.aggregates`, "at least one aggregate");
      groupMetrics.set(
        group.name as string,
        aggregates.map((aggregateRaw, a) => {
          const aw = `${gw}.aggregates[${a}]`;
          const aggregate = obj(aggregateRaw, aw);
          need(
            aggregate.metric,
            (ALL_METRICS as readonly unknown[]).includes(aggregate.metric),
            `${aw}.metric`,
            `one of ${ALL_METRICS.join(", ")}`,
          );
          str(aggregate.filter, `${aw}.filter`);
          need(aggregate.weight_by_size, typeof aggregate.weight_by_size === "boolean", `${aw}.weight_by_size`, "true or false");
          strings(aggregate.tasks, `${aw}.tasks`);
          for (const key of ["items", "score", "chance"]) num(aggregate[key], `${aw}.${key}`);
          return aggregate.metric as Metric;
        }),
      );
    }
    if (model.profile !== undefined) checkProfile(model.profile, `${where}.profile`, outputTypeOf, groupMetrics);
    for (const [r, other] of arr(model.other_methods ?? [], `${where}.other_methods`).entries())
      checkProfile(other, `${where}.other_methods[${r}]`, outputTypeOf, groupMetrics);
  }
  return raw as unknown as Results;
}

/** A relative path that stays in its folder: no .., not absolute (links are checked when the file is read). */
function isPathInFolder(v: unknown): boolean {
  return typeof v === "string" && v !== "" && !path.isAbsolute(v) && isWithinFolder(".", path.normalize(v));
}

/**
 * A file of the run folder `runDir` as it may be read; a ReportInputError where it leads out of
 * the folder (`..`, an absolute path, a link): a run folder can come with a repository, and
 * results.json names the files it is read with.
 */
async function fileOfRun(runDir: string, file: string, namedBy?: string): Promise<string> {
  try {
    return await pathWithinFolder(runDir, file, "the run folder");
  } catch (e) {
    if (!(e instanceof OutsideFolderError)) throw e;
    throw new ReportInputError(namedBy ? `${e.message} (named by ${namedBy})` : e.message);
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Reads a run's per-item files once each: a model's items.jsonl and its variants' items files. */
export class RunItems {
  private readonly cache = new Map<string, Promise<BenchmarkItem[]>>();
  private readonly flips = new Map<string, Promise<Map<string, FlippedDocument[]> | undefined>>();

  constructor(readonly runDir: string) {}

  /** The folder of a model's files. */
  modelDir(model: string): string {
    return path.join(this.runDir, "models", modelFolderName(model));
  }

  /** The unmodified model's items (items.jsonl). */
  baseline(model: string): Promise<BenchmarkItem[]> {
    return this.read(path.join(this.modelDir(model), "items.jsonl"));
  }

  /** A variant's items; `itemsFile` is the variant's `items_file`, relative to the model folder. */
  variant(model: string, itemsFile: string): Promise<BenchmarkItem[]> {
    return this.read(path.join(this.modelDir(model), itemsFile), `${RESULTS_FILE}'s items_file`);
  }

  /**
   * The flipped documents the run recorded (flips.jsonl, written when it finished), by flipsKey;
   * undefined for a run written before flips were recorded (the items files give them then).
   */
  recordedFlips(model: string): Promise<Map<string, FlippedDocument[]> | undefined> {
    const file = path.join(this.modelDir(model), FLIPS_FILE);
    let pending = this.flips.get(file);
    if (!pending) this.flips.set(file, (pending = this.within(file).then(readFlipsFile)));
    return pending;
  }

  private read(file: string, namedBy?: string): Promise<BenchmarkItem[]> {
    let pending = this.cache.get(file);
    if (!pending) {
      pending = this.within(file, namedBy).then(readItemsFile);
      this.cache.set(file, pending);
    }
    return pending;
  }

  /** A file of this run as it may be read: never one out of the run folder. `namedBy`: the field that names it. */
  private within(file: string, namedBy?: string): Promise<string> {
    return fileOfRun(this.runDir, path.relative(this.runDir, file), namedBy);
  }
}

/** Per-item records from a JSONL file (lines as in items.jsonl); throws a one-line ReportInputError. */
export async function readItemsFile(file: string): Promise<BenchmarkItem[]> {
  let text: string;
  try {
    text = await fs.readFile(file, "utf8");
  } catch {
    throw new ReportInputError(`the per-item file ${file} is missing`);
  }
  const items: BenchmarkItem[] = [];
  for (const [i, line] of text.split("\n").entries()) {
    if (line.trim() === "") continue;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch {
      throw new ReportInputError(`${file}:${i + 1}: not a JSON line`);
    }
    if (isObject(raw) && raw.kind === "generate_until") {
      const g = raw as Partial<GeneratedItem>;
      const ok =
        typeof g.benchmark === "string" &&
        typeof g.index === "number" &&
        typeof g.target === "string" &&
        typeof g.answer === "string" &&
        typeof g.correct === "boolean" &&
        typeof g.response === "string";
      if (!ok)
        throw new ReportInputError(
          `${file}:${i + 1}: expected a generated item {"kind": "generate_until", "benchmark", "index", "target", "answer", "correct", "response", ...}`,
        );
      items.push(g as GeneratedItem);
      continue;
    }
    const item = (raw ?? {}) as Partial<ScoredItem>;
    const ok =
      typeof item.benchmark === "string" &&
      typeof item.index === "number" &&
      typeof item.target === "number" &&
      Array.isArray(item.choices) &&
      item.choices.every((c) => typeof c?.logprob === "number") &&
      typeof item.prediction === "number" &&
      typeof item.predictionNorm === "number" &&
      Array.isArray(item.choiceBytes);
    if (!ok)
      throw new ReportInputError(
        `${file}:${i + 1}: expected a scored item {"benchmark", "index", "target", "choices", "choiceBytes", "prediction", "predictionNorm"}`,
      );
    items.push(item as ScoredItem);
  }
  return items;
}

/** The per-model file of the documents every variant flipped (report/model.ts flipsAsDocuments). */
export const FLIPS_FILE = "flips.jsonl";

/** One line of flips.jsonl: a flipped document of one cell. */
export type FlipRecord = FlippedDocument & { variant: string; benchmark: string; metric: Metric };

async function readFlipsFile(file: string): Promise<Map<string, FlippedDocument[]> | undefined> {
  const text = await fs.readFile(file, "utf8").catch(() => undefined);
  if (text === undefined) return undefined;
  const byCell = new Map<string, FlippedDocument[]>();
  for (const [i, line] of text.split("\n").entries()) {
    if (line.trim() === "") continue;
    let record: FlipRecord;
    try {
      record = JSON.parse(line) as FlipRecord;
    } catch {
      throw new ReportInputError(`${file}:${i + 1}: not a JSON line`);
    }
    const { variant, benchmark, metric, ...document } = record;
    const key = `${variant}\u0000${benchmark}\u0000${metric}`;
    const list = byCell.get(key);
    if (list) list.push(document as FlippedDocument);
    else byCell.set(key, [document as FlippedDocument]);
  }
  return byCell;
}

/** The newest of some runs' results.json files: run ids sort by start time. */
export function latestResultsFile(files: readonly string[]): string | undefined {
  const runId = (file: string) => path.basename(path.dirname(file));
  return [...files].sort((a, b) => (runId(a) < runId(b) ? -1 : runId(a) > runId(b) ? 1 : a < b ? -1 : 1)).at(-1);
}
