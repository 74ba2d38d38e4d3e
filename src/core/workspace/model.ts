// The editor's model of a workspace: the profiling configs, the diagnostic datasets and task files
// they name (and those no config names), what depends on what, and the problems of every file.
//
// It is fed the editor's open documents (text and version) and the file system's changes; each
// `update` re-checks only what an edit can have changed:
// - a config is checked with loadProfile, through loaders that cache every task load and every
//   dataset check until a file they read changes, so an edit to a config re-reads nothing else;
// - an edit to a dataset or a task re-checks it and the configs that read it, nothing more;
// - a dataset or task file that no config reads gets the checks that need no config;
// - a file's problems are the union of what every check says about it, and a file whose problems
//   went away is reported with none, so the editor clears them.
// Nothing here knows VS Code: the extension's workspace/ feeds it, through a worker thread.
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { loadProfile, type LoadedProfile, type ProfileInputs, type ResolvedBenchmark, benchmarkTexts } from "../config/load";
import { DiagnosticDatasetChecker, type DiagnosticCheckOptions, type DiagnosticDatasetCheck } from "../diagnostic/dataset";
import { buildBenchmarkIndex, type BenchmarkNgramIndex } from "../diagnostic/contamination";
import { loadTask, type Task, type TaskLoad, type TaskOptions } from "../lmeval/task";
import type { HelperPolicy } from "../lmeval/taskPython";
import { diskFiles, type TextFiles } from "../base/fsutil";
import { jobProblems } from "../plan/compile";
import { errorsOf, fileProblem, type Problem } from "../base/problems";
import { CONFIG_SNAPSHOT } from "../results/runFolder";
import type { MeasuredStability } from "../diagnostic/health";
import { measuredStabilities } from "../results/stability";
import { loadRun } from "../report/load";
import { buildReport } from "../report/model";
import type { Finding } from "../report/types";
import { findingProblems } from "../report/findingProblems";
import { runsOfConfig } from "../results/runs";
import type { RunBaselines } from "../config/power";
import { baselinesOfResults } from "../run/baselines";

export type FileChangeKind = "created" | "changed" | "deleted";

export interface FileChange {
  file: string;
  kind: FileChangeKind;
}

export interface WorkspaceUpdate {
  /** Files whose problems changed, each with all its problems now (none: clear them). */
  problems: Map<string, Problem[]>;
  /** The checks that ran, `config:<file>`, `dataset:<file>` or `task:<file>`, in order. */
  checked: string[];
}

/** A profiling config, not the snapshot of one in a run folder (runs/<run-id>/config.bprof.yaml). */
export function isConfigFile(file: string): boolean {
  return (
    file.endsWith(".bprof.yaml") && !(path.basename(file) === CONFIG_SNAPSHOT && path.basename(path.dirname(path.dirname(file))) === "runs")
  );
}

export function isDatasetFile(file: string): boolean {
  return file.endsWith(".diag.jsonl");
}

/**
 * Whether a YAML text is an lm-eval task (its own `task` key, and data, an include or an output
 * type): other YAML files of a workspace (CI, compose files) are none of ours.
 */
export function looksLikeTask(text: string): boolean {
  return /^task\s*:/m.test(text) && /^(dataset_path|include|output_type)\s*:/m.test(text);
}

/** What the last check of a config found, and which files it read. */
export interface ConfigState {
  loaded: LoadedProfile;
  /** Every file the check read: the config, its tasks and their includes and data, its datasets. */
  reads: Set<string>;
  /** The model folders it names: a change inside one re-checks the config. */
  modelDirs: string[];
}

interface TaskEntry {
  load: TaskLoad;
  reads: Set<string>;
}

const INDEXES_KEPT = 8;

export class WorkspaceModel {
  private readonly documents = new Map<string, { text: string; version: number }>();
  private readonly configs = new Map<string, ConfigState | undefined>();
  private readonly datasets = new Set<string>();
  /** Open task files no config may name (lm-eval tasks the user is writing). */
  private readonly openTasks = new Set<string>();
  private readonly dirty = new Set<string>();
  /** What each check said, per file. */
  private readonly contributions = new Map<string, Map<string, Problem[]>>();
  /** The problems last reported per file (as JSON), and the files whose problems may have changed since. */
  private readonly published = new Map<string, string>();
  private readonly changedFiles = new Set<string>();

