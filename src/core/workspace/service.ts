// What the editor asks of the workspace model (hovers, completions, outlines), answered from the
// model's last checks. The worker thread serves it; tests call it directly.
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { diagnosticItemOfLine } from "../diagnostic/dataset";
import type { DiagnosticItem } from "../diagnostic/item";
import { loadReviewOf } from "../diagnostic/review/reviewFile";
import { jsonlLines } from "../diagnostic/jsonl";
import { configCompletions, type CompletionItem } from "../language/completion";
import type { MeasuredStability } from "../diagnostic/health";
import { measuredStability } from "../results/stability";
import {
  abilityHover,
  benchmarkHover,
  diagnosticItemHover,
  diagnosticTextFor,
  itemReviewHover,
  schemaHover,
  type ItemRendering,
} from "../language/hover";
import { profileOutline, type ProfileOutline } from "../language/outline";
import { offsetAt, type Position } from "../language/text";
import { readParameterCount } from "../model/parameters";
import { diagnosticSequence } from "../prompts/diagnosticText";
import { loadTokenizer, type ModelTokenizer } from "../prompts/tokenize";
import type { ChoiceMetric } from "../analysis/ais";
import type { HelperPolicy } from "../lmeval/taskPython";
import { cellCases, dataFileCases, RunDocuments, type CaseLine, type CellCases, type CellRef } from "../report/cases";
import { loadRun, RESULTS_FILE, type LoadedRun } from "../report/load";
import { runsOfConfig } from "../results/runs";
import { parseYamlSource } from "../base/yamlSource";
import { isConfigFile, type FileChange, type WorkspaceModel } from "./model";

/** Folders a search for files to complete never enters. */
const SKIPPED_FOLDERS = new Set(["node_modules", ".git", ".bprof", "dist", "__pycache__", ".venv", "venv"]);
const SCAN_DEPTH = 6;
const SCAN_ENTRIES = 20000;

export interface FoundFiles {
  taskFiles: string[];
  datasetFiles: string[];
  modelFolders: string[];
}

/** The flips of one run on the documents of a data file, by line. */
export interface FileCases {
  configFile: string;
  runId: string;
  runDir: string;
  /** The data file changed since the run: no line is marked. */
  stale?: string;
  lines: CaseLine[];
}

export class WorkspaceService {
  private readonly tokenizers = new Map<string, Promise<ModelTokenizer | undefined>>();
  /** Each run's documents, kept while its results.json is the one read and task Python's policy the same. */
  private readonly runs = new Map<string, { stamp: number; helpers: HelperPolicy; documents: Promise<RunDocuments> }>();
  private roots: string[] = [];
  private found: Promise<FoundFiles> | undefined;

  constructor(readonly model: WorkspaceModel) {}

  setRoots(folders: readonly string[]): void {
    this.roots = [...folders];
    this.found = undefined;
  }

  /** Forgets what a change makes stale: a tokenizer of a changed model folder, the files found. */
  filesChanged(changes: readonly FileChange[]): void {
    for (const { file, kind } of changes) {
      for (const key of this.tokenizers.keys()) if (file.startsWith(path.dirname(key) + path.sep)) this.tokenizers.delete(key);
      if (kind !== "changed") this.found = undefined;
    }
  }

  async hover(file: string, at: Position): Promise<{ markdown: string; schemaOnly: boolean } | null> {
    const text = await this.model.text(file).catch(() => undefined);
    if (text === undefined) return null;
    if (isConfigFile(file)) return await this.configHover(file, text, at);
    if (this.model.isDataset(file)) {
      const lines = jsonlLines(text);
      const item = diagnosticItemOfLine(lines[at.line] ?? "", at.line + 1);
      if (!item) return null;
      const review = await this.reviewHover(file, lines, item);
      return { markdown: diagnosticItemHover(item, await this.renderings(file, item)) + review, schemaOnly: false };
    }
    return null;
  }

  /** The item's decision and the labels' accuracy so far, from the dataset's review file; "" without one. */
  private async reviewHover(file: string, lines: readonly string[], item: DiagnosticItem): Promise<string> {
    const loaded = await loadReviewOf(file, { read: (f) => this.model.text(f) });
    if (!loaded) return "";
    const items = lines.flatMap((raw, i) => diagnosticItemOfLine(raw, i + 1) ?? []);
    return `\n\n${itemReviewHover(file, item, loaded.review, items)}`;
  }

