// The cases behind a cell: the documents an ablation flipped, with the text the model read, the
// choices (or target), the scores before and after, and where each document is in its data file.
// The results view lists them per cell; the editor marks them on the lines of the data file.
//
// Documents are found again by loading each benchmark's task from the run's config snapshot, so a
// document's index in the run is its index in the task's test split (after `limit`); the data
// file's hash recorded in results.json says whether the file still holds what the run read.
import * as path from "node:path";
import type { ChoiceMetric, Metric } from "../analysis/ais";
import { benchmarkTaskFiles, isTaskName, loadBenchmark, taskOptionsOf } from "../config/benchmarks";
import { directInputs, type ResolvedBenchmark } from "../config/load";
import { parseConfig } from "../config/parse";
import type { ImportanceMethod, ProfileConfig, Selection } from "../config/types";
import { loadTask, loadTaskPlaces, type TaskItem, type TaskOptions, type TaskPlaces } from "../lmeval/task";
import type { HelperPolicy } from "../lmeval/taskPython";
import { fileSha256, isFile, pathWithinFolder } from "../base/fsutil";
import type { Problem } from "../base/problems";
import { profilesOf, type ModelResults, type VariantResult } from "../results/schema";
import { CONFIG_SNAPSHOT } from "../results/runFolder";
import { parseYamlSource, type YamlSource } from "../base/yamlSource";
import { promises as fs } from "node:fs";
import { RunItems, type LoadedRun } from "./load";
import { benchmarkMetric, flippedDocuments, groupMetric, sameK } from "./model";
import type { FlippedDocument } from "./types";

/** Which cell: a model's variant (ability and selection at k) on a benchmark, under a metric. */
export interface CellRef {
  model: string;
  k: number;
  ability: string | null;
  selection: Selection;
  benchmark: string;
  /** The rule whose variant it is, when the run ranked by several; the first rule's when absent. */
  method?: ImportanceMethod;
  /** Its candidate set, when the run ranked several; the first set's when absent. */
  candidates?: "mlp" | "all";
}

/** A flipped document with what the model read and where it is. */
export type CaseDocument = FlippedDocument & {
  /** The document's text as scored (context), and its choices or target; absent when the task could not be loaded. */
  text?: { context: string; choices?: string[]; target: string };
  /** Its place in the data file (1-based line); absent for formats without lines (Parquet). */
  place?: { file: string; line: number };
  /** Its own id (a data row's `id`), when it has one and its task could be read. */
  id?: string;
};

export interface CellCases {
  ref: CellRef;
  metric: Metric;
  documents: CaseDocument[];
  /** The data file changed since the run: its lines may not be the documents' any more. */
  stale?: string;
  /** Why the documents' texts or places could not be found (the documents themselves still are). */
  problem?: string;
}

/** One line of a data file with the flips of the documents that start on it. */
export interface CaseLine {
  line: number;
  index: number;
  /** The document's own id, when it has one. */
  id?: string;
  benchmark: string;
  flips: CaseFlip[];
}

export interface CaseFlip {
  model: string;
  ability: string | null;
  selection: Selection;
  /** The rule whose top set it is, when the run ranked by several. */
  method?: ImportanceMethod;
  /** `all` when the set was drawn from every layer's weights (`ablation.candidates`). */
  candidates?: "all";
  k: number;
  metric: Metric;
  document: FlippedDocument;
}

/** A benchmark entry of the run's config: its name, and how to load its task. */
interface Entry {
  name: string;
  index: number;
  /** The task file, for entries that name one (inline tasks have none). */
  taskFile?: string;
  options: TaskOptions;
}

/**
 * A run's benchmarks as their tasks load now, from the config the run ran (its snapshot, read as
 * if it stood where the config was), one benchmark at a time and cached: the results view renders
 * the one whose cell is selected, the editor reads only the lines of a data file's documents.
 */