  private readonly checkers = new Map<string, DiagnosticDatasetChecker>();
  private readonly datasetResults = new Map<string, Map<string, DiagnosticDatasetCheck>>();
  private readonly taskResults = new Map<string, TaskEntry>();
  private readonly indexes = new Map<string, BenchmarkNgramIndex | undefined>();
  private readonly ids = new WeakMap<object, number>();
  /** Per results.json read, its modification time and the abilities whose ranking stability it measured. */
  private readonly measurements = new Map<string, { mtimeMs: number; measured: Map<string, MeasuredStability> }>();
  /** Per results.json read, its modification time and the failure signatures found in it. */
  private readonly runFindings = new Map<string, { mtimeMs: number; runId: string; findings: Finding[] }>();
  /** Per results.json read, its modification time and its run's baselines (the power figures); undefined when it cannot be read. */
  private readonly runBaselines = new Map<string, { mtimeMs: number; baselines: RunBaselines | undefined }>();
  /** Per config, its finished runs' results files, newest first: read once, again when a run's files or the config change. */
  private readonly finishedRuns = new Map<string, Promise<string[]>>();
  private nextId = 1;
  /** Whether task files' Python runs: not in a workspace the user has not trusted, else as the user allowed. */
  private helpers: HelperPolicy = "run";

  constructor(private readonly disk: TextFiles = diskFiles) {}

  // -------------------------------------------------------------------------------------------
  // What the editor tells it.

  /** An editor opened or changed a document: its text replaces the disk's until it closes. */
  setDocument(file: string, text: string, version: number): void {
    const known = this.documents.get(file);
    if (known && known.version === version && known.text === text) return;
    this.documents.set(file, { text, version });
    if (!isConfigFile(file) && /\.ya?ml$/.test(file) && looksLikeTask(text)) this.openTasks.add(file);
    this.touched(file, "changed");
  }

  closeDocument(file: string): void {
    if (!this.documents.delete(file)) return;
    if (this.openTasks.delete(file)) this.dropContribution(`task:${file}`);
    this.touched(file, "changed");
  }

  /** Files created, changed or deleted on disk (a watcher's events). */
  filesChanged(changes: readonly FileChange[]): void {
    for (const { file, kind } of changes) {
      // An open document's buffer is what the user sees; the disk catches up when it is saved.
      if (kind === "changed" && this.documents.has(file)) continue;
      this.touched(file, kind);
    }
  }

  /** Whether task Python may run; a change re-checks every config and task. */
  setHelpers(helpers: HelperPolicy): void {
    if (JSON.stringify(helpers) === JSON.stringify(this.helpers)) return;
    this.helpers = helpers;
    this.taskResults.clear();
    for (const file of this.configs.keys()) this.dirty.add(`config:${file}`);
    for (const file of this.openTasks) this.dirty.add(`task:${file}`);
  }
  /** The policy task loading follows now: every task the editor loads (checks, results, cases) asks it here. */
  get helperPolicy(): HelperPolicy {
    return this.helpers;
  }

  /** Files found by a search of the workspace (configs and datasets), checked at the next update. */
  filesFound(files: readonly string[]): void {
    for (const file of files) if (!this.configs.has(file) && !this.datasets.has(file)) this.touched(file, "created");
  }

  // -------------------------------------------------------------------------------------------
  // Checking.

