// One run of a profile: compile jobs, launch the runner per model, turn its scores into results.
// A config without abilities runs `score` (baseline accuracies); with abilities, `profile`
// (importance, ranking, ablation, AIS). A run folder can be resumed: the same job goes to the
// runner with the same --out, and the runner reads back what it already finished.
import { randomDrawsOf, rankingRuleCount } from "../config/abilities";
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { loadProfile, type Profile, type ResolvedBenchmark, type ResolvedModel } from "../config/load";
import { parseConfig } from "../config/parse";
import { fileSha256 } from "../base/fsutil";
import { ALL_METRICS as METRICS, type Metric } from "../analysis/ais";
import type { BenchmarkItem } from "../analysis/generation";
import { FLIPS_FILE, type FlipRecord } from "../report/load";
import { flipsAsDocuments } from "../report/model";
import type { RunProgress, VariantDone } from "../plan/progressText";
import { errorsOf, formatProblem } from "../base/problems";
import { foreignEntry, UnsafeFolderError } from "../base/confinedFolder";
import type { RunnerEvent } from "../launch/events";
import { RunnerError } from "../base/runnerError";
import { describeTarget, resolveTarget, type Target } from "../config/target";
import { launchRunner, launchShards } from "../launch/target";
import type { RunnerSpec } from "../runner/locate";
import { readParameterCount } from "../model/parameters";
import { compiledJob, deviceMemoryRefusal, modelTokenizer } from "../plan/compile";
import { JobCompileError, type AbilityRef, type ItemRef, type ProfileJob } from "../plan/job";
import { randomVariants, variantsPerAbility } from "../plan/shards";
import type { ModelTokenizer } from "../prompts/tokenize";
import { baselineAccuracies, readProfileOutput } from "../results/profile";
import { withoutFluencyItems } from "../prompts/fluencyText";
import { baselineGroups } from "../results/groups";
import { decodingOnce, extrasOf, pythonFilteredAnswers, readRunnerScores, scoredItems } from "../results/items";
import { pythonTaskScores } from "../results/taskScores";
import { RunEstimate, type RunPlan } from "../plan/estimate";
import { HelperError } from "../lmeval/helpers";
import { claimRunFolder, releaseRunFolder } from "../results/runs";
import { RESULTS_SCHEMA_VERSION, type ModelResults, type Results, type VariantBenchmark } from "../results/schema";
import { createRunFolder, openRunFolder, writeJsonl, writeResults, type RunFolder, type RunManifest } from "../results/runFolder";

/**
 * What the run will do, from the config: per model, its benchmark documents, each ability's
 * diagnostic items and its variants (every selection but random per ability, rule and k; random once per k,
 * candidate set and draw).
 */
export function runPlan(profile: Profile): RunPlan {
  const ablation = profile.ablation;
  const abilities = ablation ? profile.abilities.map((a) => ({ name: a.name, sequences: a.items.length })) : [];
  // a ranked selection has a variant per ability under each importance rule and candidate set;
  // random one per candidate set and draw (`random_draws`)
  const sets = ablation?.candidates?.length ?? 1;
  const draws = ablation ? randomDrawsOf(ablation) : 1;
  // rules over sets: each set's own rules where it names them, else every rule
  const rules = ablation ? rankingRuleCount(ablation) : 0;
  const perK = ablation ? ablation.selections.reduce((n, s) => n + (s === "random" ? sets * draws : abilities.length * rules), 0) : 0;
  const items = profile.benchmarks.reduce((n, b) => n + b.task.items.length, 0);
  const randomVariants = ablation?.selections.includes("random") ? ablation.k.length * sets * draws : 0;
  // a pair is one more variant per rule (of each candidate set) and k, scored after the random control
  const pairVariants = (ablation?.pairs?.length ?? 0) * (ablation?.k.length ?? 0) * rules;
  return {
    models: profile.models.map((m) => ({
      name: m.name,
      items,
      abilities,
      variants: perK * (ablation?.k.length ?? 0) + pairVariants,
      randomVariants,
      ...(pairVariants > 0 ? { pairVariants } : {}),
    })),
  };
}

