// From a config file on disk to a profile ready to compile: schema, then the files it names (its
// benchmarks loaded by benchmarks.ts, its abilities checked by abilities.ts), its target and output.
import { constants as fsConstants, promises as fs } from "node:fs";
import * as path from "node:path";
import { nearMissAbility } from "../diagnostic/paperAbilities";
import { DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES } from "../analysis/bootstrap";
import { DEFAULT_CORRECTION, DEFAULT_FDR, type Correction } from "../analysis/multipleComparisons";
import { DEFAULT_MIN_EFFECT } from "../analysis/power";
import { errorsOf, fileProblem, notUtf8Problem, problemAt, type Problem, type ProblemPlace } from "../base/problems";
import { loadDiagnosticDataset } from "../diagnostic/dataset";
import { buildBenchmarkIndex, type BenchmarkText } from "../diagnostic/contamination";
import { loadTask } from "../lmeval/task";
import type { ResolvedGroup } from "../lmeval/group";
import { diskFiles, isDirectory, isFile, isWithinFolder, type TextFiles } from "../base/fsutil";
import { readsLocalFiles, resolveTarget, type Target } from "./target";
import { shardProblems, shardSetting, type ShardSetting } from "./shards";
import { resolveGpu, type ResolvedGpu } from "./gpu";
import { modelFolderProblems } from "../model/folder";
import { modelFolderName } from "./modelFolder";
import { readGenerationEos, resolveMaxLength } from "../model/modelSettings";
import { acceptsSystemMessage, itemChatContexts, renderDiagnosticChat, type ChatSettings } from "../prompts/chatPrompt";
import { loadChatTemplate } from "../prompts/chatTemplate";
import { checkAbilitySection, DEFAULT_SEED, type ResolvedAbility, type ResolvedAblation } from "./abilities";
import { loadBenchmarks } from "./benchmarks";
import { benchmarkPowers, powerProblems, type BenchmarkPower, type RunBaselines } from "./power";
import { parseConfig } from "./parse";
import type { YamlSource } from "../base/yamlSource";
import type { ProfileConfig } from "./types";
import { expectedAbilities, type ProfileInputs, type ResolvedBenchmark, type ResolvedModel } from "./resolved";

export type { ProfileInputs, ResolvedBenchmark, ResolvedModel } from "./resolved";

export type { ResolvedAbility, ResolvedAblation } from "./abilities";
export type { ResolvedGroup } from "../lmeval/group";

export interface Profile {
  configFile: string;
  configText: string;
  outputDir: string;
  device: string;
  /** The GPU `device` (each of the shards' `devices`) is, where the config names one (config/gpu.ts). */
  gpu?: ResolvedGpu;
  threads?: number;
  /** Each model's profile split into shards run side by side (config/shards.ts); absent: one runner. */
  shards?: ShardSetting;
  target: Target;
  models: ResolvedModel[];
  benchmarks: ResolvedBenchmark[];
  /** The lm-eval groups named by name (and the groups in them) that lm-eval scores as a whole; absent when none. */
  groups?: ResolvedGroup[];
  /** Empty: the run scores the benchmarks only (`score`); otherwise it profiles (`profile`). */
  abilities: ResolvedAbility[];
  /** Present exactly when `abilities` is not empty. */
  ablation?: ResolvedAblation;
  /** Seed of the random control and of the bootstrap resamples. */
  seed: number;
  bootstrap: { resamples: number; confidence: number };
  /** Which cells are starred, and the effect each benchmark should detect (the config's `stats`, defaults filled in). */
  stats: { correction: Correction; threshold: number; minEffect: number };
}

export interface LoadedProfile {
  /** Present when there is no error. */
  profile?: Profile;
  problems: Problem[];
  /**
   * What could be resolved even when there are errors, for the editor (hovers, the Profiles
   * tree): the models, benchmarks and abilities that loaded. Empty when the config does not parse.
   */
  resolved: ResolvedParts;
  /**
   * The smallest AIS each loaded benchmark detects (config/power.ts), at the newest run's baselines
   * when `baselines` was given, else at assumed ones; absent when the config does not parse.
   */
  power?: BenchmarkPower[];
}