  /** Re-checks whatever changed since the last update; returns the files whose problems changed. */
  async update(): Promise<WorkspaceUpdate> {
    // What changes while this update runs is marked for the next one; a mark whose file has gone
    // meanwhile (a document opened and closed at once) is dropped with the rest.
    const dirty = new Set(this.dirty);
    this.dirty.clear();
    const checked: string[] = [];
    for (const file of [...this.configs.keys()]) {
      if (!dirty.has(`config:${file}`)) continue;
      await this.checkConfig(file);
      checked.push(`config:${file}`);
    }
    const read = this.filesReadByConfigs();
    for (const [files, kind] of [
      [this.datasets, "dataset"],
      [this.openTasks, "task"],
    ] as const) {
      for (const file of [...files]) {
        const key = `${kind}:${file}`;
        if (read.has(file)) this.dropContribution(key);
        else if (dirty.has(key) || !this.contributions.has(key)) {
          await (kind === "dataset" ? this.checkDatasetAlone(file) : this.checkTaskAlone(file));
          checked.push(key);
        }
      }
    }
    return { problems: this.changedProblems(), checked };
  }

  /** Whether an update would check anything. */
  get pending(): boolean {
    return this.dirty.size > 0;
  }

  private async checkConfig(file: string): Promise<void> {
    const reads = new Set<string>([file]);
    const baselines = await this.baselinesFor(file);
    const loaded = await loadProfile(file, {
      inputs: this.inputs(reads, await this.measuredFor(file)),
      ...(baselines ? { baselines } : {}),
    });
    // A config that no longer parses (a key half typed) still names what it named a moment ago:
    // its datasets keep the checks in its context instead of flickering to those of a lone file.
    const previous = this.configs.get(file);
    const parsed =
      loaded.resolved.models.length + loaded.resolved.benchmarks.length + loaded.resolved.abilities.length > 0 ||
      errorsOf(loaded.problems).length === 0;
    if (!parsed && previous) for (const f of previous.reads) reads.add(f);
    this.configs.set(file, { loaded, reads, modelDirs: loaded.resolved.models.map((m) => m.path) });
    for (const ability of loaded.resolved.abilities) for (const dataset of ability.files) this.datasets.add(dataset);
    this.setContribution(`config:${file}`, loaded.problems);
    this.setContribution(`findings:${file}`, await this.findingsFor(file, loaded));
    this.dropContribution(`jobs:${file}`);
  }

  /**
   * What only compiling the config's jobs finds (an item past the model's window, a chat template
   * that refuses one), added to the problems until the config or a file it reads changes. It
   * tokenizes every item, so it runs when asked (Validate Config), not as the user types.
   */
  async compileJobs(file: string): Promise<Problem[]> {
    const profile = this.configs.get(file)?.loaded.profile;
    if (!profile) return [];
    const problems = await jobProblems(profile);
    this.setContribution(`jobs:${file}`, problems);
    return problems;
  }

  /** The problems whose files changed since the last update or compileJobs, as update returns them. */
  takeChangedProblems(): Map<string, Problem[]> {
    return this.changedProblems();
  }

  /**
   * Per ability, the ranking stability measured by the newest finished run of the config that
   * measured it (`ablation.stability`); empty when none did. A run that finishes writes its
   * results.json, whose creation re-checks every config (touched).
   */
  private async measuredFor(configFile: string): Promise<Map<string, MeasuredStability>> {
    const out = new Map<string, MeasuredStability>();
    for (const file of await this.finishedResults(configFile))
      for (const [ability, m] of await this.measuredIn(file)) if (!out.has(ability)) out.set(ability, m);
    return out;
  }

  /**
   * The baselines of the config's newest finished run whose results can be read, for each
   * benchmark's power and its `config.low-power` warning; undefined before a run (the baselines
   * are then assumed). Read once per results.json, like the measured stabilities.
   */
  private async baselinesFor(configFile: string): Promise<RunBaselines | undefined> {
    for (const file of await this.finishedResults(configFile)) {
      const mtimeMs = (await fs.stat(file).catch(() => undefined))?.mtimeMs;
      if (mtimeMs === undefined) continue;
      let known = this.runBaselines.get(file);
      if (!known || known.mtimeMs !== mtimeMs) {
        const baselines = await loadRun(path.dirname(file)).then(
          (run) => baselinesOfResults(run.results),
          () => undefined,
        );
        this.runBaselines.set(file, (known = { mtimeMs, baselines }));
      }
      if (known.baselines) return known.baselines;
    }
    return undefined;
  }

