// The runner's job for each model of a loaded profile, and what only compiling them finds.
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { parseJsonSource } from "../base/jsonSource";
import { JobCompileError, compileProfileJob, compileScoreJob, type AbilityRef, type ProfileJob } from "./job";
import type { Profile, ResolvedModel } from "../config/load";
import { problemAt, type Problem } from "../base/problems";
import { loadTokenizer, type ModelTokenizer } from "../prompts/tokenize";
import { TokenizerPatternError } from "../prompts/tokenizerPatterns";
import { describeShard, splitJob } from "./shards";
import { secondsFor, type Pace } from "./pace";
import { formatDuration } from "./estimate";
import { readModelShapeSync } from "../model/parameters";
import { describeDevicePlan, describePeak, devicePlan, fittingBatchSize, jobDeviceWork } from "./devicePlan";

/**
 * The runner's job for one model of a profile (`profiles`: a profile job, else a score job). It
 * names the model folder as the runner will find it on the target, and a template that prints
 * today's date prints `date`, the run's. On the config's `gpu`, a profile without
 * `ablation.batch_size` gets the largest importance batch whose peak fits (plan/devicePlan.ts).
 */
export function compiledJob(profile: Profile, model: ResolvedModel, tokenizer: ModelTokenizer, date: Date) {
  const compiled = withPatternProblems(() => unbatchedJob(profile, model, tokenizer, date));
  if (!compiled.profiles || !profile.gpu || profile.ablation?.batchSizeSet) return compiled;
  const shape = readModelShapeSync(model.path);
  const job = compiled.job as ProfileJob;
  const batch = shape && fittingBatchSize(shape, jobDeviceWork(job), profile.gpu);
  // none fits: the job keeps the default, and validation refuses it with its figures
  return batch === undefined ? compiled : { ...compiled, job: { ...job, ablation: { ...job.ablation, batch_size: batch } } };
}

/** What `compile` returns; a tokenizer pattern that ran past its time bound (on any item) is the JobCompileError at the pattern. */
function withPatternProblems<T>(compile: () => T): T {
  try {
    return compile();
  } catch (e) {
    if (e instanceof TokenizerPatternError) throw new JobCompileError(e.problem);
    throw e;
  }
}

function unbatchedJob(profile: Profile, model: ResolvedModel, tokenizer: ModelTokenizer, date: Date) {
  const plan =
    profile.ablation && profile.abilities.length > 0
      ? { abilities: profile.abilities, ablation: profile.ablation, seed: profile.seed }
      : undefined;
  const asRunnerSees = {
    ...model,
    path: model.remotePath ?? model.path,
    ...(model.chat ? { chat: { ...model.chat, template: model.chat.template.on(date) } } : {}),
  };
  return plan
    ? { ...compileProfileJob(asRunnerSees, profile.benchmarks, plan, tokenizer, profile.device), profiles: true }
    : { ...compileScoreJob(asRunnerSees, profile.benchmarks, tokenizer, profile.device), abilities: [] as AbilityRef[], profiles: false };
}

/**
 * What only compiling the jobs finds, each at its file and line: a document or a diagnostic item
 * that the model's window cannot hold, a chat template that refuses one. The first per model, as a
 * run would stop there. For `bprof validate` and Validate Config: it tokenizes every item.
 */
export async function jobProblems(profile: Profile): Promise<Problem[]> {
  const problems: Problem[] = [];
  for (const model of profile.models) {
    try {
      const refusal = deviceMemoryRefusal(profile, model, compiledJob(profile, model, await modelTokenizer(model), new Date()));
      if (refusal) problems.push(refusal);
    } catch (e) {
      if (!(e instanceof JobCompileError)) throw e;
      problems.push(e.problem);
    }
  }
  return problems;
}

/** The refusal of a compiled job that cannot fit the config's GPU (undefined where it fits, or without `gpu`): validation's and a run's. */
export function deviceMemoryRefusal(profile: Profile, model: ResolvedModel, compiled: ReturnType<typeof compiledJob>): Problem | undefined {
  const planned = plannedOnGpu(profile, model, compiled);
  return planned && !planned.plan.fits ? deviceMemoryProblem(profile, model, planned) : undefined;
}

/**
 * The job's plan on the config's GPU; undefined without `gpu`, or for a model whose config.json
 * the plan cannot read. A job whose batch was to be chosen and none fits is planned at one
 * sequence, the least it could need.
 */
function plannedOnGpu(profile: Profile, model: ResolvedModel, compiled: ReturnType<typeof compiledJob>) {
  const gpu = profile.gpu;
  const shape = gpu && readModelShapeSync(model.path);
  if (!gpu || !shape) return undefined;
  const work = jobDeviceWork(compiled.job);
  const plan = devicePlan(shape, work, gpu);
  const chosen = compiled.profiles && !profile.ablation?.batchSizeSet;
  return {
    plan: !plan.fits && chosen ? devicePlan(shape, work, gpu, 1) : plan,
    // what the config's batch_size could be instead, where a smaller one fits
    fitting: plan.fits || chosen ? undefined : fittingBatchSize(shape, work, gpu),
  };
}