export interface RunOptions {
  /** Which runner, on this machine and on the target's host (built there when needed). */
  runner: RunnerSpec;
  onProgress?: (progress: RunProgress) => void;
  onVariant?: (variant: VariantDone) => void;
  onWarning?: (message: string) => void;
  /** What the launcher is doing or waiting for: copying to a host, a Slurm job's state. */
  onStatus?: (message: string, model: string) => void;
  /** The run's folder, as soon as it exists (to say how to resume a run that stops). */
  onRunFolder?: (dir: string) => void;
  signal?: AbortSignal;
  /**
   * The user confirmed that benchmarks whose task runs the code the model generates to score it
   * (`unsafe_code: true`) may run it; without it such a profile is refused before it starts.
   */
  confirmUnsafeCode?: boolean;
}

export interface RunOutcome {
  runId: string;
  runDir: string;
  resultsFile: string;
  results: Results;
  itemCount: number;
}

export async function runProfile(profile: Profile, options: RunOptions): Promise<RunOutcome> {
  refuseUnconfirmedUnsafeCode(profile, options);
  return withOutputErrors(profile.outputDir, async () => {
    const run = await createRunFolder(profile.outputDir, profile.configText, profile.configFile);
    return runInFolder(profile, run, options, false);
  });
}

/** What the file system says when a run's files cannot be written, in words that say where and what to do. */
const OUTPUT_FAILURES: Record<string, string> = {
  ENOSPC: "the disk is full: free some space, then resume",
  EDQUOT: "the disk quota is used up: free some space, then resume",
  EACCES: "no permission to write there: choose another `output` folder in the config",
  EPERM: "no permission to write there: choose another `output` folder in the config",
  EROFS: "the file system is read-only: choose another `output` folder in the config",
  ENOTDIR: "a file stands where a folder must be: choose another `output` folder in the config, or move that file",
  EEXIST: "a file stands where a folder must be: choose another `output` folder in the config, or move that file",
};

/**
 * Runs `work`; a write that fails in the output folder (or in `runDir`, a resumed run's folder)
 * becomes a RunnerError naming the path and the fix. Other files' errors stay as they are.
 */
async function withOutputErrors<T>(outputDir: string, work: () => Promise<T>, runDir?: string): Promise<T> {
  try {
    return await work();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException | undefined)?.code;
    const why = code ? OUTPUT_FAILURES[code] : undefined;
    const where = (e as NodeJS.ErrnoException).path ?? outputDir;
    const inside = (dir: string) => !path.relative(dir, where).startsWith("..");
    if (!why || e instanceof RunnerError || !(inside(outputDir) || (runDir !== undefined && inside(runDir)))) throw e;
    throw new RunnerError(
      code === "ENOSPC" || code === "EDQUOT" ? "resources" : "output_failed",
      `cannot write ${where} (the run's files go under ${outputDir}, the config's \`output\`): ${why}`,
    );
  }
}

/**
 * Resumes a run folder: its config snapshot is loaded as if it stood where the config was (so
 * relative paths mean what they meant), every model's job is compiled again and must equal the
 * job.json on disk byte for byte, and the runner is started on the same --out.
 */
export async function resumeRun(runDir: string, options: RunOptions): Promise<RunOutcome> {
  const run = await openRunFolder(runDir).catch((e: Error) => {
    throw new ResumeError(e.message);
  });
  await refuseForeignEntries(run.dir);
  const { profile, problems } = await loadProfile(run.manifest.config_file, { text: run.configText });
  if (!profile) {
    const errors = errorsOf(problems).map(formatProblem).slice(0, 5).join("\n");
    throw new ResumeError(`the run's config (${run.manifest.config_file}, snapshot in ${run.dir}) no longer loads:\n${errors}`);
  }
  refuseUnconfirmedUnsafeCode(profile, options);
  return withOutputErrors(profile.outputDir, () => runInFolder(profile, run, options, true), run.dir);
}