  /** The config's finished runs' results files, newest first. */
  private finishedResults(configFile: string): Promise<string[]> {
    let results = this.finishedRuns.get(configFile);
    if (!results) {
      const runs = runsOfConfig(configFile).catch(() => []);
      this.finishedRuns.set(
        configFile,
        (results = runs.then((list) => list.filter((r) => r.finished).map((r) => path.join(r.dir, "results.json")))),
      );
    }
    return results;
  }

  /**
   * The failure signatures of the config's newest finished run as problems on the config (on the
   * config as it reads now: an ability renamed since is no longer pointed at); none before a run.
   */
  private async findingsFor(file: string, loaded: LoadedProfile): Promise<Problem[]> {
    const newest = (await this.finishedResults(file))[0];
    const found = newest === undefined ? undefined : await this.findingsIn(newest);
    if (!found || found.findings.length === 0) return [];
    const text = await this.readText(file).catch(() => undefined);
    if (text === undefined) return [];
    return findingProblems(file, text, found.runId, found.findings, {
      abilities: loaded.resolved.abilities.map((a) => a.name),
      benchmarks: loaded.resolved.benchmarks.map((b) => ({ name: b.name, entry: b.entry })),
    });
  }

  private async findingsIn(resultsFile: string): Promise<{ runId: string; findings: Finding[] } | undefined> {
    const mtimeMs = (await fs.stat(resultsFile).catch(() => undefined))?.mtimeMs;
    if (mtimeMs === undefined) return undefined;
    const known = this.runFindings.get(resultsFile);
    if (known && known.mtimeMs === mtimeMs) return known;
    // a run whose results cannot be read shows nothing to find
    const found = await loadRun(path.dirname(resultsFile))
      .then(async (run) => ({ runId: run.results.run_id, findings: (await buildReport(run)).models.flatMap((m) => m.findings) }))
      .catch(() => ({ runId: "", findings: [] }));
    this.runFindings.set(resultsFile, { mtimeMs, ...found });
    return found;
  }

  private async measuredIn(resultsFile: string): Promise<Map<string, MeasuredStability>> {
    const mtimeMs = (await fs.stat(resultsFile).catch(() => undefined))?.mtimeMs;
    if (mtimeMs === undefined) return new Map();
    const known = this.measurements.get(resultsFile);
    if (known && known.mtimeMs === mtimeMs) return known.measured;
    // a run whose results cannot be read measured nothing usable
    const measured = await loadRun(path.dirname(resultsFile)).then(
      (run) => measuredStabilities(run.results),
      () => new Map<string, MeasuredStability>(),
    );
    this.measurements.set(resultsFile, { mtimeMs, measured });
    return measured;
  }

  private async checkDatasetAlone(file: string): Promise<void> {
    let text: string;
    try {
      text = await this.readText(file);
    } catch {
      this.setContribution(`dataset:${file}`, []);
      return;
    }
    this.setContribution(`dataset:${file}`, this.checker(file).check(text).problems);
  }

  private async checkTaskAlone(file: string): Promise<void> {
    const reads = new Set<string>();
    const load = await loadTask(file, { helpers: this.helpers }, this.recording(reads));
    this.setContribution(`task:${file}`, load.problems);
  }

  /** Loaders for loadProfile that cache, and that add every file they stand for to `reads`. */
  private inputs(reads: Set<string>, measured?: ReadonlyMap<string, MeasuredStability>): ProfileInputs {
    return {
      files: this.recording(reads),
      task: async (file, options) => {
        const entry = await this.task(file, options);
        for (const f of entry.reads) reads.add(f);
        return entry.load;
      },
      dataset: async (file, options) => {
        reads.add(file);
        return this.dataset(file, measured?.size ? { ...options, measured } : options);
      },
      benchmarkIndex: (benchmarks) => this.benchmarkIndex(benchmarks),
      helpers: this.helpers,
    };
  }

  private recording(reads: Set<string>): TextFiles {
    return { read: (file) => (reads.add(file), this.readText(file)) };
  }

  private readText(file: string): Promise<string> {
    const open = this.documents.get(file);
    return open ? Promise.resolve(open.text) : this.disk.read(file);
  }