export interface ResolvedParts {
  models: ResolvedModel[];
  benchmarks: (ResolvedBenchmark & { entry: number })[];
  abilities: ResolvedAbility[];
}

export function directInputs(files: TextFiles = diskFiles): ProfileInputs {
  return {
    files,
    task: (file, options) => loadTask(file, options, files),
    dataset: (file, options) => loadDiagnosticDataset(file, options, files),
    benchmarkIndex: (benchmarks) => {
      const texts = benchmarkTexts(benchmarks);
      return texts.length > 0 ? buildBenchmarkIndex(texts) : undefined;
    },
  };
}

/**
 * Every benchmark document as one text (context and choices, or context and target), for the
 * contamination check; in the multiple-input form, the continuation the choices share too.
 */
export function benchmarkTexts(benchmarks: readonly ResolvedBenchmark[]): BenchmarkText[] {
  return benchmarks.flatMap((b) =>
    b.task.items.map((item) => ({
      benchmark: b.name,
      docIndex: item.index,
      text:
        item.kind === "multiple_choice"
          ? `${item.context} ${item.choices.join(" ")}${item.multipleInput ? ` ${item.multipleInput.targetText}` : ""}`
          : `${item.context} ${item.target}`,
    })),
  );
}

export interface LoadOptions {
  /** The config's own text (an unsaved editor buffer) instead of the file's. */
  text?: string;
  inputs?: ProfileInputs;
  /**
   * The baselines of the config's newest finished run (run/baselines.ts reads them), for the power
   * figures and their `config.low-power` warnings; without them each benchmark's baseline is assumed.
   */
  baselines?: RunBaselines;
}

const NOTHING_RESOLVED: ResolvedParts = { models: [], benchmarks: [], abilities: [] };