export class RunDocuments {
  readonly items: RunItems;
  private entries: Promise<{ entries: Entry[]; config?: ProfileConfig; source?: YamlSource; problem?: string }> | undefined;
  private readonly tasks = new Map<string, Promise<{ benchmark?: ResolvedBenchmark; problem?: string }>>();
  private readonly places = new Map<string, Promise<{ places?: TaskPlaces; problem?: string }>>();
  private readonly stale = new Map<string, Promise<string | undefined>>();

  /**
   * `helpers`: whether the tasks' Python may run. A run folder may come with a cloned repository,
   * its config snapshot naming any task, so the caller decides (the editor's workspace service,
   * under Restricted Mode and the user's answers); there is no default.
   */
  constructor(
    readonly run: LoadedRun,
    private readonly helpers: HelperPolicy,
  ) {
    this.items = new RunItems(run.dir);
  }

  /** The benchmark's task, rendered, or why it could not be loaded. */
  task(benchmark: string): Promise<{ benchmark?: ResolvedBenchmark; problem?: string }> {
    let pending = this.tasks.get(benchmark);
    if (!pending) this.tasks.set(benchmark, (pending = this.loadTask(benchmark)));
    return pending;
  }

  /** Where the benchmark's documents are (data file, line of each), without rendering them. */
  documentPlaces(benchmark: string): Promise<{ places?: TaskPlaces; problem?: string }> {
    let pending = this.places.get(benchmark);
    if (!pending) this.places.set(benchmark, (pending = this.loadPlaces(benchmark)));
    return pending;
  }

  private async loadTask(name: string): Promise<{ benchmark?: ResolvedBenchmark; problem?: string }> {
    const { entries, config, source, problem } = await this.readEntries();
    const entry = entries.find((e) => e.name === name);
    if (!entry || !config || !source) return { problem: problem ?? `benchmark \`${name}\` is no longer in the run's config` };
    const problems: Problem[] = [];
    const benchmark = entry.taskFile
      ? await this.fileBenchmark(entry, entry.taskFile, problems)
      : (await loadBenchmark(config, source, { ...directInputs(), helpers: this.helpers }, entry.index, problems)).find(
          (b) => b.name === name,
        );
    const first = problems.find((p) => p.severity === "error");
    return benchmark ? { benchmark } : { problem: `benchmark \`${name}\` does not load now: ${first?.message ?? "its task has errors"}` };
  }

  /** The benchmark of an entry whose task is a file: that task alone (not every task of its group). */
  private async fileBenchmark(entry: Entry, taskFile: string, problems: Problem[]): Promise<ResolvedBenchmark | undefined> {
    const load = await loadTask(taskFile, { ...entry.options, helpers: this.helpers });
    problems.push(...load.problems);
    return load.task && { name: entry.name, task: load.task };
  }

  private async loadPlaces(name: string): Promise<{ places?: TaskPlaces; problem?: string }> {
    const { entries, problem } = await this.readEntries();
    const entry = entries.find((e) => e.name === name);
    if (!entry) return { problem: problem ?? `benchmark \`${name}\` is no longer in the run's config` };
    if (entry.taskFile) {
      const { places, problems } = await loadTaskPlaces(entry.taskFile, entry.options);
      if (!places) return { problem: problems[0]?.message ?? "its task has errors" };
      if (!places.processDocs) return { places };
    }
    // An inline task, or one whose process_docs decides its documents: their places come from the task loaded.
    const { benchmark, problem: taskProblem } = await this.task(name);
    if (!benchmark) return { problem: taskProblem ?? "its task has errors" };
    const lines = benchmark.task.items.map((item) => item.line ?? 0);
    const ids = benchmark.task.items.map((item) => item.id);
    return { places: { name, dataFile: benchmark.task.dataFile, lines: lines.every((l) => l > 0) ? lines : [], ids } };
  }