  private async task(file: string, options: TaskOptions): Promise<TaskEntry> {
    const key = `${file}\0${JSON.stringify(options)}`;
    let entry = this.taskResults.get(key);
    if (!entry) {
      const reads = new Set<string>([file]);
      const load = await loadTask(file, options, this.recording(reads));
      // Parquet data is read as bytes from disk, not through `files`.
      if (load.task) reads.add(load.task.dataFile);
      entry = { load, reads };
      this.taskResults.set(key, entry);
    }
    return entry;
  }

  private async dataset(file: string, options: DiagnosticCheckOptions): Promise<DiagnosticDatasetCheck> {
    const key = [
      (options.abilities ?? []).join("\0"),
      options.benchmarkIndex ? this.idOf(options.benchmarkIndex) : 0,
      options.minItems ?? "",
      [...(options.measured ?? [])].map(([ability, m]) => `${ability}:${m.runId}:${m.jaccard}`).join(","),
    ].join("|");
    let byOptions = this.datasetResults.get(file);
    if (!byOptions) this.datasetResults.set(file, (byOptions = new Map()));
    let result = byOptions.get(key);
    if (!result) {
      let text: string;
      try {
        text = await this.readText(file);
      } catch (e) {
        return {
          items: [],
          problems: [fileProblem(file, "file.unreadable", `cannot read the diagnostic dataset: ${(e as Error).message}`)],
        };
      }
      result = this.checker(file).check(text, options);
      byOptions.set(key, result);
    }
    return result;
  }

  private benchmarkIndex(benchmarks: readonly ResolvedBenchmark[]): BenchmarkNgramIndex | undefined {
    const key = benchmarks.map((b) => `${this.idOf(b.task)}:${b.name}`).join("|");
    if (!this.indexes.has(key)) {
      const texts = benchmarkTexts(benchmarks);
      this.indexes.set(key, texts.length > 0 ? buildBenchmarkIndex(texts) : undefined);
      if (this.indexes.size > INDEXES_KEPT) this.indexes.delete(this.indexes.keys().next().value!);
    }
    return this.indexes.get(key);
  }

  private checker(file: string): DiagnosticDatasetChecker {
    let checker = this.checkers.get(file);
    if (!checker) this.checkers.set(file, (checker = new DiagnosticDatasetChecker(file)));
    return checker;
  }

  private idOf(value: object): number {
    let id = this.ids.get(value);
    if (id === undefined) this.ids.set(value, (id = this.nextId++));
    return id;
  }

  // -------------------------------------------------------------------------------------------
  // What depends on what.

  /** A file's text may have changed: forget what was computed from it, and mark what read it. */
  private touched(file: string, kind: FileChangeKind): void {
    this.datasetResults.delete(file);
    // a run's files (its results among them), or a config that came or went; not a keystroke in a
    // config (an edited `output` is seen at the next run's files)
    if (file.includes(`${path.sep}runs${path.sep}`) || (isConfigFile(file) && kind !== "changed")) this.finishedRuns.clear();
    let taskChanged = false;
    for (const [key, entry] of this.taskResults) {
      // A new file may be the missing include or data file a failed load looked for.
      if (entry.reads.has(file) || (kind === "created" && errorsOf(entry.load.problems).length > 0)) {
        this.taskResults.delete(key);
        taskChanged = true;
      }
    }
    if (taskChanged) this.indexes.clear();

    if (isConfigFile(file)) {
      if (kind === "deleted") this.forgetConfig(file);
      else {
        if (!this.configs.has(file)) this.configs.set(file, undefined);
        this.dirty.add(`config:${file}`);
      }
    }
    if (isDatasetFile(file) || this.datasets.has(file)) {
      if (kind === "deleted") {
        this.datasets.delete(file);
        this.checkers.delete(file);
        this.dropContribution(`dataset:${file}`);
      } else {
        this.datasets.add(file);
        this.dirty.add(`dataset:${file}`);
      }
    }
    if (this.openTasks.has(file)) this.dirty.add(`task:${file}`);
    for (const [config, state] of this.configs) {
      // A file appearing or disappearing may be one a config names but could not find.
      const affected =
        kind !== "changed" || !state || state.reads.has(file) || state.modelDirs.some((dir) => file.startsWith(dir + path.sep));
      if (affected) this.dirty.add(`config:${config}`);
    }
  }