/** Reads, parses and checks a config and everything it names. */
export async function loadProfile(configFile: string, options: LoadOptions = {}): Promise<LoadedProfile> {
  const inputs = options.inputs ?? directInputs();
  let text = options.text;
  const file = path.resolve(configFile);
  if (text === undefined) {
    try {
      text = await inputs.files.read(file);
    } catch (e) {
      return {
        problems: [notUtf8Problem(file, e, "the config") ?? fileProblem(file, "file.unreadable", `cannot read the config file: ${file}`)],
        resolved: NOTHING_RESOLVED,
      };
    }
  }
  const parsed = parseConfig(text, file);
  if (!parsed.config) return { problems: parsed.problems, resolved: NOTHING_RESOLVED };
  const { config, source } = parsed;
  const problems = [...parsed.problems];
  const root = path.dirname(file);

  const target = resolveTarget(config.target, root);
  problems.push(...(await targetProblems(config, source, target)));
  problems.push(...shardProblems(config, source, target));
  const gpu = resolveGpu(config, source);
  problems.push(...gpu.problems);
  problems.push(
    ...(await outputProblems(
      path.resolve(root, config.output ?? ".bprof"),
      config.output !== undefined ? source.place(["output"]) : { file, line: 1, column: 1 },
      root,
    )),
  );

  const models: ResolvedModel[] = [];
  const maxLengthFrom: string[] = [];
  for (const [i, model] of config.models.entries()) {
    const dir = path.resolve(root, model.path);
    // On a remote target the weights are read there; this machine needs what prompts are made from.
    const weightsHere = readsLocalFiles(target) && model.remote_path === undefined;
    for (const problem of await modelFolderProblems(dir, { weights: weightsHere })) {
      problems.push(source.at(["models", i, "path"], "config.model-folder", problem.message, { data: { file: problem.file } }));
    }
    const resolved: ResolvedModel = {
      name: model.name ?? path.basename(dir),
      path: dir,
      dtype: model.dtype ?? "float32",
      ...(model.add_bos_token !== undefined ? { addBosToken: model.add_bos_token } : {}),
      ...(model.remote_path !== undefined && target.kind !== "local" ? { remotePath: model.remote_path } : {}),
    };
    if (model.remote_path !== undefined && target.kind === "local") {
      problems.push(
        source.at(
          ["models", i, "remote_path"],
          "config.no-effect",
          "`remote_path` has no effect with the local target: the runner reads `path` on this machine",
        ),
      );
    }
    if (await isDirectory(dir)) {
      problems.push(...(await readGenerationEos(dir)).problems);
      const maxLength = await resolveMaxLength(dir, model.max_length);
      resolved.maxLength = maxLength.value;
      maxLengthFrom[i] = maxLength.from;
      const chat = await chatSettings(model, i, dir, source, problems);
      if (chat) resolved.chat = chat;
    }
    if (model.fewshot_as_multiturn && !model.chat_template) {
      problems.push(
        source.at(
          ["models", i, "fewshot_as_multiturn"],
          "config.fewshot-needs-chat",
          "`fewshot_as_multiturn` lays out few-shot examples as chat turns: it needs `chat_template` (as lm-eval's --fewshot_as_multiturn needs --apply_chat_template)",
        ),
      );
    }
    models.push(resolved);
  }

  const groups: ResolvedGroup[] = [];
  const benchmarks = await loadBenchmarks(config, source, inputs, problems, groups);
  problems.push(...windowProblems(config, source, models, maxLengthFrom, benchmarks));
  problems.push(...chatProbeProblems(source, models, benchmarks));
  const power = benchmarkPowers(benchmarks, {
    confidence: config.bootstrap?.confidence ?? DEFAULT_CONFIDENCE,
    minEffect: config.stats?.min_effect ?? DEFAULT_MIN_EFFECT,
    ...(options.baselines ? { baselines: options.baselines } : {}),
  });
  problems.push(...powerProblems(source, power));

  problems.push(
    ...duplicateNameProblems(
      models.map((m) => modelFolderName(m.name)),
      (i) => {
        const first = models.find((m) => modelFolderName(m.name) === modelFolderName(models[i]!.name))!;
        const message =
          first.name === models[i]!.name
            ? `model name \`${models[i]!.name}\` is used twice; set \`name\` to tell them apart`
            : `model names \`${first.name}\` and \`${models[i]!.name}\` share the run's folder models/${modelFolderName(first.name)}; set \`name\` to tell them apart`;
        return source.at(["models", i], "config.duplicate-name", message);
      },
    ),
  );
  problems.push(
    ...duplicateNameProblems(
      benchmarks.map((b) => b.name),
      (i) =>
        source.at(
          ["benchmarks", benchmarks[i]!.entry],
          "config.duplicate-name",
          `benchmark name \`${benchmarks[i]!.name}\` is used twice; set \`name\` to tell them apart`,
        ),
    ),
  );

  const abilitySection = await checkAbilitySection(config, source, { root, models, benchmarks, inputs });
  problems.push(...abilitySection.problems);
  problems.push(
    ...labelProblems(
      config,
      source,
      abilitySection.abilities.map((a) => a.name),
    ),
  );
  problems.push(
    ...expectsProblems(
      config,
      source,
      abilitySection.abilities.map((a) => a.name),
    ),
  );
  for (const [m, model] of models.entries()) {
    const first = abilitySection.abilities.find((a) => a.items.length > 0)?.items[0];
    if (!model.chat || !first) continue;
    try {
      renderDiagnosticChat(first, model.chat.template);
    } catch (e) {
      problems.push(
        source.at(["models", m, "chat_template"], "config.chat-template", `diagnostic item ${first.id}: ${(e as Error).message}`),
      );
    }
  }

  const resolved: ResolvedParts = { models, benchmarks, abilities: abilitySection.abilities };
  if (errorsOf(problems).length > 0) return { problems, resolved, power };
  const shards = shardSetting(config);
  const profile: Profile = {
    configFile: file,
    configText: text,
    outputDir: path.resolve(root, config.output ?? ".bprof"),
    // with `devices`, the whole job (and the merge that finishes it) names the first
    device: config.device ?? config.devices?.[0] ?? "cpu",
    ...(gpu.gpu ? { gpu: gpu.gpu } : {}),
    target,
    models,
    benchmarks,
    ...(groups.length > 0 ? { groups } : {}),
    abilities: abilitySection.abilities,
    ...(abilitySection.ablation && abilitySection.abilities.length > 0 ? { ablation: abilitySection.ablation } : {}),
    seed: config.seed ?? DEFAULT_SEED,
    bootstrap: {
      resamples: config.bootstrap?.resamples ?? DEFAULT_RESAMPLES,
      confidence: config.bootstrap?.confidence ?? DEFAULT_CONFIDENCE,
    },
    stats: {
      correction: config.stats?.correction ?? DEFAULT_CORRECTION,
      threshold: config.stats?.fdr ?? DEFAULT_FDR,
      minEffect: config.stats?.min_effect ?? DEFAULT_MIN_EFFECT,
    },
    ...(config.threads !== undefined ? { threads: config.threads } : {}),
    ...(shards && abilitySection.abilities.length > 0 ? { shards } : {}),
  };
  return { profile, problems, resolved, power };
}