  private async configHover(file: string, text: string, at: Position): Promise<{ markdown: string; schemaOnly: boolean } | null> {
    const source = parseYamlSource(text, file);
    const field = source.pathAt(offsetAt(text, at));
    const loaded = this.model.configState(file)?.loaded;
    const [section, index, key] = field;
    if (loaded && section === "benchmarks" && typeof index === "number" && (key === undefined || key === "task" || key === "name")) {
      const benchmark = loaded.resolved.benchmarks.find((b) => b.entry === index);
      if (benchmark) {
        const power = (loaded.power ?? []).filter((p) => p.entry === index && p.benchmark === benchmark.name);
        return { markdown: benchmarkHover(benchmark, loaded.resolved.models, power), schemaOnly: false };
      }
    }
    if (loaded && section === "abilities" && typeof index === "number" && (key === undefined || key === "name" || key === "data")) {
      // By the entry's name: a list of files with `sets: separate` resolves to more abilities than entries.
      const name = (source.value as { abilities?: { name?: unknown }[] } | null)?.abilities?.[index]?.name;
      const ability = loaded.resolved.abilities.find((a) => a.name === name);
      if (ability) {
        const measured = await this.measuredStability(file, text, ability.name);
        return {
          markdown: abilityHover(
            ability,
            ability.files.flatMap((f) => this.model.problemsOf(f)),
            measured,
          ),
          schemaOnly: false,
        };
      }
    }
    const markdown = schemaHover(field);
    return markdown ? { markdown, schemaOnly: true } : null;
  }

  /** The item as each model of each config that reads its file will read it. */
  private async renderings(file: string, item: NonNullable<ReturnType<typeof diagnosticItemOfLine>>): Promise<ItemRendering[]> {
    const renderings: ItemRendering[] = [];
    for (const config of this.model.configsReading(file)) {
      for (const model of this.model.configState(config)?.loaded.resolved.models ?? []) {
        const base = { model: model.name, config, chat: model.chat !== undefined };
        try {
          const text = diagnosticTextFor(item, model);
          const tokenizer = await this.tokenizer(model.path, model.addBosToken);
          renderings.push({
            ...base,
            text,
            ...(tokenizer ? { tokens: diagnosticSequence(tokenizer, item, model.chat?.template).length } : {}),
          });
        } catch (e) {
          renderings.push({ ...base, text: "", error: (e as Error).message });
        }
      }
    }
    return renderings;
  }

  private tokenizer(modelDir: string, addBosToken: boolean | undefined): Promise<ModelTokenizer | undefined> {
    // Keyed by folder, then by the model's add_bos_token: two configs may read one folder both ways.
    const key = `${modelDir}${path.sep}${String(addBosToken)}`;
    let tokenizer = this.tokenizers.get(key);
    const options = addBosToken !== undefined ? { addBosToken } : {};
    if (!tokenizer) this.tokenizers.set(key, (tokenizer = loadTokenizer(modelDir, options).catch(() => undefined)));
    return tokenizer;
  }

  async completion(file: string, at: Position): Promise<CompletionItem[]> {
    if (!isConfigFile(file)) return [];
    const text = await this.model.text(file).catch(() => "");
    const found = await this.foundFiles();
    const models = this.model.configState(file)?.loaded.resolved.models ?? [];
    const modelParameters = (
      await Promise.all(models.map(async (m) => ({ name: m.name, count: await readParameterCount(m.path) })))
    ).flatMap((m) => (m.count ? [{ name: m.name, total: m.count.total }] : []));
    return configCompletions(text, at, { configFile: file, abilityNames: this.model.abilityNames(), ...found, modelParameters });
  }

  async outlines(): Promise<ProfileOutline[]> {
    const outlines: ProfileOutline[] = [];
    for (const file of this.model.configFiles()) {
      const text = await this.model.text(file).catch(() => undefined);
      if (text === undefined) continue;
      const outline = profileOutline(file, text, this.model.configState(file)?.loaded, (f) => this.model.problemsOf(f));
      const finished = (await runsOfConfig(file, text)).find((r) => r.finished);
      outlines.push(finished ? { ...outline, latestResults: { runId: finished.id, dir: finished.dir } } : outline);
    }
    return outlines;
  }

