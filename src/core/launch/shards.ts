// A model's profile as shards run side by side, on this machine or a host over SSH (a ShardPlace),
// then merged (docs/targets.md, "Shards"): one runner per shard, each in its own folder under the
// model's, on its own device and share of the threads; then every shard's files are checked (on
// this machine's copies) and gathered into the model's runner folder
// and the whole job runs there, reading everything back (the runner's resume) and writing only
// the manifest. The results are those of the unsharded run by construction: every file has the
// name and bytes the whole job would give it.
import { constants as fsConstants, promises as fs } from "node:fs";
import * as path from "node:path";
import { temporarySiblingName } from "../base/fsutil";
import { ConfinedFolder } from "../base/confinedFolder";
import type { ProfileJob } from "../plan/job";
import { jobFingerprint, shardJob, splitJob, type ShardKey, type ShardPlan } from "../plan/shards";
import type { ShardSetting } from "../config/shards";
import { usableCores } from "./cores";
import type { RunnerEvent } from "./events";
import { runLocal } from "./local";
import type { RunnerSummary } from "./outcome";
import { RunnerError } from "../base/runnerError";
import type { LaunchInvocation } from "./targetTypes";

/** A shard's folder under the model's: its job.json, events.jsonl and runner output. */
export function shardDir(modelDir: string, index: number): string {
  return path.join(modelDir, "shards", String(index));
}

export interface ShardedRun {
  /** models/<name> relative to the runs folder (the same on a host): where a place other than this machine keeps the shards. */
  runPath?: string;
  /** The run folder on this machine: the shards' files are written through it. */
  files: ConfinedFolder;
  /** The whole job and its job.json's text, as run/runProfile.ts wrote it. */
  job: ProfileJob;
  jobText: string;
  /** models/<name> in the run folder; the merged output goes to its runner/. */
  modelDir: string;
  setting: ShardSetting;
  /** The config's `threads`: split evenly between the shards. Default: every core. */
  threads?: number;
  resume: boolean;
  /** Every shard's events, then the merge's (`shard` undefined). */
  onEvent?: (event: RunnerEvent, shard: number | undefined) => void;
  onStatus?: (message: string) => void;
  signal?: AbortSignal;
}

/** One runner job where the shards run (this machine, a host over SSH): an invocation less the runner, which the place knows. */
export type PlacedJob = Omit<LaunchInvocation, "runner" | "onStatus" | "files">;

/** Where the shards run, side by side: how a runner job runs there, its cores, and how the merge gathers. */
export interface ShardPlace {
  cores(): Promise<number>;
  run(job: PlacedJob): Promise<RunnerSummary>;
  /** Puts the shards' files (checked on this machine's copies) into the whole job's runner folder there. */
  gather(outDir: string, shardDirs: readonly string[], manifests: readonly ShardManifest[]): Promise<void>;
}

/** This machine as the shards' place. */
export function localPlace(runnerPath: string): ShardPlace {
  return {
    cores: usableCores,
    run: (job) =>
      runLocal({
        runnerPath,
        subcommand: job.subcommand,
        jobFile: job.jobFile,
        outDir: job.outDir,
        ...(job.threads !== undefined ? { threads: job.threads } : {}),
        ...(job.onEvent ? { onEvent: job.onEvent } : {}),
        ...(job.signal ? { signal: job.signal } : {}),
      }),
    gather: placeShardFiles,
  };
}

/** Runs the shards that have not finished, side by side on this machine, then the merge; the merge's summary. */
export async function runShardsLocally(run: ShardedRun & { runnerPath: string }): Promise<RunnerSummary> {
  return runShards(run, localPlace(run.runnerPath));
}

/** Runs the shards that have not finished, side by side at `place`, then the merge; the merge's summary. */
export async function runShards(run: ShardedRun, place: ShardPlace): Promise<RunnerSummary> {
  const count = run.setting.count === "auto" ? await visibleGpus(run, place) : run.setting.count;
  // auto: each shard on a GPU of its own, not all of them on the first
  const devices = run.setting.devices ?? (run.setting.count === "auto" ? Array.from({ length: count }, (_, i) => `cuda:${i}`) : undefined);
  const plans = splitJob(run.job, count);
  const of = jobFingerprint(run.jobText);
  const total = run.threads ?? (await place.cores());
  const threads = Math.max(1, Math.floor(total / plans.length));
  const pending: number[] = [];
  for (const [index] of plans.entries()) {
    const dir = shardDir(run.modelDir, index);
    await writeShardJob(run.files, dir, shardJob(run.job, plans, index, of, devices?.[index]), run.resume);
    if (!(await finishedShard(path.join(dir, "runner"), of, index, plans.length))) pending.push(index);
  }
  run.onStatus?.(describeLaunch(plans, pending, threads, devices));
  await runSideBySide(run, place, pending, threads);
  const outDir = path.join(run.modelDir, "runner");
  const shardDirs = plans.map((_, i) => path.join(shardDir(run.modelDir, i), "runner"));
  await place.gather(
    outDir,
    shardDirs,
    await checkShards(
      shardDirs,
      of,
      run.job.abilities.map((a) => a.id),
    ),
  );
  return place.run({
    subcommand: "profile",
    jobFile: path.join(run.modelDir, "job.json"),
    outDir,
    runPath: run.runPath ?? "",
    ...(run.threads !== undefined ? { threads: run.threads } : {}),
    ...(run.onEvent ? { onEvent: (e: RunnerEvent) => run.onEvent!(e, undefined) } : {}),
    ...(run.signal ? { signal: run.signal } : {}),
  });
}

