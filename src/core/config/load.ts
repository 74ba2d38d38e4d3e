// From a config file on disk to a profile ready to compile: schema, then the files it names.
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { nearMissAbility } from "../abilities";
import { DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES } from "../analysis/bootstrap";
import { errorsOf, fileDiagnostic, type Diagnostic } from "../diagnostics";
import { loadInlineTask, loadTask, type Task } from "../datasets/task";
import { isDirectory, isFile } from "../fsutil";
import { readsLocalFiles, resolveTarget, type Target } from "../launch/target";
import { modelFolderProblems } from "../model/folder";
import { readGenerationEos, resolveMaxLength } from "../model/modelSettings";
import { acceptsSystemMessage, benchmarkChatContext, renderDiagnosticChat, type ChatSettings } from "../prompts/chatPrompt";
import { loadChatTemplate } from "../prompts/chatTemplate";
import { checkAbilitySection, DEFAULT_SEED, type ResolvedAbility, type ResolvedAblation } from "./abilities";
import { parseConfig } from "./parse";
import type { YamlSource } from "../yamlSource";
import type { Dtype, ProfileConfig } from "./types";

export type { ResolvedAbility, ResolvedAblation } from "./abilities";

export interface ResolvedModel {
  name: string;
  path: string;
  dtype: Dtype;
  /** The chat template and how to lay out few-shot examples, when the config asks for the template. */
  chat?: ChatSettings;
  /**
   * The longest sequence the model reads (lm-eval's max_length): the config's `max_length`, else
   * the model's window (model/modelSettings.ts). Benchmark contexts are cut from the left to fit.
   * Absent (a model made in code): nothing is cut.
   */
  maxLength?: number;
  /** Where the folder is on an ssh or slurm target, when the config says (absolute or ~/...). */
  remotePath?: string;
}

export interface ResolvedBenchmark {
  name: string;
  task: Task;
  /** The ability the config labels it with (one of the profile's abilities). */
  ability?: string;
}

export interface Profile {
  configFile: string;
  configText: string;
  outputDir: string;
  device: string;
  threads?: number;
  target: Target;
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

  const target = resolveTarget(config.target, root);
  diagnostics.push(...(await targetDiagnostics(config, source, target)));

  const models: ResolvedModel[] = [];
  const maxLengthFrom: string[] = [];
  for (const [i, model] of config.models.entries()) {
    const dir = path.resolve(root, model.path);
    // On a remote target the weights are read there; this machine needs what prompts are made from.
    const weightsHere = readsLocalFiles(target) && model.remote_path === undefined;
    const problems = await modelFolderProblems(dir, { weights: weightsHere });
    for (const problem of problems) diagnostics.push(source.at(["models", i, "path"], "error", problem.message));
    const resolved: ResolvedModel = {
      name: model.name ?? path.basename(dir), path: dir, dtype: model.dtype ?? "float32",
      ...(model.remote_path !== undefined && target.kind !== "local" ? { remotePath: model.remote_path } : {}),
    };
    if (model.remote_path !== undefined && target.kind === "local") {
      diagnostics.push(source.at(["models", i, "remote_path"], "warning", "`remote_path` has no effect with the local target: the runner reads `path` on this machine"));
    }
    if (await isDirectory(dir)) {
      diagnostics.push(...(await readGenerationEos(dir)).diagnostics);
      const maxLength = await resolveMaxLength(dir, model.max_length);
      resolved.maxLength = maxLength.value;
      maxLengthFrom[i] = maxLength.from;
      const chat = await chatSettings(model, i, dir, source, diagnostics);
      if (chat) resolved.chat = chat;
    }
    if (model.fewshot_as_multiturn && !model.chat_template) {
      diagnostics.push(source.at(["models", i, "fewshot_as_multiturn"], "error", "`fewshot_as_multiturn` lays out few-shot examples as chat turns: it needs `chat_template` (as lm-eval's --fewshot_as_multiturn needs --apply_chat_template)"));
    }
    models.push(resolved);
  }