/**
 * ssh_config keywords that make ssh run a local command or load a library. A config is a file
 * anyone can hand over; these belong in ~/.ssh/config, which the user wrote and trusts.
 */
const SSH_OPTIONS_THAT_RUN_COMMANDS = [
  "ProxyCommand",
  "LocalCommand",
  "PermitLocalCommand",
  "KnownHostsCommand",
  "RemoteCommand",
  "Match",
  "Include",
  "PKCS11Provider",
  "SecurityKeyProvider",
];

const YES_NO = /^(yes|no)$/i;
const COUNT = /^[0-9]{1,6}$/;
/** A host name, an IPv4 address or an IPv6 one in brackets: never a leading dash, no shell characters. */
const HOST = String.raw`(?:[A-Za-z0-9_][A-Za-z0-9_.-]*|\[[0-9A-Fa-f:.]+\])`;
const USER = String.raw`[A-Za-z0-9_][A-Za-z0-9_.-]*`;
const JUMP = String.raw`(?:${USER}@)?${HOST}(?::[0-9]{1,5})?`;
/** A local path, ~/... or absolute or relative: no %-tokens, ${...}, spaces or shell characters. */
const PATH_VALUE = /^(?:~\/)?[A-Za-z0-9_.+/-]+$/;
/** Algorithm lists: names, commas, and the +, - or ^ in front that adds, removes or prefers. */
const ALGORITHMS = /^[+^-]?[A-Za-z0-9_.@-]+(?:,[A-Za-z0-9_.@-]+)*$/;

/**
 * The ssh options a config may set, each with the values it may take. Anything else, and any value
 * with a character ssh or a shell would read as more than text (%-tokens, $, backquotes, spaces,
 * line breaks), is refused: ssh turns some options into a command for sh (ProxyJump), runs others
 * (XAuthLocation with ForwardX11), and a config is a file anyone can hand over.
 */
const SSH_OPTIONS_ALLOWED: Record<string, { value: RegExp; expected: string }> = {
  Port: { value: /^[0-9]{1,5}$/, expected: "a port number" },
  User: { value: new RegExp(`^${USER}$`), expected: "a user name" },
  IdentityFile: { value: PATH_VALUE, expected: "a file path without %-tokens, spaces or shell characters" },
  IdentitiesOnly: { value: YES_NO, expected: "yes or no" },
  ProxyJump: {
    value: new RegExp(`^(?:none|${JUMP}(?:,${JUMP})*)$`),
    expected: "comma-separated [user@]host[:port] items (or none)",
  },
  ConnectTimeout: { value: COUNT, expected: "a number of seconds" },
  ConnectionAttempts: { value: COUNT, expected: "a number" },
  ServerAliveInterval: { value: COUNT, expected: "a number of seconds" },
  ServerAliveCountMax: { value: COUNT, expected: "a number" },
  StrictHostKeyChecking: { value: /^(yes|no|accept-new|off|ask)$/i, expected: "yes, no, accept-new, off or ask" },
  UserKnownHostsFile: { value: PATH_VALUE, expected: "a file path without %-tokens, spaces or shell characters" },
  Ciphers: { value: ALGORITHMS, expected: "a comma-separated list of algorithm names" },
  MACs: { value: ALGORITHMS, expected: "a comma-separated list of algorithm names" },
  KexAlgorithms: { value: ALGORITHMS, expected: "a comma-separated list of algorithm names" },
  HostKeyAlgorithms: { value: ALGORITHMS, expected: "a comma-separated list of algorithm names" },
  Compression: { value: YES_NO, expected: "yes or no" },
  BatchMode: { value: YES_NO, expected: "yes or no" },
  LogLevel: { value: /^(quiet|fatal|error|info|verbose|debug[1-3]?)$/i, expected: "QUIET, FATAL, ERROR, INFO, VERBOSE or DEBUG1-3" },
  AddressFamily: { value: /^(any|inet|inet6)$/i, expected: "any, inet or inet6" },
};