/**
 * A run folder to resume holds only the folders and files bprof and its runner wrote: a link, a
 * device or a FIFO in it (planted in a repository's run folder, to be appended to or written
 * through by the runner) stops the resume before anything is written.
 */
async function refuseForeignEntries(runDir: string): Promise<void> {
  const found = await foreignEntry(runDir);
  if (found !== undefined)
    throw new UnsafeFolderError(
      `cannot resume ${runDir}: ${path.relative(runDir, found)} is a link or a special file, which no run folder bprof wrote holds ` +
        "(it may have come with a repository); nothing was written. Start a new run instead",
    );
}

/** The benchmarks whose task scores a document by running the code the model generates (humaneval). */
export function unsafeCodeBenchmarks(profile: Profile): string[] {
  return profile.benchmarks.filter((b) => b.task.unsafeCode).map((b) => b.name);
}

/** Nothing starts for a profile that would run generated code the user did not confirm. */
function refuseUnconfirmedUnsafeCode(profile: Profile, options: RunOptions): void {
  const unsafe = unsafeCodeBenchmarks(profile);
  if (unsafe.length === 0 || options.confirmUnsafeCode) return;
  throw new RunnerError(
    "unsafe_code",
    `${unsafe.map((n) => `\`${n}\``).join(", ")} score${unsafe.length === 1 ? "s" : ""} each document by running the code the model generates ` +
      "(`unsafe_code: true` in the task file): confirm it with --confirm-run-unsafe-code (in VS Code, the Profile command asks)",
    2,
  );
}

/** Where a run folder's config runs its runner; undefined when the folder cannot be read. */
export async function runTargetKind(runDir: string): Promise<Target["kind"] | undefined> {
  const run = await openRunFolder(runDir).catch(() => undefined);
  const config = run && parseConfig(run.configText, run.manifest.config_file).config;
  return config ? resolveTarget(config.target, path.dirname(run.manifest.config_file)).kind : undefined;
}

/** A run folder that cannot be resumed, with the reason. */
export class ResumeError extends Error {
  override name = "ResumeError";
}

/**
 * Runs every model of the profile in the run folder, which says meanwhile that this process runs
 * it (run-state.json: a second process refuses it, and a window that opens later sees it running)
 * and afterwards how it ended.
 */
async function runInFolder(
  profile: Profile,
  run: RunFolder & { manifest: RunManifest },
  options: RunOptions,
  resume: boolean,
): Promise<RunOutcome> {
  options.onRunFolder?.(run.dir);
  await claimRunFolder(run.dir);
  try {
    const outcome = await runModels(profile, run, options, resume);
    await releaseRunFolder(run.dir);
    return outcome;
  } catch (e) {
    await releaseRunFolder(run.dir, e).catch(() => undefined);
    throw e;
  }
}

async function runModels(
  profile: Profile,
  run: RunFolder & { manifest: RunManifest },
  options: RunOptions,
  resume: boolean,
): Promise<RunOutcome> {
  const results: Results = {
    schema: "bprof.results",
    schema_version: RESULTS_SCHEMA_VERSION,
    run_id: run.id,
    created: run.manifest.created,
    config_file: profile.configFile,
    target: describeTarget(profile.target),
    models: [],
  };
  let itemCount = 0;
  const dataHashes = new Map<string, Promise<string | undefined>>();
  const estimate = new RunEstimate(runPlan(profile));
  for (const model of profile.models) {
    const modelRun = new ModelRun(profile, run, model, options, resume, estimate);
    const entry = await modelRun.run();
    if (modelRun.runnerVersion !== undefined) results.runner_version = modelRun.runnerVersion;
    itemCount += entry.items;
    results.models.push({ ...entry.model, benchmarks: await withDataFiles(entry.model.benchmarks, profile.benchmarks, dataHashes) });
  }
  const resultsFile = await writeResults(run, results);
  return { runId: run.id, runDir: run.dir, resultsFile, results, itemCount };
}

/** A model's job as compiled and written to its folder. */
interface ModelJob {
  tokenizer: ModelTokenizer;
  compiled: ReturnType<typeof compiledJob>;
  jobFile: string;
  jobText: string;
}

/**
 * One model's part of a run, in the order of cmd_profile.cpp's `Profile`: compile its job, launch
 * the runner (or its shards) on the target while its events become progress, then collect its
 * scores into the model's results.
 */
class ModelRun {
  private readonly dir: string;
  private readonly outDir: string;
  /** The runner's version, from its start event. */
  runnerVersion: string | undefined;
  /** Ability ids of the job to the config's names. */
  private nameOf = new Map<string, string>();
  private variants: RunProgress["variants"];

  constructor(
    private readonly profile: Profile,
    private readonly folder: RunFolder & { manifest: RunManifest },
    private readonly model: ResolvedModel,
    private readonly options: RunOptions,
    private readonly resume: boolean,
    private readonly estimate: RunEstimate,
  ) {
    this.dir = folder.modelDir(model.name);
    this.outDir = path.join(this.dir, "runner");
  }

  async run(): Promise<{ model: ModelResults; items: number }> {
    const job = await this.compile();
    await this.launch(job);
    return this.collect(job);
  }

  private async compile(): Promise<ModelJob> {
    const tokenizer = await modelTokenizer(this.model);
    const compiled = compiledJob(this.profile, this.model, tokenizer, new Date(this.folder.manifest.created));
    // a job the config's GPU cannot hold would stop at its first allocation there: refused here, before any runner starts
    const refusal = deviceMemoryRefusal(this.profile, this.model, compiled);
    if (refusal) throw new JobCompileError(refusal);
    const jobFile = path.join(this.dir, "job.json");
    const jobText = await writeJob(this.folder, jobFile, compiled.job, this.resume, this.model, tokenizer.specials.before);
    this.nameOf = new Map(compiled.abilities.map((a) => [a.id, a.name]));
    return { tokenizer, compiled, jobFile, jobText };
  }

  private async launch({ compiled, jobFile, jobText }: ModelJob): Promise<void> {
    const { profile, options } = this;
    // a resumed run's log keeps the earlier attempts' events, in a file this run writes anew
    const eventLog = (await this.folder.files.openLog(path.join(this.dir, "events.jsonl"), { keep: this.resume })).createWriteStream();
    const onEvent = (event: RunnerEvent, quiet = false) => {
      eventLog.write(JSON.stringify(event) + "\n");
      this.onEvent(event, quiet);
    };
    const common = {
      runner: options.runner,
      files: this.folder.files,
      jobFile,
      outDir: this.outDir,
      runPath: path.relative(path.dirname(this.folder.dir), this.dir).split(path.sep).join("/"),
      ...(options.onStatus ? { onStatus: (message: string) => options.onStatus!(message, this.model.name) } : {}),
      ...(profile.threads ? { threads: profile.threads } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    };
    try {
      if (compiled.profiles && profile.shards !== undefined) {
        const combine = shardEvents(compiled.job as ProfileJob);
        await launchShards(profile.target, {
          ...common,
          job: compiled.job as ProfileJob,
          jobText,
          modelDir: this.dir,
          setting: profile.shards,
          resume: this.resume,
          onEvent: (event, shard) => {
            const combined = combine(event, shard);
            if (combined) onEvent(combined, shard === undefined && event.type === "variant");
          },
        });
      } else await launchRunner(profile.target, { ...common, subcommand: compiled.job.subcommand, onEvent });
    } finally {
      await new Promise((resolve) => eventLog.end(resolve));
    }
  }

  /** A runner event as progress, a finished variant or a warning; `quiet`: logged only (a merge's reading back of variants the shards reported). */
  private onEvent(event: RunnerEvent, quiet: boolean): void {
    const { options, nameOf } = this;
    const model = this.model.name;
    if (event.type === "start") this.runnerVersion = event.runner_version;
    if (event.type === "progress") {
      const ability = event.ability === undefined ? undefined : (nameOf.get(event.ability) ?? event.ability);
      if (event.phase === "variants") this.variants = { done: event.done, total: event.total };
      const progress = {
        model,
        phase: event.phase,
        done: event.done,
        total: event.total,
        ...(ability !== undefined ? { ability } : {}),
      };
      const variant = event.variant && {
        ability: event.variant.ability === null ? null : (nameOf.get(event.variant.ability) ?? event.variant.ability),
        selection: event.variant.selection,
        k: event.variant.k,
        ...(event.variant.method ? { method: event.variant.method } : {}),
        ...this.drawOf(event.variant.draw),
      };
      options.onProgress?.({
        ...progress,
        ...(variant ? { variant } : {}),
        ...(this.variants ? { variants: this.variants } : {}),
        overall: this.estimate.update(progress),
      });
    }
    if (event.type === "variant" && !quiet) {
      const ability = event.ability === null ? null : (nameOf.get(event.ability) ?? event.ability);
      options.onVariant?.({
        model,
        ability,
        selection: event.selection,
        k: event.k,
        n: event.n,
        resumed: event.resumed === true,
        ...this.drawOf(event.draw),
      });
    }
    if (event.type === "warning") options.onWarning?.(event.message);
  }

  /** A random variant's draw, with how many the run draws, where the job has several (`random_draws`). */
  private drawOf(draw: number | undefined): { draw?: number; draws?: number } {
    const draws = this.profile.ablation ? randomDrawsOf(this.profile.ablation) : 1;
    return draw === undefined || draws <= 1 ? {} : { draw, draws };
  }

  private async collect({ compiled, tokenizer }: ModelJob): Promise<{ model: ModelResults; items: number }> {
    const { profile, model, dir, outDir } = this;
    // the runner is done; reading its scores back (the bootstrap, the flips) takes a while of its own
    this.options.onProgress?.({ model: model.name, phase: "results", done: 0, total: 0 });
    return withHelperErrors(model, () =>
      compiled.profiles
        ? profileResults(profile, model, this.folder, dir, outDir, compiled.refs, compiled.abilities, tokenizer, this.options)
        : scoreResults(profile, model, this.folder, dir, outDir, compiled.refs, tokenizer),
    );
  }
}

/** The benchmarks' results with the data file each read and the file's SHA-256 (hashed once per run). */
async function withDataFiles(
  results: ModelResults["benchmarks"],
  benchmarks: readonly ResolvedBenchmark[],
  hashes: Map<string, Promise<string | undefined>>,
): Promise<ModelResults["benchmarks"]> {
  return Promise.all(
    results.map(async (result) => {
      const dataFile = benchmarks.find((b) => b.name === result.name)?.task.dataFile;
      if (!dataFile) return result;
      if (!hashes.has(dataFile)) hashes.set(dataFile, fileSha256(dataFile));
      const sha = await hashes.get(dataFile)!;
      return { ...result, data_file: dataFile, ...(sha ? { data_sha256: sha } : {}) };
    }),
  );
}

/**
 * Every document a variant flipped, cell by cell (flips.jsonl): the editor lists a cell's
 * documents and marks a data file's lines from these, without reading every variant's items.
 */
function flipRecords(assembled: Awaited<ReturnType<typeof readProfileOutput>>): FlipRecord[] {
  const records: FlipRecord[] = [];
  const baselineOf = new Map<string, BenchmarkItem[]>();
  for (const item of assembled.baseline) {
    const list = baselineOf.get(item.benchmark);
    if (list) list.push(item);
    else baselineOf.set(item.benchmark, [item]);
  }
  // every rule's variants; the random control, in each, once
  const variants = new Map(assembled.profiles.flatMap((p) => p.variants).map((v) => [v.items_file, v]));
  for (const variant of variants.values()) {
    const after = assembled.variantItems.get(variant.items_file) ?? [];
    for (const cell of variant.benchmarks) {
      const ablated = after.filter((i) => i.benchmark === cell.name);
      for (const metric of metricsOf(cell)) {
        for (const document of flipsAsDocuments(baselineOf.get(cell.name) ?? [], ablated, metric))
          records.push({ variant: variant.items_file, benchmark: cell.name, metric, ...document });
      }
    }
  }
  return records;
}

/** The metrics a variant's cell of a benchmark has. */
function metricsOf(cell: VariantBenchmark): Metric[] {
  return METRICS.filter((m) => cell[m] !== undefined);
}

/**
 * A task's Python (a filter or its scorer) that fails on the runner's output is the run's error,
 * in Python's words; the runner's files stay, so resuming after the fix scores them again.
 */
async function withHelperErrors<T>(model: ResolvedModel, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    if (!(e instanceof HelperError)) throw e;
    const where = e.document === undefined ? "" : ` (input ${e.document})`;
    throw new RunnerError(
      "helper_failed",
      `model \`${model.name}\`: a task's Python ${e.step === "score" ? "scorer" : "filter"} failed on the model's output${where}: ${e.message}`,
    );
  }
}