  const benchmarks: ResolvedBenchmark[] = [];
  /** The config entry of each resolved benchmark. */
  const benchmarkEntries: number[] = [];
  for (const [i, benchmark] of config.benchmarks.entries()) {
    const options = { ...(benchmark.limit ? { limit: benchmark.limit } : {}), ...(benchmark.num_fewshot !== undefined ? { numFewshot: benchmark.num_fewshot } : {}) };
    let loaded: Awaited<ReturnType<typeof loadTask>>;
    if (typeof benchmark.task === "string") {
      const taskFile = path.resolve(root, benchmark.task);
      if (!(await isFile(taskFile))) {
        diagnostics.push(source.at(["benchmarks", i, "task"], "error", `task file not found: ${taskFile}`));
        continue;
      }
      loaded = await loadTask(taskFile, options);
      if (errorsOf(loaded.diagnostics).length > 0) {
        diagnostics.push(source.at(["benchmarks", i, "task"], "error", `the task ${path.basename(taskFile)} has errors (see ${taskFile})`));
      }
    } else {
      // Inline: every diagnostic already points into this config.
      loaded = await loadInlineTask(benchmark.task, source, ["benchmarks", i, "task"], options);
    }
    diagnostics.push(...loaded.diagnostics);
    if (loaded.task) {
      benchmarks.push({ name: benchmark.name ?? loaded.task.name, task: loaded.task, ...(benchmark.ability ? { ability: benchmark.ability } : {}) });
      benchmarkEntries.push(i);
    }
  }
  diagnostics.push(...windowDiagnostics(config, source, models, maxLengthFrom, benchmarks, benchmarkEntries));
  diagnostics.push(...chatProbeDiagnostics(source, models, benchmarks));

  diagnostics.push(...duplicateNameDiagnostics(models.map((m) => m.name), (i) => source.at(["models", i], "error", `model name \`${models[i]!.name}\` is used twice; set \`name\` to tell them apart`)));
  diagnostics.push(...duplicateNameDiagnostics(benchmarks.map((b) => b.name), (i) => source.at(["benchmarks", i], "error", `benchmark name \`${benchmarks[i]!.name}\` is used twice; set \`name\` to tell them apart`)));

  const benchmarkTexts = benchmarks.flatMap((b) =>
    b.task.items.map((item) => ({ benchmark: b.name, docIndex: item.index, text: item.kind === "multiple_choice" ? `${item.context} ${item.choices.join(" ")}` : `${item.context} ${item.target}` })),
  );
  const abilitySection = await checkAbilitySection(config, source, { root, models, benchmarkTexts });
  diagnostics.push(...abilitySection.diagnostics);
  diagnostics.push(...labelDiagnostics(config, source, abilitySection.abilities.map((a) => a.name)));
  for (const [m, model] of models.entries()) {
    const first = abilitySection.abilities.find((a) => a.items.length > 0)?.items[0];
    if (!model.chat || !first) continue;
    try {
      renderDiagnosticChat(first, model.chat.template);
    } catch (e) {
      diagnostics.push(source.at(["models", m, "chat_template"], "error", `diagnostic item ${first.id}: ${(e as Error).message}`));
    }
  }

  if (errorsOf(diagnostics).length > 0) return { diagnostics };
  const profile: Profile = {
    configFile: file,
    configText: text,
    outputDir: path.resolve(root, config.output ?? ".bprof"),
    device: config.device ?? "cpu",
    target,
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

/** What can be checked of a target before a run: the local files it names. */
async function targetDiagnostics(config: ProfileConfig, source: YamlSource, target: Target): Promise<Diagnostic[]> {
  const connection = target.kind === "ssh" ? target.host.connection : target.kind === "slurm" && target.host.kind === "ssh" ? target.host.connection : undefined;
  if (!connection?.identityFile || (await isFile(connection.identityFile))) return [];
  const at = typeof config.target === "object" && "ssh" in config.target ? ["target", "ssh", "identity_file"] : ["target", "slurm", "ssh", "identity_file"];
  return [source.at(at, "error", `identity file not found: ${connection.identityFile}`)];
}

/** A benchmark's `ability` label must name one of the config's abilities, or it could never be checked. */
function labelDiagnostics(config: ProfileConfig, source: YamlSource, abilities: readonly string[]): Diagnostic[] {
  return config.benchmarks.flatMap((benchmark, i) => {
    const label = benchmark.ability;
    if (label === undefined || abilities.includes(label)) return [];
    const at = ["benchmarks", i, "ability"];
    if (abilities.length === 0) return [source.at(at, "warning", "`ability` labels have no effect without `abilities`: there is no profile to check them against")];
    const guess = nearMissAbility(label, abilities);
    return [source.at(at, "error", `\`${label}\` is not one of this config's abilities${guess ? `: did you mean \`${guess}\`?` : ` (${abilities.map((a) => `\`${a}\``).join(", ")})`}`)];
  });
}