  private forgetConfig(file: string): void {
    this.configs.delete(file);
    this.dirty.delete(`config:${file}`);
    this.dropContribution(`config:${file}`);
    this.dropContribution(`findings:${file}`);
    this.dropContribution(`jobs:${file}`);
  }

  private filesReadByConfigs(): Set<string> {
    const read = new Set<string>();
    for (const state of this.configs.values()) for (const file of state?.reads ?? []) read.add(file);
    return read;
  }

  // -------------------------------------------------------------------------------------------
  // Problems, merged per file.

  private setContribution(key: string, problems: readonly Problem[]): void {
    const byFile = new Map<string, Problem[]>();
    for (const p of problems) {
      const list = byFile.get(p.file);
      if (list) list.push(p);
      else byFile.set(p.file, [p]);
    }
    for (const file of this.contributions.get(key)?.keys() ?? []) this.changedFiles.add(file);
    for (const file of byFile.keys()) this.changedFiles.add(file);
    this.contributions.set(key, byFile);
  }

  private dropContribution(key: string): void {
    const old = this.contributions.get(key);
    if (!old) return;
    for (const file of old.keys()) this.changedFiles.add(file);
    this.contributions.delete(key);
  }

  /** The merged problems of every file that may have changed, when they did. */
  private changedProblems(): Map<string, Problem[]> {
    const changed = new Map<string, Problem[]>();
    for (const file of this.changedFiles) {
      const merged = this.problemsOf(file);
      const json = JSON.stringify(merged);
      if ((this.published.get(file) ?? "[]") === json) continue;
      if (merged.length === 0) this.published.delete(file);
      else this.published.set(file, json);
      changed.set(file, merged);
    }
    this.changedFiles.clear();
    return changed;
  }

  /** Every check's problems of a file, each once (two configs that use one dataset say the same things of it). */
  problemsOf(file: string): Problem[] {
    const seen = new Set<string>();
    const merged: Problem[] = [];
    for (const byFile of this.contributions.values()) {
      for (const p of byFile.get(file) ?? []) {
        const key = `${p.line}:${p.column}:${p.code}:${p.message}`;
        if (seen.has(key)) continue;
        seen.add(key);
        merged.push(p);
      }
    }
    return merged.sort((a, b) => a.line - b.line || a.column - b.column);
  }

  // -------------------------------------------------------------------------------------------
  // What the language features ask.

  /** Whether `file` is a diagnostic dataset: by its name, or because a config names it. */
  isDataset(file: string): boolean {
    return isDatasetFile(file) || this.datasets.has(file);
  }

  configFiles(): string[] {
    return [...this.configs.keys()].sort();
  }

  configState(file: string): ConfigState | undefined {
    return this.configs.get(file);
  }

  /** The configs whose last check read `file`. */
  configsReading(file: string): string[] {
    return [...this.configs]
      .filter(([, state]) => state?.reads.has(file))
      .map(([config]) => config)
      .sort();
  }

  /** The text of a file as the editor sees it. */
  text(file: string): Promise<string> {
    return this.readText(file);
  }

  /** Ability names of every dataset item checked so far, and those the configs declare. */
  abilityNames(): string[] {
    const names = new Set<string>();
    for (const byOptions of this.datasetResults.values())
      for (const result of byOptions.values()) for (const item of result.items) names.add(item.ability);
    for (const state of this.configs.values()) for (const ability of state?.loaded.resolved.abilities ?? []) names.add(ability.name);
    return [...names].sort();
  }

  /** The task a config's benchmark loaded, when it did. */
  taskOf(configFile: string, entry: number): Task | undefined {
    return this.configs.get(configFile)?.loaded.resolved.benchmarks.find((b) => b.entry === entry)?.task;
  }
}