/**
 * Writes job.json, or on resume checks that the job compiled now is the one the folder holds; the
 * file's text either way (a sharded job's fingerprint is taken of it).
 */
async function writeJob(
  run: RunFolder,
  jobFile: string,
  job: object,
  resume: boolean,
  model: ResolvedModel,
  specialsBefore: readonly number[],
): Promise<string> {
  const text = JSON.stringify(job, null, 2) + "\n";
  if (resume) {
    const existing = await fs.readFile(jobFile, "utf8").catch(() => undefined);
    if (existing !== undefined) {
      // a run started before the fluency measure resumes as it was, without it
      if (existing !== text && existing === JSON.stringify(withoutFluencyItems(job), null, 2) + "\n") return existing;
      if (existing !== text) {
        const why = onlySpecialTokensAdded(existing, job, specialsBefore)
          ? "it was tokenized without the tokenizer's special tokens (BOS), as lm-eval did before 0.4.10, and contexts now start with them; " +
            "set `add_bos_token: false` on the model to resume it as it was, or start a new run"
          : "a diagnostic dataset, a benchmark, the tokenizer or the config changed since the run started; start a new run";
        throw new ResumeError(
          `cannot resume model \`${model.name}\`: the job compiled from the config now differs from ${jobFile} (${why})`,
        );
      }
      return text;
    }
  }
  await run.files.writeFile(jobFile, text);
  return text;
}