function duplicateNameDiagnostics(names: string[], report: (index: number) => Diagnostic): Diagnostic[] {
  const seen = new Set<string>();
  return names.flatMap((name, i) => (seen.has(name) ? [report(i)] : (seen.add(name), [])));
}

/**
 * The chat settings of models[i] when its entry asks for the template; a positioned error on
 * `chat_template` when the folder has none (or not the named one), errors inside the model's files
 * where they are.
 */
async function chatSettings(model: ProfileConfig["models"][number], i: number, dir: string, source: YamlSource, diagnostics: Diagnostic[]): Promise<ChatSettings | undefined> {
  if (model.chat_template === undefined || model.chat_template === false) return undefined;
  const name = typeof model.chat_template === "string" ? model.chat_template : undefined;
  const lookup = await loadChatTemplate(dir, name);
  diagnostics.push(...lookup.diagnostics);
  if (lookup.problem) diagnostics.push(source.at(["models", i, "chat_template"], "error", lookup.problem));
  if (!lookup.template) return undefined;
  return { template: lookup.template, fewshotAsMultiturn: model.fewshot_as_multiturn === true };
}

/**
 * lm-eval's generate_until needs room for the context: max_gen_toks must be below the model's max
 * length (its assertion); reported on the model's `max_length` when the config sets it, else on
 * the benchmark.
 */
function windowDiagnostics(
  config: ProfileConfig, source: YamlSource, models: ResolvedModel[], maxLengthFrom: string[], benchmarks: ResolvedBenchmark[], entries: number[],
): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  models.forEach((model, m) => {
    if (model.maxLength === undefined) return;
    benchmarks.forEach((benchmark, b) => {
      const maxGenToks = benchmark.task.generation?.maxGenToks;
      if (maxGenToks === undefined || maxGenToks < model.maxLength!) return;
      const at = config.models[m]!.max_length !== undefined ? ["models", m, "max_length"] : ["benchmarks", entries[b]!, "task"];
      diagnostics.push(source.at(at, "error",
        `benchmark \`${benchmark.name}\` generates up to max_gen_toks = ${maxGenToks} tokens, which leaves no room for its context in model \`${model.name}\`'s max length ${model.maxLength} (${maxLengthFrom[m] ?? "max_length"}): ` +
        "lower `generation_kwargs.max_gen_toks` of the task or raise `max_length`"));
    });
  });
  return diagnostics;
}

/**
 * A chat template is Jinja that may refuse a conversation at render time (roles that must
 * alternate, a missing variable): each chat model renders the first document of every benchmark
 * now, so such a template is an error on the config's `chat_template` rather than a failure
 * halfway through a run. A template that refuses a system message gets a warning when a benchmark
 * has a description, which becomes one: lm-eval then leaves the description out, and so does the
 * profiler.
 */
function chatProbeDiagnostics(source: YamlSource, models: ResolvedModel[], benchmarks: ResolvedBenchmark[]): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  models.forEach((model, m) => {
    if (!model.chat) return;
    const at = ["models", m, "chat_template"];
    const described = benchmarks.filter((b) => b.task.items.some((item) => item.prompt.description !== ""));
    if (described.length > 0 && !acceptsSystemMessage(model.chat.template)) {
      diagnostics.push(source.at(at, "warning",
        `the chat template of ${model.chat.template.origin} refuses a system message: the descriptions of ${described.map((b) => `\`${b.name}\``).join(", ")} are left out for this model, as lm-eval leaves them out`));
    }
    for (const benchmark of benchmarks) {
      const first = benchmark.task.items[0];
      if (!first) continue;
      try {
        benchmarkChatContext(first.prompt, benchmark.task, model.chat);
      } catch (e) {
        diagnostics.push(source.at(at, "error", `benchmark \`${benchmark.name}\`, document ${first.index}: ${(e as Error).message}`));
        break;
      }
    }
  });
  return diagnostics;
}