  /**
   * The cases of `file` (a benchmark's data file) in the run of each config that reads it: the run
   * `picks` names for that config, else its newest finished run.
   */
  async cases(file: string, picks: Readonly<Record<string, string>>): Promise<FileCases[]> {
    const found: FileCases[] = [];
    if (this.model.isDataset(file) || isConfigFile(file)) return found;
    const reading = new Set(this.model.configsReading(file));
    for (const configFile of this.model.configFiles()) {
      const runDir = picks[configFile] ?? (await runsOfConfig(configFile)).find((r) => r.finished)?.dir;
      if (!runDir) continue;
      const documents = await this.runDocuments(runDir);
      // A config whose tasks do not load now (their Python may not run) still read the file in its run.
      if (!documents || !(reading.has(configFile) || scored(documents.run, file))) continue;
      const { lines, stale } = await dataFileCases(documents, file, "acc");
      found.push({ configFile, runId: documents.run.results.run_id, runDir, lines: stale ? [] : lines, ...(stale ? { stale } : {}) });
    }
    return found;
  }

  /** The ability's ranking stability from the config's newest finished run that measured it. */
  private async measuredStability(configFile: string, text: string, ability: string): Promise<MeasuredStability | undefined> {
    for (const run of (await runsOfConfig(configFile, text)).filter((r) => r.finished)) {
      const documents = await this.runDocuments(run.dir);
      const measured = documents && measuredStability(documents.run.results, ability);
      if (measured) return measured;
    }
    return undefined;
  }

  /** The documents of one cell of a run (the results view and the Negative AIS view ask them here, under the workspace's policy). */
  async cellCases(runDir: string, ref: CellRef, metric: ChoiceMetric): Promise<CellCases> {
    const documents = await this.runDocuments(runDir);
    if (!documents) throw new Error(`${runDir} has no results that can be read`);
    return cellCases(documents, ref, metric);
  }

  /**
   * A run's documents, loaded under the model's policy for task Python: every task the editor
   * loads from a run folder (whose config snapshot a cloned repository may have written) is loaded
   * here, so Restricted Mode and the user's answers apply to all of them.
   */
  private async runDocuments(runDir: string): Promise<RunDocuments | undefined> {
    const stamp = (await fs.stat(path.join(runDir, RESULTS_FILE)).catch(() => undefined))?.mtimeMs;
    if (stamp === undefined) return undefined;
    const helpers = this.model.helperPolicy;
    let entry = this.runs.get(runDir);
    if (!entry || entry.stamp !== stamp || entry.helpers !== helpers)
      this.runs.set(runDir, (entry = { stamp, helpers, documents: loadRun(runDir).then((run) => new RunDocuments(run, helpers)) }));
    return entry.documents.catch(() => undefined);
  }

  /** Task files, datasets and model folders under the workspace folders (cached until a file appears or goes). */
  foundFiles(): Promise<FoundFiles> {
    this.found ??= scanFolders(this.roots);
    return this.found;
  }
}

/** Whether the run scored documents of `dataFile` (its results name the data file). */
function scored(run: LoadedRun, dataFile: string): boolean {
  return run.results.models.some((m) =>
    m.benchmarks.some((b) => b.data_file !== undefined && path.resolve(b.data_file) === path.resolve(dataFile)),
  );
}

/** A bounded walk of the folders: YAML files, `*.diag.jsonl`, and folders with config.json and tokenizer.json. */
export async function scanFolders(roots: readonly string[]): Promise<FoundFiles> {
  const found: FoundFiles = { taskFiles: [], datasetFiles: [], modelFolders: [] };
  let budget = SCAN_ENTRIES;
  const walk = async (dir: string, depth: number): Promise<void> => {
    if (depth > SCAN_DEPTH || budget <= 0) return;
    const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
    budget -= entries.length;
    const names = new Set(entries.map((e) => e.name));
    if (names.has("config.json") && names.has("tokenizer.json")) found.modelFolders.push(dir);
    for (const e of entries) {
      const full = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (!e.name.startsWith(".") && !SKIPPED_FOLDERS.has(e.name)) await walk(full, depth + 1);
      } else if (e.name.endsWith(".diag.jsonl")) found.datasetFiles.push(full);
      else if (/\.ya?ml$/.test(e.name) && !e.name.endsWith(".bprof.yaml")) found.taskFiles.push(full);
    }
  };
  for (const root of roots) await walk(root, 0);
  return found;
}