/** The problem of one `options` entry, on its key (a keyword not allowed) or its value; undefined when it may be passed. */
function sshOptionProblem(source: YamlSource, field: (string | number)[], key: string, value: string): Problem | undefined {
  const runsCommands = SSH_OPTIONS_THAT_RUN_COMMANDS.find((k) => k.toLowerCase() === key.toLowerCase());
  if (runsCommands)
    return source.at(
      field,
      "config.ssh-option-runs-commands",
      `ssh's ${runsCommands} runs a command or loads code on this machine: a profiling config cannot set it. Put it in ~/.ssh/config under a Host alias and name that alias in \`host\``,
      { on: "key" },
    );
  // ssh reads keywords in any case.
  const keyword = Object.keys(SSH_OPTIONS_ALLOWED).find((k) => k.toLowerCase() === key.toLowerCase());
  if (!keyword)
    return source.at(
      field,
      "config.ssh-option-not-allowed",
      `\`${key}\` is not one bprof passes to ssh from a config (it takes ${Object.keys(SSH_OPTIONS_ALLOWED).join(", ")}): some options run programs on this machine. Put it in ~/.ssh/config under a Host alias and name that alias in \`host\``,
      { on: "key" },
    );
  const allowed = SSH_OPTIONS_ALLOWED[keyword]!;
  if (allowed.value.test(value)) return undefined;
  return source.at(
    field,
    "config.ssh-option-value",
    `ssh's ${keyword} must be ${allowed.expected}; ${JSON.stringify(value)} is not (a config cannot pass %-tokens, $, backquotes, spaces or other shell characters to ssh)`,
    { on: "value" },
  );
}

/** What can be checked of a target before a run: the ssh options it passes, the local files it names. */
async function targetProblems(config: ProfileConfig, source: YamlSource, target: Target): Promise<Problem[]> {
  const connection =
    target.kind === "ssh"
      ? target.host.connection
      : target.kind === "slurm" && target.host.kind === "ssh"
        ? target.host.connection
        : undefined;
  if (!connection) return [];
  const sshField = typeof config.target === "object" && "ssh" in config.target ? ["target", "ssh"] : ["target", "slurm", "ssh"];
  const problems = Object.entries(connection.options).flatMap(([key, value]) => {
    const problem = sshOptionProblem(source, [...sshField, "options", key], key, value);
    return problem ? [problem] : [];
  });
  if (connection.identityFile && !(await isFile(connection.identityFile))) {
    problems.push(
      source.at([...sshField, "identity_file"], "config.identity-file-not-found", `identity file not found: ${connection.identityFile}`),
    );
  }
  return problems;
}

/**
 * Whether runs can be written under `output`: the folder, or the closest folder above it that
 * exists, must be a folder this process may write into. `at` is where the problem goes (the
 * `output` key, or the file's start when the default is used).
 */
