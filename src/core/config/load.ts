// From a config file on disk to a profile ready to compile: schema, then the files it names.
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES } from "../analysis/bootstrap";
import { errorsOf, fileDiagnostic, type Diagnostic } from "../diagnostics";
import { loadTask, type Task } from "../datasets/task";
import { isFile } from "../fsutil";
import { modelFolderProblems } from "../model/folder";
import { checkAbilitySection, DEFAULT_SEED, type ResolvedAbility, type ResolvedAblation } from "./abilities";
import { parseConfig } from "./parse";
import type { Dtype } from "./types";

export type { ResolvedAbility, ResolvedAblation } from "./abilities";

export interface ResolvedModel {
  name: string;
  path: string;
  dtype: Dtype;
}

export interface ResolvedBenchmark {
  name: string;
  task: Task;
}

export interface Profile {
  configFile: string;
  configText: string;
  outputDir: string;
  device: string;
  threads?: number;
  models: ResolvedModel[];
  benchmarks: ResolvedBenchmark[];
  /** Empty: the run scores the benchmarks only (`score`); otherwise it profiles (`profile`). */
  abilities: ResolvedAbility[];
  /** Present exactly when `abilities` is not empty. */
  ablation?: ResolvedAblation;
  /** Seed of the random control and of the bootstrap resamples. */
  seed: number;
  bootstrap: { resamples: number; confidence: number };
}

export interface LoadedProfile {
  profile?: Profile;
  diagnostics: Diagnostic[];
}

export interface LoadOptions {
  /** The config's own text (an unsaved editor buffer) instead of the file's. */
  text?: string;
  /**
   * Checking for a run: what this version could not run would be an error, not a warning. No
   * check depends on it now that generate_until benchmarks run too.
   */
  forRun?: boolean;
}

/** Reads, parses and checks a config and everything it names. */
export async function loadProfile(configFile: string, options: LoadOptions = {}): Promise<LoadedProfile> {
  let text = options.text;
  const file = path.resolve(configFile);
  if (text === undefined) {
    try {
      text = await fs.readFile(file, "utf8");
    } catch {
      return { diagnostics: [fileDiagnostic(file, `cannot read the config file: ${file}`)] };
    }
  }
  const parsed = parseConfig(text, file);
  if (!parsed.config) return { diagnostics: parsed.diagnostics };
  const { config, source } = parsed;
  const diagnostics = [...parsed.diagnostics];
  const root = path.dirname(file);

  const models: ResolvedModel[] = [];
  for (const [i, model] of config.models.entries()) {
    const dir = path.resolve(root, model.path);
    for (const problem of await modelFolderProblems(dir)) diagnostics.push(source.at(["models", i, "path"], "error", problem.message));
    models.push({ name: model.name ?? path.basename(dir), path: dir, dtype: model.dtype ?? "float32" });
  }

  const benchmarks: ResolvedBenchmark[] = [];
  for (const [i, benchmark] of config.benchmarks.entries()) {
    const taskFile = path.resolve(root, benchmark.task);
    if (!(await isFile(taskFile))) {
      diagnostics.push(source.at(["benchmarks", i, "task"], "error", `task file not found: ${taskFile}`));
      continue;
    }
    const loaded = await loadTask(taskFile, { ...(benchmark.limit ? { limit: benchmark.limit } : {}), ...(benchmark.num_fewshot !== undefined ? { numFewshot: benchmark.num_fewshot } : {}) });
    diagnostics.push(...loaded.diagnostics);
    if (errorsOf(loaded.diagnostics).length > 0) {
      diagnostics.push(source.at(["benchmarks", i, "task"], "error", `the task ${path.basename(taskFile)} has errors (see ${taskFile})`));
    }
    if (loaded.task) benchmarks.push({ name: benchmark.name ?? loaded.task.name, task: loaded.task });
  }

  diagnostics.push(...duplicateNameDiagnostics(models.map((m) => m.name), (i) => source.at(["models", i], "error", `model name \`${models[i]!.name}\` is used twice; set \`name\` to tell them apart`)));
  diagnostics.push(...duplicateNameDiagnostics(benchmarks.map((b) => b.name), (i) => source.at(["benchmarks", i], "error", `benchmark name \`${benchmarks[i]!.name}\` is used twice; set \`name\` to tell them apart`)));

  const benchmarkTexts = benchmarks.flatMap((b) =>
    b.task.items.map((item) => ({ benchmark: b.name, docIndex: item.index, text: item.kind === "multiple_choice" ? `${item.context} ${item.choices.join(" ")}` : `${item.context} ${item.target}` })),
  );
  const abilitySection = await checkAbilitySection(config, source, { root, models, benchmarkTexts });
  diagnostics.push(...abilitySection.diagnostics);

  if (errorsOf(diagnostics).length > 0) return { diagnostics };
  const profile: Profile = {
    configFile: file,
    configText: text,
    outputDir: path.resolve(root, config.output ?? ".bprof"),
    device: config.device ?? "cpu",
    models,
    benchmarks,
    abilities: abilitySection.abilities,
    ...(abilitySection.ablation && abilitySection.abilities.length > 0 ? { ablation: abilitySection.ablation } : {}),
    seed: config.seed ?? DEFAULT_SEED,
    bootstrap: { resamples: config.bootstrap?.resamples ?? DEFAULT_RESAMPLES, confidence: config.bootstrap?.confidence ?? DEFAULT_CONFIDENCE },
    ...(config.threads !== undefined ? { threads: config.threads } : {}),
  };
  return { profile, diagnostics };
}

function duplicateNameDiagnostics(names: string[], report: (index: number) => Diagnostic): Diagnostic[] {
  const seen = new Set<string>();
  return names.flatMap((name, i) => (seen.has(name) ? [report(i)] : (seen.add(name), [])));
}
