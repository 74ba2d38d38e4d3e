// A model's profile in shards on Slurm (docs/targets.md, "Shards"): one array job, a task per
// shard that has not finished (each with the job's resources), and a merge job that depends on it
// (`afterok`): it checks that every shard folder holds a finished shard of this job, gathers their
// files and runs the whole job on them, as the local merge does (launch/shards.ts). The shards'
// event files are read as they grow, so their progress is one progress; a cancel scancels both
// jobs. The two job ids are kept in the run folder: a resumed run follows them while they live.
import { promises as fs } from "node:fs";
import * as path from "node:path";
import type { ProfileJob } from "../plan/job";
import { jobFingerprint, shardJob, splitJob } from "../plan/shards";
import type { RunnerEvent } from "./events";
import { hostName, runOnHost, runOnHostOrFail, shellWord } from "../base/host";
import { runnerArguments } from "./local";
import { EventLineReader, lastLines, runnerOutcome, type RunnerSummary } from "./outcome";
import { downloadRunnerOutput, prepareRemoteFolder, uploadJob, type RemoteFolder } from "./remoteFolder";
import { RunnerError } from "../base/runnerError";
import { GATHER_SCRIPT, shardDir, writeShardJob } from "./shards";
import { ACTIVE_STATES, describeState, GrowingFile, parseJobState, runnerExec, sbatch, sleep, type SlurmJobState } from "./slurm";
import type { SlurmTarget } from "../config/target";
import type { LaunchInvocation } from "./targetTypes";

/** After scancel, how long to wait for the runners' last words. */
const CANCEL_GRACE_MS = 120_000;

export interface SlurmShardedRun extends Omit<LaunchInvocation, "onEvent"> {
  job: ProfileJob;
  jobText: string;
  count: number;
  resume: boolean;
  onEvent?: (event: RunnerEvent, shard: number | undefined) => void;
}

/** The run folder's record of the two jobs (slurm-shards.json). */
interface ShardsRecord {
  array_id: string;
  merge_id: string;
  /** The shards the array runs. */
  shards: number[];
  dir: string;
  host: string;
}

export async function runShardsOnSlurm(target: SlurmTarget, run: SlurmShardedRun): Promise<RunnerSummary> {
  const localDir = path.dirname(run.jobFile);
  const inPlace = target.workdir === undefined;
  const folder: RemoteFolder = inPlace
    ? { host: target.host, dir: localDir, home: "", local: run.files }
    : await prepareRemoteFolder(target.host, target.workdir!, run.runPath);
  const plans = splitJob(run.job, run.count);
  const of = jobFingerprint(run.jobText);
  for (const [index] of plans.entries()) {
    await writeShardJob(run.files, shardDir(localDir, index), shardJob(run.job, plans, index, of), run.resume);
  }
  await runOnHostOrFail(
    target.host,
    `cd ${shellWord(folder.dir)} && mkdir -p runner ${plans.map((_, i) => `shards/${i}/runner`).join(" ")}`,
    {
      what: `create the shard folders in ${folder.dir}`,
    },
  );
  if (!inPlace) {
    await uploadJob(folder, run.jobFile);
    for (const [i] of plans.entries()) await uploadJob(folder, path.join(shardDir(localDir, i), "job.json"), `shards/${i}/job.json`);
  }

  const recordFile = path.join(localDir, "slurm-shards.json");
  let record = await stillActive(target, recordFile, folder.dir);
  if (record) run.onStatus?.(`following Slurm jobs ${record.array_id} (shards) and ${record.merge_id} (merge), still queued or running`);
  else {
    const pending: number[] = [];
    for (const [i] of plans.entries()) if (!(await finishedOnHost(folder, i, of, plans.length))) pending.push(i);
    record = await submitBoth(target, folder, run, pending, of, plans.length);
    await run.files.writeJson(recordFile, record);
    const earlier = plans.length - pending.length;
    run.onStatus?.(
      (pending.length > 0
        ? `submitted Slurm array job ${record.array_id} (${pending.length} shard${pending.length === 1 ? "" : "s"}${earlier > 0 ? `; ${earlier} finished earlier` : ""}) and `
        : "") + `merge job ${record.merge_id} on ${hostName(target.host)}`,
    );
  }
  const summary = await followBoth(target, folder, record, run);
  if (!inPlace) {
    run.onStatus?.(`copying the results back from ${hostName(target.host)}`);
    await downloadRunnerOutput(folder, run.files, run.outDir);
  }
  return summary;
}

/** The record of jobs of this folder whose merge may still run. */
async function stillActive(target: SlurmTarget, recordFile: string, dir: string): Promise<ShardsRecord | undefined> {
  const record = await fs.readFile(recordFile, "utf8").then(
    (t) => JSON.parse(t) as ShardsRecord,
    () => undefined,
  );
  if (!record || record.dir !== dir || !/^\d+$/.test(record.merge_id)) return undefined;
  const merge = await taskStates(target, record.merge_id);
  return merge.some((s) => ACTIVE_STATES.has(s.state)) ? record : undefined;
}