/**
 * Whether a run folder's job differs from the one compiled now only in that each context now
 * starts with the special tokens `before`: a run from before contexts got them (docs/prompts.md).
 */
function onlySpecialTokensAdded(existingText: string, job: object, before: readonly number[]): boolean {
  if (before.length === 0) return false;
  let existing: { items?: { context?: number[] }[] };
  try {
    existing = JSON.parse(existingText) as typeof existing;
  } catch {
    return false;
  }
  const now = (job as { items?: { context?: number[] }[] }).items ?? [];
  const then = existing.items ?? [];
  if (now.length === 0 || now.length !== then.length) return false;
  return now.every((item, i) => {
    const old = then[i]?.context ?? [];
    const ctx = item.context ?? [];
    return (
      ctx.length === old.length + before.length && before.every((t, j) => ctx[j] === t) && old.every((t, j) => ctx[before.length + j] === t)
    );
  });
}

/**
 * The events of a sharded model as one runner's: each shard's variants count towards the whole
 * job's (so the run has one progress bar), each event marked with its shard; the merge's reading
 * back of every variant is its own phase, `merge`. Undefined: an event not to pass on (a shard's
 * start and summary: the merge's are the model's).
 */
function shardEvents(job: ProfileJob): (event: RunnerEvent, shard: number | undefined) => RunnerEvent | undefined {
  const total = job.abilities.length * variantsPerAbility(job) + randomVariants(job);
  const done = new Map<number, number>();
  return (event, shard) => {
    if (shard === undefined) {
      return event.type === "progress" && event.phase === "variants" ? { ...event, phase: "merge" } : event;
    }
    const marked = { ...event, shard } as unknown as RunnerEvent;
    if (event.type === "summary" || event.type === "start") return undefined;
    if (event.type !== "progress" || event.phase !== "variants") return marked;
    done.set(shard, event.done);
    return { ...marked, done: [...done.values()].reduce((a, b) => a + b, 0), total } as unknown as RunnerEvent;
  };
}