function describeLaunch(
  plans: readonly ShardPlan[],
  pending: readonly number[],
  threads: number,
  devices: readonly string[] | undefined,
): string {
  const done = plans.length - pending.length;
  const on = devices ? ` on ${devices.join(", ")}` : "";
  const count = `${plans.length} shard${plans.length === 1 ? "" : "s"}${on}`;
  return `${count}, ${threads} thread${threads === 1 ? "" : "s"} each${done > 0 ? `; ${done} finished earlier` : ""}`;
}

/**
 * The pending shards at once; the first that fails stops the others (its error is the run's,
 * naming the shard), and what every shard finished stays on disk for a resume.
 */
async function runSideBySide(run: ShardedRun, place: ShardPlace, pending: readonly number[], threads: number): Promise<void> {
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  run.signal?.addEventListener("abort", onAbort, { once: true });
  if (run.signal?.aborted) stop.abort();
  let first: unknown;
  try {
    await Promise.all(
      pending.map(async (index) => {
        const dir = shardDir(run.modelDir, index);
        const log = (await run.files.openLog(path.join(dir, "events.jsonl"), { keep: run.resume })).createWriteStream();
        try {
          await place.run({
            subcommand: "profile",
            jobFile: path.join(dir, "job.json"),
            outDir: path.join(dir, "runner"),
            runPath: `${run.runPath ?? ""}/shards/${index}`,
            threads,
            onEvent: (event) => {
              log.write(JSON.stringify(event) + "\n");
              run.onEvent?.(event, index);
            },
            signal: stop.signal,
          });
        } catch (e) {
          if (first === undefined) first = namingShard(e, index, dir);
          stop.abort();
        } finally {
          await new Promise((resolve) => log.end(resolve));
        }
      }),
    );
  } finally {
    run.signal?.removeEventListener("abort", onAbort);
  }
  // the first failure is the cause: the shards it stopped only report `cancelled`
  if (first !== undefined) throw first;
}

/** A shard's error, saying which shard and where its files are. */
function namingShard(e: unknown, index: number, dir: string): unknown {
  if (!(e instanceof RunnerError) || e.code === "cancelled") return e;
  return new RunnerError(e.code, `shard ${index + 1} (${dir}): ${e.message}`, e.exitCode);
}

/** Writes a shard's job.json, or on resume checks it is the shard job compiled now. */
export async function writeShardJob(files: ConfinedFolder, dir: string, job: object, resume: boolean): Promise<void> {
  const file = path.join(dir, "job.json");
  const text = JSON.stringify(job, null, 2) + "\n";
  if (resume) {
    const existing = await fs.readFile(file, "utf8").catch(() => undefined);
    if (existing !== undefined && existing !== text) {
      throw new RunnerError(
        "bad_job",
        `cannot resume: ${file} is not the shard job compiled now (the split changed since the run started); start a new run`,
        2,
      );
    }
    if (existing !== undefined) return;
  }
  await files.writeJson(file, job);
}

export interface ShardManifest extends ShardKey {
  abilities: string[];
}

async function readShardManifest(dir: string): Promise<ShardManifest | undefined> {
  const text = await fs.readFile(path.join(dir, "shard.json"), "utf8").catch(() => undefined);
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as ShardManifest;
  } catch {
    return undefined;
  }
}

/** Has this shard of this job finished (its shard.json, the runner's last file, is there)? */
async function finishedShard(dir: string, of: string, index: number, count: number): Promise<boolean> {
  const manifest = await readShardManifest(dir);
  return manifest !== undefined && manifest.of === of && manifest.index === index && manifest.count === count;
}

/**
 * Gathers the shard folders' result files into `outDir`, the whole job's runner folder, after
 * checking that each holds a finished shard of this job (`of`) at its place and that together
 * they hold every ability once and the baseline once.
 */
export async function gatherShards(outDir: string, shardDirs: readonly string[], of: string, abilities: readonly string[]): Promise<void> {
  await placeShardFiles(outDir, shardDirs, await checkShards(shardDirs, of, abilities));
}