/** Has shard `index` of this job finished on the host (its shard.json, the runner's last file)? */
async function finishedOnHost(folder: RemoteFolder, index: number, of: string, count: number): Promise<boolean> {
  const file = path.posix.join(folder.dir, "shards", String(index), "runner", "shard.json");
  const result = await runOnHost(folder.host, `cat ${shellWord(file)} 2>/dev/null`, { what: "read a shard's manifest" });
  if (result.exitCode !== 0) return false;
  try {
    const manifest = JSON.parse(result.stdout) as { of?: string; index?: number; count?: number };
    return manifest.of === of && manifest.index === index && manifest.count === count;
  } catch {
    return false;
  }
}

async function submitBoth(
  target: SlurmTarget,
  folder: RemoteFolder,
  run: SlurmShardedRun,
  pending: number[],
  of: string,
  count: number,
): Promise<ShardsRecord> {
  const runner = await runnerExec(target, run);
  const threads = run.threads ?? target.cpusPerTask;
  const name = path.basename(run.runPath);
  let arrayId = "";
  if (pending.length > 0) {
    const args = runnerArguments("profile", "job.json", "runner", threads).map(shellWord).join(" ");
    const script = [
      "#!/bin/sh",
      `# Benchmark Profiler: ${run.runPath}, one task per shard of its profile. Each task's events go to`,
      "# shards/<task>/slurm-<array job>.events.jsonl, its stderr to shards/<task>/slurm-<array job>.out.",
      'cd "shards/$SLURM_ARRAY_TASK_ID" || exit 1',
      `${runner} ${args} > "slurm-$SLURM_ARRAY_JOB_ID.events.jsonl"`,
      "",
    ].join("\n");
    arrayId = await sbatch(target, folder, "bprof-shards.sbatch", script, [
      `--job-name=bprof:${name}:shards`,
      `--array=${pending.join(",")}`,
      "--output=shards/%a/slurm-%A.out",
      ...target.sbatchOptions,
    ]);
  }
  const mergeId = await sbatch(target, folder, "bprof-merge.sbatch", mergeScript(run, runner, threads, of, count), [
    `--job-name=bprof:${name}:merge`,
    "--output=slurm-%j.out",
    ...(arrayId ? [`--dependency=afterok:${arrayId}`, "--kill-on-invalid-dep=yes"] : []),
    ...target.sbatchOptions,
  ]);
  return { array_id: arrayId, merge_id: mergeId, shards: pending, dir: folder.dir, host: hostName(target.host) };
}

/**
 * The merge job: refuse a shard folder that holds no finished shard of this job (its shard.json
 * names the job's fingerprint, its index and the count), gather every shard's files into runner/
 * (hard links where the file system allows, through a temporary name), then the whole job there.
 */
function mergeScript(run: SlurmShardedRun, runner: string, threads: number | undefined, of: string, count: number): string {
  const args = runnerArguments("profile", "job.json", "runner", threads).map(shellWord).join(" ");
  return [
    "#!/bin/sh",
    `# Benchmark Profiler: ${run.runPath}, the merge of its ${count} shards: their files are gathered`,
    "# into runner/ and the whole job reads them back there. Its events go to slurm-<job>.events.jsonl.",
    `count=${count}`,
    "i=0",
    'while [ "$i" -lt "$count" ]; do',
    '  m="shards/$i/runner/shard.json"',
    `  if ! grep -q '"of": "${of}"' "$m" 2>/dev/null || ! grep -q "\\"index\\": $i," "$m" || ! grep -q "\\"count\\": $count," "$m"; then`,
    `    echo '{"type":"error","code":"shard_mismatch","message":"'"$(pwd)/shards/$i/runner"' holds no finished shard '"$((i + 1))"' of '"$count"' of this job (${of})"}' > "slurm-$SLURM_JOB_ID.events.jsonl"`,
    "    exit 2",
    "  fi",
    "  i=$((i + 1))",
    "done",
    ...GATHER_SCRIPT,
    `${runner} ${args} > "slurm-$SLURM_JOB_ID.events.jsonl"`,
    "",
  ].join("\n");
}

/** Every task's state of a job (an array job has a line per task; one not started yet may stand for several). */
async function taskStates(target: SlurmTarget, jobId: string): Promise<(SlurmJobState & { task?: string })[]> {
  const result = await runOnHost(target.host, `scontrol show job -o ${shellWord(jobId)}`, { what: "read the Slurm job's state" });
  if (result.exitCode !== 0) {
    if (/Invalid job id/i.test(result.stderr)) return [{ state: "GONE" }];
    throw new RunnerError(
      "target_failed",
      `scontrol could not read Slurm job ${jobId} on ${hostName(target.host)}: ${lastLines(result.stderr, 2) || `exit ${result.exitCode}`}`,
    );
  }
  return result.stdout
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((line) => {
      const task = /(?:^|\s)ArrayTaskId=(\S+)/.exec(line)?.[1];
      return { ...parseJobState(line), ...(task ? { task } : {}) };
    });
}

