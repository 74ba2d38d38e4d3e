// Reading a finished run for a report: results.json, checked for every field's type before
// anything is read from it (results/check.ts), and the per-item files (items.jsonl,
// variants/*.items.jsonl, flips.jsonl) that the flipped-document lists are recovered from, each
// line checked (results/lineCheck.ts). Bad input is a ReportInputError with one line that says
// what is wrong and where.
import { promises as fs } from "node:fs";
import * as path from "node:path";
import type { Metric } from "../analysis/ais";
import type { BenchmarkItem } from "../analysis/generation";
import { isDirectory, OutsideFolderError, pathWithinFolder } from "../base/fsutil";
import { modelFolderName } from "../config/modelFolder";
import { checkResults } from "../results/check";
import { ReportInputError } from "../results/inputError";
import { flipLinesOfText, itemsOfText } from "../results/lineCheck";
import type { Results } from "../results/schema";
import type { FlippedDocument } from "./types";

// The checks live with the run folder (results/); reports, the editor and the CLI import them from here too.
export { checkResults } from "../results/check";
export { DamagedRunFileError, ReportInputError } from "../results/inputError";

export interface LoadedRun {
  /** The run folder (where results.json lies). */
  dir: string;
  resultsFile: string;
  results: Results;
}

export const RESULTS_FILE = "results.json";

/** Reads and checks a run's results.json; `target` is the run folder or the results file itself. */
export async function loadRun(target: string): Promise<LoadedRun> {
  const resultsFile = (await isDirectory(target)) ? await fileOfRun(target, RESULTS_FILE) : await readableFile(target);
  let text: string;
  try {
    text = await fs.readFile(resultsFile, "utf8");
  } catch (e) {
    const dir = path.dirname(resultsFile);
    throw new ReportInputError(
      (e as NodeJS.ErrnoException).code === "ENOENT" && (await isDirectory(dir)) && path.basename(resultsFile) === RESULTS_FILE
        ? `${dir} has no ${RESULTS_FILE}: the run did not finish (resume it with \`bprof run --resume\`), or it is not a run folder`
        : `cannot read ${resultsFile}${reasonOf(e)}`,
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

/**
 * A file of the run folder `runDir` as it may be read; a ReportInputError where it leads out of
 * the folder (`..`, an absolute path, a link), where its links loop, or where it is no regular
 * file (a FIFO would never end a read): a run folder can come with a repository, and results.json
 * names the files it is read with.
 */
async function fileOfRun(runDir: string, file: string, namedBy?: string): Promise<string> {
  const named = (message: string) => new ReportInputError(namedBy ? `${message} (named by ${namedBy})` : message);
  let real: string;
  try {
    real = await pathWithinFolder(runDir, file, "the run folder");
  } catch (e) {
    if (e instanceof OutsideFolderError) throw named(e.message);
    throw named(`cannot read ${path.join(runDir, file)}${reasonOf(e)}`);
  }
  return readableFile(real, named);
}

/** `file` when it is a regular file or missing (its reader says so); a ReportInputError otherwise. */
async function readableFile(file: string, error = (message: string) => new ReportInputError(message)): Promise<string> {
  const stat = await fs.stat(file).catch((e: NodeJS.ErrnoException) => (e.code === "ENOENT" || e.code === "ENOTDIR" ? undefined : e));
  if (stat instanceof Error) throw error(`cannot read ${file}${reasonOf(stat)}`);
  if (stat && !stat.isFile() && !stat.isDirectory()) throw error(`${file} is not a regular file: it is not read`);
  return file;
}

/** Why a file could not be read, in words after its name: " (its links loop: ELOOP)". */
function reasonOf(e: unknown): string {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  if (code === "ELOOP") return " (it is a link that leads to itself, or through too many links: ELOOP)";
  if (code === "EACCES" || code === "EPERM") return ` (no permission: ${code})`;
  if (code === "EISDIR") return " (it is a folder)";
  return code ? ` (${code})` : "";
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

/**
 * Per-item records from a JSONL file (lines as in items.jsonl), each line checked; a
 * ReportInputError when the file is missing, a DamagedRunFileError at the line that is wrong.
 */
export async function readItemsFile(file: string): Promise<BenchmarkItem[]> {
  let text: string;
  try {
    text = await fs.readFile(file, "utf8");
  } catch (e) {
    throw new ReportInputError(
      (e as NodeJS.ErrnoException).code === "ENOENT" ? `the per-item file ${file} is missing` : `cannot read ${file}${reasonOf(e)}`,
    );
  }
  return itemsOfText(text, file);
}

/** The per-model file of the documents every variant flipped (report/model.ts flipsAsDocuments). */
export const FLIPS_FILE = "flips.jsonl";

/** One line of flips.jsonl: a flipped document of one cell. */
export type FlipRecord = FlippedDocument & { variant: string; benchmark: string; metric: Metric };

async function readFlipsFile(file: string): Promise<Map<string, FlippedDocument[]> | undefined> {
  const text = await fs.readFile(file, "utf8").catch((e: NodeJS.ErrnoException) => {
    // a run written before flips were recorded has none: its items files give them
    if (e.code === "ENOENT") return undefined;
    throw new ReportInputError(`cannot read ${file}${reasonOf(e)}`);
  });
  if (text === undefined) return undefined;
  const byCell = new Map<string, FlippedDocument[]>();
  for (const { variant, benchmark, metric, ...document } of flipLinesOfText(text, file)) {
    const key = `${variant}\u0000${benchmark}\u0000${metric}`;
    const list = byCell.get(key);
    if (list) list.push(document as unknown as FlippedDocument);
    else byCell.set(key, [document as unknown as FlippedDocument]);
  }
  return byCell;
}

/** The newest of some runs' results.json files: run ids sort by start time. */
export function latestResultsFile(files: readonly string[]): string | undefined {
  const runId = (file: string) => path.basename(path.dirname(file));
  return [...files].sort((a, b) => (runId(a) < runId(b) ? -1 : runId(a) > runId(b) ? 1 : a < b ? -1 : 1)).at(-1);
}