  /** The config's benchmark entries with their names (an entry's `name`, else its task's `task` key). */
  private readEntries(): Promise<{ entries: Entry[]; config?: ProfileConfig; source?: YamlSource; problem?: string }> {
    this.entries ??= (async () => {
      const configFile = this.run.results.config_file;
      // a snapshot that links out of the run folder is as good as none: its target is not read
      const snapshot = await pathWithinFolder(this.run.dir, CONFIG_SNAPSHOT).catch(() => undefined);
      const text = snapshot === undefined ? undefined : await fs.readFile(snapshot, "utf8").catch(() => undefined);
      if (text === undefined) return { entries: [], problem: `the run folder has no ${CONFIG_SNAPSHOT}` };
      const parsed = parseConfig(text, configFile);
      if (!parsed.config) return { entries: [], problem: "the run's config no longer parses" };
      const source = parseYamlSource(text, configFile);
      const entries: Entry[] = [];
      for (const [index, b] of parsed.config.benchmarks.entries()) {
        const options = taskOptionsOf(b, path.dirname(configFile));
        if (typeof b.task === "string" && isTaskName(b.task) && !(await isFile(path.resolve(path.dirname(configFile), b.task)))) {
          // A task, group or tag by name: each of its tasks is a benchmark of its own, named
          // without loading it (loading may run Python: only the cell asked for is loaded).
          const found = await benchmarkTaskFiles(parsed.config, source, index);
          for (const taskFile of found) {
            const name = (found.length === 1 ? b.name : undefined) ?? (await loadTaskPlaces(taskFile, options)).places?.name;
            if (name) entries.push({ name, index, taskFile, options });
          }
        } else if (typeof b.task === "string") {
          const taskFile = path.resolve(path.dirname(configFile), b.task);
          const name = b.name ?? (await loadTaskPlaces(taskFile, options)).places?.name;
          if (name) entries.push({ name, index, taskFile, options });
        } else {
          const name = b.name ?? (typeof b.task.task === "string" ? b.task.task : undefined);
          if (name) entries.push({ name, index, options });
        }
      }
      return { entries, config: parsed.config, source };
    })();
    return this.entries;
  }

  /** A message when the benchmark's data file differs from the one the run read; undefined when it is the same (or unknown). */
  dataFileChanged(model: ModelResults, benchmark: string): Promise<string | undefined> {
    const result = model.benchmarks.find((b) => b.name === benchmark);
    const file = result?.data_file;
    const sha = result?.data_sha256;
    if (!file || !sha) return Promise.resolve(undefined);
    if (!this.stale.has(file)) {
      this.stale.set(
        file,
        fileSha256(file).then((now) =>
          now === sha
            ? undefined
            : now === undefined
              ? `${path.basename(file)} is gone since run ${this.run.results.run_id}`
              : `${path.basename(file)} changed since run ${this.run.results.run_id}: its lines may not be the documents the run scored`,
        ),
      );
    }
    return this.stale.get(file)!;
  }
}

function variantOf(
  model: ModelResults,
  ref: Pick<CellRef, "k" | "ability" | "selection" | "method" | "candidates">,
): VariantResult | undefined {
  const profile = profilesOf(model).find(
    (p) =>
      (ref.method === undefined || p.method === ref.method) &&
      (ref.candidates === undefined || (p.candidate_set ?? "mlp") === ref.candidates),
  );
  return profile?.variants.find((v) => sameK(v.k, ref.k) && v.selection === ref.selection && v.ability === ref.ability);
}

function textOf(item: TaskItem): NonNullable<CaseDocument["text"]> {
  return item.kind === "multiple_choice"
    ? { context: item.context, choices: item.choices, target: item.choices[item.target] ?? "" }
    : { context: item.context, target: item.target };
}