/** Follows the array's tasks and then the merge to their ends; the merge's summary, or the first shard's failure. */
async function followBoth(target: SlurmTarget, folder: RemoteFolder, record: ShardsRecord, run: SlurmShardedRun): Promise<RunnerSummary> {
  const shards = record.shards.map((index) => {
    const reader = new EventLineReader((e) => run.onEvent?.(e, index));
    const file = new GrowingFile(
      target.host,
      path.posix.join(folder.dir, "shards", String(index), `slurm-${record.array_id}.events.jsonl`),
    );
    return { index, reader, file };
  });
  const mergeReader = new EventLineReader((e) => run.onEvent?.(e, undefined));
  const mergeFile = new GrowingFile(target.host, path.posix.join(folder.dir, `slurm-${record.merge_id}.events.jsonl`));
  let cancelledAt: number | undefined;
  let reported = "";
  let arrayStates: (SlurmJobState & { task?: string })[] = [];
  let mergeState: SlurmJobState;
  for (;;) {
    if (run.signal?.aborted && cancelledAt === undefined) {
      cancelledAt = Date.now();
      run.onStatus?.(`cancelling Slurm jobs ${[record.array_id, record.merge_id].filter(Boolean).join(" and ")}`);
      await runOnHost(target.host, `scancel ${[record.array_id, record.merge_id].filter(Boolean).map(shellWord).join(" ")}`, {
        what: "cancel the Slurm jobs",
      });
    }
    if (record.array_id) arrayStates = await taskStates(target, record.array_id);
    mergeState = (await taskStates(target, record.merge_id))[0]!;
    for (const s of shards) s.reader.push(await s.file.readNew());
    mergeReader.push(await mergeFile.readNew());
    const status = describeBoth(record, arrayStates, mergeState);
    if (status !== reported) run.onStatus?.((reported = status));
    const active = arrayStates.some((s) => ACTIVE_STATES.has(s.state)) || ACTIVE_STATES.has(mergeState.state);
    if (!active) break;
    if (cancelledAt !== undefined && Date.now() - cancelledAt > CANCEL_GRACE_MS) break;
    await sleep(target.pollSeconds * 1000, run.signal, cancelledAt === undefined);
  }
  for (const s of shards) {
    s.reader.push(await s.file.readNew());
    s.reader.end();
  }
  mergeReader.push(await mergeFile.readNew());
  mergeReader.end();
  const cancelled = cancelledAt !== undefined;
  // a shard that failed is the cause: the merge only never ran
  for (const s of shards) {
    if (s.reader.last?.type === "summary") continue;
    const state = arrayStates.find((t) => t.task === String(s.index));
    const out = await runOnHost(
      target.host,
      `tail -n 20 ${shellWord(path.posix.join(folder.dir, "shards", String(s.index), `slurm-${record.array_id}.out`))} 2>/dev/null`,
      { what: "read the shard's output" },
    );
    const where = ` in Slurm job ${record.array_id}_${s.index} (shard ${s.index + 1}, ${path.posix.join(folder.dir, "shards", String(s.index))})`;
    runnerOutcome({ last: s.reader.last, exitCode: state?.exitCode, cancelled, stderrTail: out.stdout, where });
    if (!cancelled)
      throw new RunnerError(
        state?.state === "TIMEOUT" ? "slurm_timeout" : "slurm_failed",
        `Slurm job ${record.array_id}_${s.index} (shard ${s.index + 1}) ended ${state?.state ?? "without a state"} without a final event; \`bprof run --resume\` runs the shards that did not finish`,
      );
  }
  const out = await runOnHost(
    target.host,
    `tail -n 20 ${shellWord(path.posix.join(folder.dir, `slurm-${record.merge_id}.out`))} 2>/dev/null`,
    {
      what: "read the merge job's output",
    },
  );
  const exitCode = mergeState!.exitCode ?? (mergeState!.state === "GONE" && mergeReader.last?.type === "summary" ? 0 : undefined);
  if (!mergeReader.last && !cancelled)
    throw new RunnerError(
      "slurm_failed",
      `the merge, Slurm job ${record.merge_id}, ended ${mergeState!.state}${mergeState!.reason && mergeState!.reason !== "None" ? ` (${mergeState!.reason})` : ""} without a final event; \`bprof run --resume\` submits it again${out.stdout ? `:\n${lastLines(out.stdout, 5)}` : ""}`,
    );
  return runnerOutcome({
    last: mergeReader.last,
    exitCode,
    cancelled,
    stderrTail: out.stdout,
    where: ` in Slurm job ${record.merge_id} (merge)`,
  });
}

function describeBoth(record: ShardsRecord, array: readonly SlurmJobState[], merge: SlurmJobState): string {
  const running = array.filter((s) => s.state === "RUNNING").length;
  const pending = array.filter((s) => s.state === "PENDING").length;
  const shards = record.array_id ? `shards (job ${record.array_id}): ${running} running${pending > 0 ? `, ${pending} pending` : ""}; ` : "";
  return `${shards}${describeState(record.merge_id, merge).replace(/^Slurm job/, "merge job")}`;
}