/** Each folder's shard manifest, once every folder holds a finished shard of this job at its place and together they hold the whole job. */
export async function checkShards(shardDirs: readonly string[], of: string, abilities: readonly string[]): Promise<ShardManifest[]> {
  const manifests: ShardManifest[] = [];
  for (const [index, dir] of shardDirs.entries()) {
    const manifest = await readShardManifest(dir);
    if (manifest === undefined)
      throw new ShardMergeError(`${dir} holds no finished shard (no shard.json): resume the run to finish shard ${index + 1}`);
    if (manifest.of !== of)
      throw new ShardMergeError(
        `${dir} holds a shard of another job (${manifest.of}; this job is ${of}): its results cannot be merged into this run`,
      );
    if (manifest.index !== index || manifest.count !== shardDirs.length)
      throw new ShardMergeError(
        `${dir} holds shard ${manifest.index + 1} of ${manifest.count}, where shard ${index + 1} of ${shardDirs.length} belongs`,
      );
    manifests.push(manifest);
  }
  const seen = new Map<string, number>();
  for (const m of manifests) for (const id of m.abilities) seen.set(id, (seen.get(id) ?? 0) + 1);
  const missing = abilities.filter((id) => seen.get(id) !== 1);
  if (missing.length > 0 || manifests.filter((m) => m.baseline).length !== 1)
    throw new ShardMergeError(
      `the shards under ${path.dirname(shardDirs[0] ?? ".")} do not hold every ability and the baseline exactly once` +
        (missing.length > 0 ? ` (${missing.join(", ")})` : ""),
    );
  return manifests;
}

/**
 * The checked shards' files into `outDir`: hard links where the file system allows (they are
 * never written again: the runner writes new files and renames them), else copies; each lands
 * under a temporary name and is renamed into place.
 */
async function placeShardFiles(outDir: string, shardDirs: readonly string[], manifests: readonly ShardManifest[]): Promise<void> {
  // the runner's folder of a run: nothing placed in it goes through a link
  const out = await ConfinedFolder.at(outDir, "the runner's folder", { create: true });
  for (const sub of ["rankings", "variants"]) await out.folder(sub);
  for (const [index, dir] of shardDirs.entries()) {
    const files = [
      ...(manifests[index]!.baseline ? ["baseline.jsonl"] : []),
      ...(await resultFiles(dir, "rankings")),
      ...(await resultFiles(dir, "variants")),
    ];
    for (const file of files) await placeFile(path.join(dir, file), out.resolve(file));
  }
}

/**
 * The same gathering as a shell script, run in the whole job's folder on a host (the Slurm merge
 * job, a host over SSH): every shards/<i>/runner's result files into runner/.
 */
export const GATHER_SCRIPT = [
  "mkdir -p runner/rankings runner/variants",
  "for d in shards/*/runner; do",
  '  for f in "$d"/baseline.jsonl "$d"/rankings/* "$d"/variants/*; do',
  '    [ -f "$f" ] || continue',
  '    case "$f" in *.tmp) continue ;; esac',
  '    to="runner/${f#"$d"/}"',
  // removed first: when ln cannot link, cp would write through a link found at the temporary name
  '    rm -f "$to.merge.tmp" && { ln "$f" "$to.merge.tmp" 2>/dev/null || cp "$f" "$to.merge.tmp"; } || exit 1',
  '    mv -f "$to.merge.tmp" "$to" || exit 1',
  "  done",
  "done",
];

async function resultFiles(dir: string, sub: string): Promise<string[]> {
  const names = await fs.readdir(path.join(dir, sub)).catch(() => [] as string[]);
  return names.filter((n) => !n.endsWith(".tmp")).map((n) => `${sub}/${n}`);
}

async function placeFile(from: string, to: string): Promise<void> {
  // A fresh random name, linked or copied exclusively: nothing planted at a temporary name is written through.
  const temp = temporarySiblingName(to);
  try {
    await fs.link(from, temp);
  } catch {
    await fs.copyFile(from, temp, fsConstants.COPYFILE_EXCL);
  }
  await fs.rename(temp, to);
}

/** A shard folder that cannot be merged into this run: another job's, unfinished, or misplaced. */
export class ShardMergeError extends RunnerError {
  constructor(message: string) {
    super("shard_mismatch", message, 2);
    this.name = "ShardMergeError";
  }
}

/** `shards: auto`: the CUDA devices the runner sees where the shards run, from its `info` (PROTOCOL.md). */
async function visibleGpus(run: ShardedRun, place: ShardPlace): Promise<number> {
  const dir = path.join(run.modelDir, "shards", "info");
  const jobFile = path.join(dir, "job.json");
  await run.files.writeFile(
    jobFile,
    JSON.stringify({ protocol: 1, subcommand: "info", model: { path: run.job.model.path, dtype: run.job.model.dtype }, device: "cuda" }) +
      "\n",
  );
  const outDir = path.join(dir, "runner");
  await place.run({
    subcommand: "info",
    jobFile,
    outDir,
    runPath: `${run.runPath ?? ""}/shards/info`,
    ...(run.signal ? { signal: run.signal } : {}),
  });
  const info = JSON.parse(await fs.readFile(path.join(outDir, "info.json"), "utf8")) as { cuda_device_count?: number };
  const count = info.cuda_device_count ?? 0;
  if (count < 1)
    throw new RunnerError("resources", "`shards: auto` runs one shard per GPU, and the runner sees none where the shards run", 3);
  return count;
}