/** The documents one cell flipped, both directions, in document order, with their texts and places. */
export async function cellCases(documents: RunDocuments, ref: CellRef, choiceMetric: ChoiceMetric): Promise<CellCases> {
  const model = documents.run.results.models.find((m) => m.name === ref.model);
  const variant = model && variantOf(model, ref);
  if (!model || !variant)
    throw new Error(
      `run ${documents.run.results.run_id} has no variant ${ref.ability ?? "random"} ${ref.selection} at k = ${ref.k} for model \`${ref.model}\``,
    );
  const group = model.groups?.find((g) => g.name === ref.benchmark);
  if (group) {
    return {
      ref,
      metric: groupMetric(group, choiceMetric),
      documents: [],
      problem: `\`${group.name}\` is a group of ${group.tasks.length} tasks: its flipped documents are listed in its tasks' cells`,
    };
  }
  const metric = benchmarkMetric(
    model.benchmarks.find((b) => b.name === ref.benchmark),
    choiceMetric,
  );
  const flipped = await flippedDocuments(documents.items, ref.model, variant, ref.benchmark, metric);
  const { benchmark, problem } = await documents.task(ref.benchmark);
  const stale = await documents.dataFileChanged(model, ref.benchmark);
  const byIndex = new Map((benchmark?.task.items ?? []).map((item) => [item.index, item]));
  // A task that does not load (its Python may not run) still has its documents' places, which need none.
  const places = benchmark ? undefined : (await documents.documentPlaces(ref.benchmark)).places;
  const placeOf = (index: number): CaseDocument["place"] => {
    const line = benchmark ? byIndex.get(index)?.line : places?.lines[index];
    const file = benchmark?.task.dataFile ?? places?.dataFile;
    return line !== undefined && file !== undefined ? { file, line } : undefined;
  };
  return {
    ref,
    metric,
    documents: flipped.map((d): CaseDocument => {
      const item = byIndex.get(d.index);
      const place = placeOf(d.index);
      const id = benchmark ? item?.id : places?.ids[d.index];
      return { ...d, ...(item ? { text: textOf(item) } : {}), ...(place ? { place } : {}), ...(id !== undefined ? { id } : {}) };
    }),
    ...(stale ? { stale } : {}),
    ...(problem ? { problem } : {}),
  };
}

/**
 * The flips of the run on the documents of `dataFile` (the benchmarks that read it), by line:
 * each model, each variant, under the benchmark's metric (`choiceMetric` for multiple choice).
 * Wrong-to-right flips count only in cells whose AIS is negative: they are the cases behind it
 * (in a cell with a positive AIS they are the noise the interval accounts for). Right-to-wrong
 * flips count in every cell.
 */
export async function dataFileCases(
  documents: RunDocuments,
  dataFile: string,
  choiceMetric: ChoiceMetric,
): Promise<{ lines: CaseLine[]; stale?: string }> {
  const lines = new Map<number, CaseLine>();
  let stale: string | undefined;
  for (const model of documents.run.results.models) {
    for (const result of model.benchmarks) {
      if (result.data_file !== undefined && path.resolve(result.data_file) !== path.resolve(dataFile)) continue;
      const { places } = await documents.documentPlaces(result.name);
      if (!places || path.resolve(places.dataFile) !== path.resolve(dataFile)) continue;
      stale ??= await documents.dataFileChanged(model, result.name);
      const metric = benchmarkMetric(result, choiceMetric);
      // every rule's variants; the random control of a candidate set, shared by its rules, once
      const rules = profilesOf(model);
      const variants = rules.flatMap((p, r) =>
        p.variants
          .filter((v) => rules.findIndex((q) => q.candidate_set === p.candidate_set) === r || v.ability !== null)
          .map((v) => ({ v, method: rules.length > 1 && v.ability !== null ? p.method : undefined, candidates: p.candidate_set })),
      );
      for (const { v: variant, method, candidates } of variants) {
        const ais = variant.benchmarks.find((b) => b.name === result.name)?.[metric]?.ais ?? null;
        for (const document of await flippedDocuments(documents.items, model.name, variant, result.name, metric)) {
          if (document.direction === "wrong_to_right" && !(ais !== null && ais < 0)) continue;
          const line = places.lines[document.index];
          if (line === undefined) continue;
          let entry = lines.get(line);
          const id = places.ids[document.index];
          if (!entry)
            lines.set(
              line,
              (entry = { line, index: document.index, ...(id !== undefined ? { id } : {}), benchmark: result.name, flips: [] }),
            );
          entry.flips.push({
            model: model.name,
            ability: variant.ability,
            selection: variant.selection,
            ...(method ? { method } : {}),
            ...(candidates ? { candidates } : {}),
            k: variant.k,
            metric,
            document,
          });
        }
      }
    }
  }
  return { lines: [...lines.values()].sort((a, b) => a.line - b.line), ...(stale ? { stale } : {}) };
}