/** The refusal of a job that cannot fit the config's GPU, at its `gpu` key: the figures, and what would bring the peak down. */
function deviceMemoryProblem(profile: Profile, model: ResolvedModel, planned: NonNullable<ReturnType<typeof plannedOnGpu>>): Problem {
  const gpu = profile.gpu!;
  const ablation = profile.ablation;
  const { plan, fitting } = planned;
  const remedies = [
    ...(fitting !== undefined ? [`\`ablation.batch_size: ${fitting}\` or less (or leave it out: the largest that fits is chosen)`] : []),
    ...(ablation?.stability ? ["`ablation.stability: false` (it doubles the sums)"] : []),
    ...(ablation?.candidates?.includes("all") ? ["`ablation.candidates: mlp`"] : []),
    ...(model.dtype === "float32" ? ["the model's `dtype: bfloat16` (half the weights and activations)"] : []),
    "a GPU with more memory (shards do not help: each holds the whole model and every candidate's sum)",
  ];
  return problemAt(
    { ...gpu.place, field: "gpu" },
    "config.device-memory",
    `model \`${model.name}\` does not fit ${gpu.label}: ${describePeak(plan)}. Try ${remedies.join(", ")}`,
  );
}

/**
 * Per model on the config's GPU, its peak device memory and about how long the run takes
 * (plan/devicePlan.ts), for `bprof validate` and Validate Config; empty without `gpu`. It compiles
 * the jobs (tokenizes every item), so it runs when asked.
 */
export async function devicePlanLines(profile: Profile): Promise<string[]> {
  if (!profile.gpu) return [];
  const lines: string[] = [];
  for (const model of profile.models) {
    const planned = plannedOnGpu(profile, model, compiledJob(profile, model, await modelTokenizer(model), new Date()));
    lines.push(
      planned
        ? `${model.name}: ${describeDevicePlan(planned.plan, profile.gpu)}`
        : `${model.name}: its config.json is not of a family bprof can size, so its peak memory on the GPU is not said`,
    );
  }
  return lines;
}

/** The model's tokenizer; one that does not load is a JobCompileError at its file (and line, for JSON that does not parse). */
export async function modelTokenizer(model: ResolvedModel): Promise<ModelTokenizer> {
  try {
    return await loadTokenizer(model.path, model.addBosToken !== undefined ? { addBosToken: model.addBosToken } : {});
  } catch (e) {
    if (e instanceof TokenizerPatternError) throw new JobCompileError(e.problem);
    const files = ["tokenizer.json", "tokenizer_config.json"].map((name) => path.join(model.path, name));
    for (const file of files) {
      const text = await fs.readFile(file, "utf8").catch(() => undefined);
      const syntax = text === undefined ? undefined : parseJsonSource(text, file).problems[0];
      if (syntax) throw new JobCompileError(syntax);
    }
    throw new JobCompileError(
      problemAt(
        { file: files[0]!, line: 1, column: 1 },
        "model.tokenizer",
        `the tokenizer of model \`${model.name}\` cannot be loaded: ${(e as Error).message}`,
      ),
    );
  }
}

/**
 * How each model's profile splits into shards (docs/targets.md, "Shards"), for `bprof validate`
 * and Validate Config: per model a line, then a line per shard with its abilities and its share
 * of the work (diagnostic tokens and variants, as plan/shards.ts weighs them) and, where an
 * earlier run of the config timed the model's runner, about how long it will take (`paceOf`, e.g.
 * results/runs.ts's newestPace, the caller's because plan reads no run folder).
 * Empty without shards. It compiles the jobs (tokenizes every item), so it runs when asked.
 */
export async function shardSplitLines(
  profile: Profile,
  cores: number,
  paceOf: (model: string) => Promise<Pace | undefined>,
): Promise<string[]> {
  const setting = profile.shards;
  if (!setting || !profile.ablation) return [];
  if (setting.count === "auto")
    return ["shards: auto: one shard per GPU the runner sees, counted when the run starts (give `devices` to see the split here)"];
  const lines: string[] = [];
  for (const model of profile.models) {
    const compiled = compiledJob(profile, model, await modelTokenizer(model), new Date());
    const plans = splitJob(compiled.job as ProfileJob, setting.count);
    const total = plans.reduce((n, p) => n + p.work, 0);
    const names = new Map(compiled.abilities.map((a) => [a.id, a.name]));
    const threads = Math.max(1, Math.floor((profile.threads ?? cores) / plans.length));
    const largest = Math.max(...plans.map((p) => p.work));
    const pace = await paceOf(model.name);
    // on Slurm each shard is an array task with the job's resources; here they share the cores
    const each = profile.target.kind === "slurm" ? "a Slurm array task each" : `${threads} thread${threads === 1 ? "" : "s"} each`;
    lines.push(
      `${model.name}: ${plans.length} shard${plans.length === 1 ? "" : "s"}, ${each}; ` +
        `the run lasts as long as its largest shard, ${Math.round((100 * largest) / total)}% of the work` +
        (pace ? `; times at the pace of run ${pace.runId}` : "; no earlier run of this model to time the shards by"),
    );
    for (const [i, plan] of plans.entries()) {
      const device = setting.devices?.[i];
      const on = device ?? profile.device;
      // a Slurm task's threads are its cpus_per_task, not known here: only a GPU's pace carries over
      const timed = pace && (profile.target.kind !== "slurm" || on.startsWith("cuda"));
      const seconds = timed ? secondsFor(plan.work, pace, on, threads) : undefined;
      const time = seconds === undefined ? "" : `, about ${formatDuration(seconds)}`;
      lines.push(`  shard ${i + 1}${device ? ` (${device})` : ""}: ${describeShard(plan, total, names)}${time}`);
    }
  }
  return lines;
}