async function outputProblems(outputDir: string, at: ProblemPlace, configDir: string): Promise<Problem[]> {
  const leaving = await linkOutOf(configDir, outputDir);
  if (leaving)
    return [
      problemAt(
        { ...at, field: "output" },
        "config.output",
        `output ${outputDir} lies in the config's folder but ${leaving} is a link out of it (to ${await fs.realpath(leaving)}): runs would be written there; ` +
          "write the folder it leads to in `output` if that is where runs should go, or remove the link",
      ),
    ];
  let existing = outputDir;
  while (
    !(await fs.stat(existing).then(
      () => true,
      () => false,
    ))
  )
    existing = path.dirname(existing);
  const problem = (message: string) => [problemAt({ ...at, field: "output" }, "config.output", message)];
  if (!(await isDirectory(existing))) {
    return problem(
      existing === outputDir
        ? `output ${outputDir} is a file, not a folder: choose another folder for the runs`
        : `output ${outputDir} cannot be made: ${existing} is a file`,
    );
  }
  const writable = await fs.access(existing, fsConstants.W_OK | fsConstants.X_OK).then(
    () => true,
    () => false,
  );
  return writable ? [] : problem(`output ${outputDir} cannot be written: no permission to write in ${existing}`);
}

/**
 * The first link on the way from `dir` down to `inner` (a path under it) that leads out of `dir`:
 * a repository that ships `.bprof` as a link to a folder of the user's would have runs written
 * there, while the config seems to keep them beside itself. Undefined when there is none, or
 * `inner` does not lie under `dir` as written (a folder the config names outright).
 */
async function linkOutOf(dir: string, inner: string): Promise<string | undefined> {
  if (!isWithinFolder(dir, inner)) return undefined;
  const realDir = await fs.realpath(dir).catch(() => dir);
  let current = dir;
  for (const part of path
    .relative(dir, inner)
    .split(path.sep)
    .filter((p) => p !== "")) {
    current = path.join(current, part);
    const stat = await fs.lstat(current).catch(() => undefined);
    if (stat === undefined) return undefined;
    if (stat.isSymbolicLink() && !isWithinFolder(realDir, await fs.realpath(current).catch(() => current))) return current;
  }
  return undefined;
}

/** A benchmark's `ability` label must name one of the config's abilities, or it could never be checked. */
function labelProblems(config: ProfileConfig, source: YamlSource, abilities: readonly string[]): Problem[] {
  return config.benchmarks.flatMap((benchmark, i) => {
    const label = benchmark.ability;
    if (label === undefined || abilities.includes(label)) return [];
    const at = ["benchmarks", i, "ability"];
    if (abilities.length === 0)
      return [
        source.at(at, "config.no-effect", "`ability` labels have no effect without `abilities`: there is no profile to check them against"),
      ];
    const guess = nearMissAbility(label, abilities);
    return [
      source.at(
        at,
        "config.unknown-label",
        `\`${label}\` is not one of this config's abilities${guess ? `: did you mean \`${guess}\`?` : ` (${abilities.map((a) => `\`${a}\``).join(", ")})`}`,
        guess ? { data: { suggestion: guess } } : {},
      ),
    ];
  });
}

/** Each ability a benchmark `expects` must be one of the config's abilities, or it could never be set against the profile. */
function expectsProblems(config: ProfileConfig, source: YamlSource, abilities: readonly string[]): Problem[] {
  return config.benchmarks.flatMap((benchmark, i) => {
    const expects = benchmark.expects;
    if (expects === undefined) return [];
    if (abilities.length === 0)
      return [
        source.at(
          ["benchmarks", i, "expects"],
          "config.no-effect",
          "`expects` has no effect without `abilities`: there is no profile to set it against",
          { on: "key" },
        ),
      ];
    const listed = Array.isArray(expects);
    return expectedAbilities(expects).flatMap(({ ability }, j) => {
      if (abilities.includes(ability)) return [];
      const guess = nearMissAbility(ability, abilities);
      return [
        source.at(
          ["benchmarks", i, "expects", listed ? j : ability],
          "config.unknown-expected-ability",
          `\`${ability}\` is not one of this config's abilities${guess ? `: did you mean \`${guess}\`?` : ` (${abilities.map((a) => `\`${a}\``).join(", ")})`}`,
          { ...(listed ? {} : { on: "key" as const }), ...(guess ? { data: { suggestion: guess } } : {}) },
        ),
      ];
    });
  });
}