async function scoreResults(
  profile: Profile,
  model: ResolvedModel,
  run: RunFolder,
  dir: string,
  outDir: string,
  refs: ItemRef[],
  tokenizer: ModelTokenizer,
): Promise<{ model: ModelResults; items: number }> {
  const scores = await readRunnerScores(path.join(outDir, "scores.jsonl"));
  const sources = new Map([["scores.jsonl", scores]]);
  // each generation decoded once, for the Python filters, the task's scorer and the items alike
  const decode = decodingOnce(tokenizer.decode);
  const filtered = await pythonFilteredAnswers(refs, profile.benchmarks, sources, decode);
  const taskScores = await pythonTaskScores(refs, profile.benchmarks, sources, decode, filtered);
  const items = scoredItems(refs, profile.benchmarks, scores, "scores.jsonl", decode, extrasOf("scores.jsonl", filtered, taskScores));
  await writeJsonl(run.files, path.join(dir, "items.jsonl"), items);
  return {
    model: {
      name: model.name,
      path: model.path,
      dtype: model.dtype,
      special_tokens: tokenizer.specials,
      benchmarks: baselineAccuracies(items, profile.benchmarks),
      ...groupsOf(profile, items),
    },
    items: items.length,
  };
}

/** The baseline's scores of the config's groups scored as a whole, as a ModelResults field; nothing without groups. */
function groupsOf(profile: Profile, baseline: readonly BenchmarkItem[]): Pick<ModelResults, "groups"> {
  return profile.groups?.length ? { groups: baselineGroups(profile.groups, baseline) } : {};
}