function duplicateNameProblems(names: string[], report: (index: number) => Problem): Problem[] {
  const seen = new Set<string>();
  return names.flatMap((name, i) => (seen.has(name) ? [report(i)] : (seen.add(name), [])));
}

/**
 * The chat settings of models[i] when its entry asks for the template; a positioned error on
 * `chat_template` when the folder has none (or not the named one), errors inside the model's files
 * where they are.
 */
async function chatSettings(
  model: ProfileConfig["models"][number],
  i: number,
  dir: string,
  source: YamlSource,
  problems: Problem[],
): Promise<ChatSettings | undefined> {
  if (model.chat_template === undefined || model.chat_template === false) return undefined;
  const name = typeof model.chat_template === "string" ? model.chat_template : undefined;
  const lookup = await loadChatTemplate(dir, name);
  problems.push(...lookup.problems);
  if (lookup.problem) problems.push(source.at(["models", i, "chat_template"], "config.chat-template", lookup.problem));
  if (!lookup.template) return undefined;
  return { template: lookup.template, fewshotAsMultiturn: model.fewshot_as_multiturn === true };
}

/**
 * lm-eval's generate_until needs room for the context: max_gen_toks must be below the model's max
 * length (its assertion); reported on the model's `max_length` when the config sets it, else on
 * the benchmark.
 */
function windowProblems(
  config: ProfileConfig,
  source: YamlSource,
  models: ResolvedModel[],
  maxLengthFrom: string[],
  benchmarks: (ResolvedBenchmark & { entry: number })[],
): Problem[] {
  const problems: Problem[] = [];
  models.forEach((model, m) => {
    if (model.maxLength === undefined) return;
    benchmarks.forEach((benchmark) => {
      const maxGenToks = benchmark.task.generation?.maxGenToks;
      if (maxGenToks === undefined || maxGenToks < model.maxLength!) return;
      const at = config.models[m]!.max_length !== undefined ? ["models", m, "max_length"] : ["benchmarks", benchmark.entry, "task"];
      problems.push(
        source.at(
          at,
          "config.window-too-small",
          `benchmark \`${benchmark.name}\` generates up to max_gen_toks = ${maxGenToks} tokens, which leaves no room for its context in model \`${model.name}\`'s max length ${model.maxLength} (${maxLengthFrom[m] ?? "max_length"}): ` +
            "lower `generation_kwargs.max_gen_toks` of the task or raise `max_length`",
        ),
      );
    });
  });
  return problems;
}

/**
 * A chat template is Jinja that may refuse a conversation at render time (roles that must
 * alternate, a missing variable): each chat model renders the first document of every benchmark
 * now, so such a template is an error on the config's `chat_template` rather than a failure
 * halfway through a run. A template that refuses a system message gets a warning when a benchmark
 * has a description, which becomes one: lm-eval then leaves the description out, and so does the
 * profiler.
 */
function chatProbeProblems(source: YamlSource, models: ResolvedModel[], benchmarks: ResolvedBenchmark[]): Problem[] {
  const problems: Problem[] = [];
  models.forEach((model, m) => {
    if (!model.chat) return;
    const at = ["models", m, "chat_template"];
    const described = benchmarks.filter((b) => b.task.items.some((item) => item.prompt.description !== ""));
    if (described.length > 0 && !acceptsSystemMessage(model.chat.template)) {
      problems.push(
        source.at(
          at,
          "config.chat-drops-description",
          `the chat template of ${model.chat.template.origin} refuses a system message: the descriptions of ${described.map((b) => `\`${b.name}\``).join(", ")} are left out for this model, as lm-eval leaves them out`,
        ),
      );
    }
    for (const benchmark of benchmarks) {
      const first = benchmark.task.items[0];
      if (!first) continue;
      try {
        itemChatContexts(first, benchmark.task, model.chat);
      } catch (e) {
        problems.push(
          source.at(at, "config.chat-template", `benchmark \`${benchmark.name}\`, document ${first.index}: ${(e as Error).message}`),
        );
        break;
      }
    }
  });
  return problems;
}