async function profileResults(
  profile: Profile,
  model: ResolvedModel,
  run: RunFolder,
  dir: string,
  outDir: string,
  refs: ItemRef[],
  abilities: AbilityRef[],
  tokenizer: ModelTokenizer,
  options: RunOptions,
): Promise<{ model: ModelResults; items: number }> {
  const ablation = profile.ablation!;
  const assembled = await readProfileOutput(
    outDir,
    {
      benchmarks: profile.benchmarks,
      refs,
      abilities,
      k: [...ablation.k].sort((a, b) => a - b),
      selections: ablation.selections,
      methods: ablation.methods,
      seed: profile.seed,
      ...(randomDrawsOf(ablation) > 1 ? { randomDraws: randomDrawsOf(ablation) } : {}),
      bootstrap: profile.bootstrap,
      stats: profile.stats,
      decode: tokenizer.decode,
      ...(profile.groups ? { groups: profile.groups } : {}),
      ...(ablation.fluency
        ? { fluency: { source: ablation.fluency.source, maxPerplexityRatio: ablation.fluency.maxPerplexityRatio } }
        : {}),
      ...(ablation.candidates ? { candidateSets: ablation.candidates } : {}),
      ...(ablation.candidateMethods ? { candidateMethods: ablation.candidateMethods } : {}),
    },
    path.relative(dir, outDir),
  );
  const counted = await readParameterCount(model.path);
  if (counted && counted.total !== assembled.profiles[0]!.parameters) {
    options.onWarning?.(
      `model \`${model.name}\`: the runner counts ${assembled.profiles[0]!.parameters} parameters, config.json implies ${counted.total}; the config check of k used the latter`,
    );
  }
  await writeJsonl(run.files, path.join(dir, "items.jsonl"), assembled.baseline);
  for (const [file, items] of assembled.variantItems) await writeJsonl(run.files, path.join(dir, file), items);
  await writeJsonl(run.files, path.join(dir, FLIPS_FILE), flipRecords(assembled));
  return {
    model: {
      name: model.name,
      path: model.path,
      dtype: model.dtype,
      special_tokens: tokenizer.specials,
      benchmarks: baselineAccuracies(assembled.baseline, profile.benchmarks),
      ...groupsOf(profile, assembled.baseline),
      profile: assembled.profiles[0]!,
      ...(assembled.profiles.length > 1 ? { other_methods: assembled.profiles.slice(1) } : {}),
    },
    items: assembled.baseline.length,
  };
}
