// Run bprof-runner as a Slurm batch job: one sbatch per model, from this machine or from a login
// node over SSH. The job's stdout (the runner's events) goes to a file in the model's folder,
// which is read as it grows, so progress shows as it would locally. The job's id is kept in the
// run folder: a run resumed while its job still runs follows that job instead of starting another.
import { execa } from "execa";
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { StringDecoder } from "node:string_decoder";
import { hostCommand, hostName, hostPathWord, runOnHost, shellWord, type Host } from "../base/host";
import { runnerArguments } from "./local";
import { EventLineReader, lastLines, runnerOutcome, type RunnerSummary } from "./outcome";
import { downloadRunnerOutput, prepareRemoteFolder, uploadJob, uploadText, type RemoteFolder } from "./remoteFolder";
import { RunnerError } from "../base/runnerError";
import { buildFactsOn, sourcesOnHost } from "../runner/build";
import { announcingBuilds, onThisMachine, runnerOn } from "../runner/locate";
import { BUILD_SCRIPT, runnerSources } from "../runner/sources";
import type { SlurmTarget } from "../config/target";
import type { LaunchInvocation } from "./targetTypes";

/** States in which a job may still run (squeue's long names). */
export const ACTIVE_STATES: ReadonlySet<string> = new Set([
  "PENDING",
  "CONFIGURING",
  "RUNNING",
  "COMPLETING",
  "SUSPENDED",
  "REQUEUED",
  "REQUEUE_HOLD",
  "REQUEUE_FED",
  "RESIZING",
  "SIGNALING",
  "STAGE_OUT",
  "STOPPED",
  "RESV_DEL_HOLD",
]);
/** After scancel, how long to wait for the runner's last words before giving up on them. */
const CANCEL_GRACE_MS = 120_000;

/** What `scontrol show job` says about a job; GONE once Slurm has forgotten it. */
export interface SlurmJobState {
  state: string;
  reason?: string;
  exitCode?: number;
  node?: string;
}

/** The run folder's record of the job, to follow it again after an interruption. */
interface SlurmRecord {
  job_id: string;
  dir: string;
  host: string;
}

export async function runOnSlurm(target: SlurmTarget, invocation: LaunchInvocation): Promise<RunnerSummary> {
  const localDir = path.dirname(invocation.jobFile);
  const inPlace = target.workdir === undefined;
  const folder: RemoteFolder = inPlace
    ? { host: target.host, dir: localDir, home: "", local: invocation.files }
    : await prepareRemoteFolder(target.host, target.workdir!, invocation.runPath);
  if (inPlace) await invocation.files.folder(invocation.outDir);
  else await uploadJob(folder, invocation.jobFile);

  const recordFile = path.join(localDir, "slurm.json");
  let jobId = await stillActiveJob(target.host, recordFile, folder.dir);
  if (jobId) invocation.onStatus?.(`following Slurm job ${jobId}, still queued or running from before`);
  else {
    jobId = await submit(target, folder, invocation);
    await invocation.files.writeJson(recordFile, { job_id: jobId, dir: folder.dir, host: hostName(target.host) } satisfies SlurmRecord);
    invocation.onStatus?.(`submitted Slurm job ${jobId} on ${hostName(target.host)}`);
  }

  const end = await followJob(target, folder, jobId, invocation);
  const summary = runnerOutcome(end);
  if (!inPlace) {
    invocation.onStatus?.(`copying the results back from ${hostName(target.host)}`);
    await downloadRunnerOutput(folder, invocation.files, invocation.outDir);
  }
  return summary;
}

/** The job id of the record when that job is still queued or running in the same folder. */
async function stillActiveJob(host: Host, recordFile: string, dir: string): Promise<string | undefined> {
  const record = await fs.readFile(recordFile, "utf8").then(
    (t) => JSON.parse(t) as SlurmRecord,
    () => undefined,
  );
  if (!record || record.dir !== dir || !/^\d+$/.test(record.job_id)) return undefined;
  const state = await jobState(host, record.job_id);
  return ACTIVE_STATES.has(state.state) ? record.job_id : undefined;
}

/** Writes bprof.sbatch next to the job and submits it; the job's id. */
async function submit(target: SlurmTarget, folder: RemoteFolder, invocation: LaunchInvocation): Promise<string> {
  const runner = await runnerExec(target, invocation);
  const threads = invocation.threads ?? target.cpusPerTask;
  const args = runnerArguments(invocation.subcommand, "job.json", "runner", threads).map(shellWord).join(" ");
  const script = [
    "#!/bin/sh",
    `# Benchmark Profiler: ${invocation.runPath}. The runner's events go to slurm-<job>.events.jsonl,`,
    "# which the profiler reads while the job runs; its stderr goes to slurm-<job>.out.",
    `${runner} ${args} > "slurm-$SLURM_JOB_ID.events.jsonl"`,
    "",
  ].join("\n");
  return sbatch(target, folder, "bprof.sbatch", script, [
    `--job-name=bprof:${path.basename(invocation.runPath)}`,
    "--output=slurm-%j.out",
    ...target.sbatchOptions,
  ]);
}

/** Writes `script` as `name` in the folder and submits it with `options`; the job's id. */
export async function sbatch(target: SlurmTarget, folder: RemoteFolder, name: string, script: string, options: string[]): Promise<string> {
  if (folder.local) await folder.local.writeFile(path.join(folder.dir, name), script);
  else await uploadText(folder, name, script);
  const words = options.map(shellWord).join(" ");
  const result = await runOnHost(target.host, `cd ${shellWord(folder.dir)} && sbatch --parsable ${words} ${shellWord(name)}`, {
    what: "submit the Slurm job",
  });
  const id = /^(\d+)/.exec(result.stdout.trim())?.[1];
  if (result.exitCode !== 0 || !id) {
    const why =
      lastLines(result.stderr, 3)
        .replace(/^sbatch: error: /gm, "")
        .replace(/\n/g, "; ") ||
      result.stdout.trim() ||
      `exit ${result.exitCode}`;
    if (result.exitCode === 127)
      throw new RunnerError(
        "target_failed",
        `sbatch not found on ${hostName(target.host)}: install Slurm's client there${target.host.kind === "local" ? ", or submit from a login node with target.slurm.ssh" : ""}`,
      );
    throw new RunnerError(
      "target_failed",
      `sbatch refused the job on ${hostName(target.host)}: ${why}. Check target.slurm (partition, time, gpus, mem, account, sbatch_args)`,
    );
  }
  return id;
}

/**
 * How the job script starts the runner: the one named, or the one built on the submit host (this
 * machine or the login node; the compute nodes see it through the shared home). When the submit
 * host cannot build (a login node without compilers or libtorch), the job builds it on its node
 * first, into the same cache, and runs it; its build's output goes to slurm-<job>.out.
 */
export async function runnerExec(
  target: SlurmTarget,
  invocation: Pick<LaunchInvocation, "runner" | "onStatus" | "signal">,
): Promise<string> {
  if (target.runner !== undefined) return `exec ${hostPathWord(target.runner)}`;
  try {
    return `exec ${shellWord(await runnerOn(target.host, announcingBuilds(invocation.runner, invocation.onStatus, target.host), invocation.signal))}`;
  } catch (e) {
    if (!(e instanceof RunnerError && e.code === "runner_build_needs")) throw e;
  }
  const sources = await runnerSources(invocation.runner.sourcesDir);
  if (!sources)
    throw new RunnerError("runner_not_found", `the runner's sources are not at ${invocation.runner.sourcesDir} (a broken install)`);
  const request = { host: target.host, sources, cacheDir: invocation.runner.cacheDir, ...onThisMachine(target.host, invocation.runner) };
  const facts = await buildFactsOn(request);
  const dir = target.host.kind === "local" ? sources.dir : await sourcesOnHost(target.host, sources, facts.cache);
  invocation.onStatus?.(
    `${hostName(target.host)} lacks ${facts.missing.join(", ")} to build bprof-runner: the job builds it on its node first`,
  );
  const env = [
    `BPROF_SOURCES_HASH=${sources.hash}`,
    ...(target.host.kind === "local" ? [`BPROF_RUNNER_CACHE=${shellWord(invocation.runner.cacheDir)}`] : []),
  ];
  return `${env.join(" ")} exec sh ${shellWord(`${dir}/${BUILD_SCRIPT}`)} exec`;
}

/** Reads the job's events as they come and its state until it ends; cancels it on the signal. */
async function followJob(target: SlurmTarget, folder: RemoteFolder, jobId: string, invocation: LaunchInvocation) {
  const reader = new EventLineReader(invocation.onEvent);
  const events = new GrowingFile(target.host, path.posix.join(folder.dir, `slurm-${jobId}.events.jsonl`));
  let cancelledAt: number | undefined;
  let reported = "";
  let state: SlurmJobState;
  for (;;) {
    if (invocation.signal?.aborted && cancelledAt === undefined) {
      cancelledAt = Date.now();
      invocation.onStatus?.(`cancelling Slurm job ${jobId}`);
      await runOnHost(target.host, `scancel ${shellWord(jobId)}`, { what: "cancel the Slurm job" });
    }
    state = await jobState(target.host, jobId);
    reader.push(await events.readNew());
    const status = describeState(jobId, state);
    if (status !== reported) invocation.onStatus?.((reported = status));
    if (!ACTIVE_STATES.has(state.state)) break;
    if (cancelledAt !== undefined && Date.now() - cancelledAt > CANCEL_GRACE_MS) break;
    await sleep(target.pollSeconds * 1000, invocation.signal, cancelledAt === undefined);
  }
  reader.push(await events.readNew());
  reader.end();
  const output = await runOnHost(target.host, `tail -n 20 ${shellWord(path.posix.join(folder.dir, `slurm-${jobId}.out`))} 2>/dev/null`, {
    what: "read the job's output",
  });
  const where = ` in Slurm job ${jobId}`;
  // A job Slurm has already forgotten (MinJobAge) has no exit code left: its runner's summary says it ended well.
  const exitCode = state.exitCode ?? (state.state === "GONE" && reader.last?.type === "summary" ? 0 : undefined);
  const end = { last: reader.last, exitCode, cancelled: cancelledAt !== undefined, stderrTail: output.stdout, where };
  if (end.last?.type !== "summary" && end.last?.type !== "error" && !end.cancelled) throw jobEndError(state, jobId, output.stdout, target);
  return end;
}

/** Why a job that left no final event ended, in Slurm's words and what to do. */
function jobEndError(state: SlurmJobState, jobId: string, output: string, target: SlurmTarget): RunnerError {
  const tail = lastLines(output, 5);
  const detail = tail ? `\n${tail}` : "";
  switch (state.state) {
    case "TIMEOUT":
      return new RunnerError(
        "slurm_timeout",
        `Slurm job ${jobId} reached its time limit${target.sbatchOptions.some((o) => o.startsWith("--time=")) ? " (target.slurm.time)" : ""}; \`bprof run --resume\` continues where it stopped${detail}`,
      );
    case "OUT_OF_MEMORY":
      return new RunnerError("resources", `Slurm job ${jobId} ran out of memory: raise target.slurm.mem${detail}`);
    case "CANCELLED":
      return new RunnerError(
        "cancelled",
        `Slurm job ${jobId} was cancelled outside the profiler (scancel or an administrator); \`bprof run --resume\` continues where it stopped`,
      );
    case "PREEMPTED":
    case "NODE_FAIL":
    case "BOOT_FAIL":
      return new RunnerError(
        "slurm_failed",
        `Slurm job ${jobId} ended ${state.state}${state.node ? ` on ${state.node}` : ""}; \`bprof run --resume\` continues where it stopped${detail}`,
      );
    default: {
      const notFound = /not found|No such file/i.test(output) && state.exitCode === 127;
      if (notFound) {
        const runner = target.runner ?? `the runner built on ${hostName(target.host)}`;
        const fix = target.runner
          ? "set target.slurm.runner to a path the compute nodes can read"
          : "the compute nodes must see its cache (~/.cache/bprof/runner, a shared home), or set target.slurm.runner";
        return new RunnerError(
          "runner_not_found",
          `bprof-runner not found on the Slurm node${state.node ? ` ${state.node}` : ""} at \`${runner}\`: ${fix}${detail}`,
        );
      }
      return new RunnerError(
        "internal",
        `Slurm job ${jobId} ended ${state.state}${state.exitCode !== undefined ? ` with exit code ${state.exitCode}` : ""} without a final event from the runner${detail}`,
      );
    }
  }
}

export function describeState(jobId: string, state: SlurmJobState): string {
  if (state.state === "PENDING") return `Slurm job ${jobId} pending${state.reason && state.reason !== "None" ? ` (${state.reason})` : ""}`;
  if (state.state === "RUNNING") return `Slurm job ${jobId} running${state.node ? ` on ${state.node}` : ""}`;
  return `Slurm job ${jobId} ${state.state.toLowerCase()}`;
}

/** The job's state from `scontrol show job -o`; GONE when Slurm no longer knows it. */
export async function jobState(host: Host, jobId: string): Promise<SlurmJobState> {
  const result = await runOnHost(host, `scontrol show job -o ${shellWord(jobId)}`, { what: "read the Slurm job's state" });
  if (result.exitCode !== 0) {
    if (/Invalid job id/i.test(result.stderr)) return { state: "GONE" };
    throw new RunnerError(
      "target_failed",
      `scontrol could not read Slurm job ${jobId} on ${hostName(host)}: ${lastLines(result.stderr, 2) || `exit ${result.exitCode}`}`,
    );
  }
  return parseJobState(result.stdout);
}

/** JobState, Reason, ExitCode (its first half) and NodeList of one `scontrol show job -o` line. */
export function parseJobState(line: string): SlurmJobState {
  const field = (name: string) => new RegExp(`(?:^|\\s)${name}=(\\S*)`).exec(line)?.[1];
  const exit = field("ExitCode");
  const node = field("NodeList");
  const reason = field("Reason");
  return {
    state: field("JobState") ?? "UNKNOWN",
    ...(reason ? { reason } : {}),
    ...(exit && /^\d+:\d+$/.test(exit) ? { exitCode: Number(exit.split(":")[0]) } : {}),
    ...(node && node !== "(null)" ? { node } : {}),
  };
}

/** A file on the host read in increments, by byte offset, decoding UTF-8 across reads. */
export class GrowingFile {
  private offset = 0;
  private readonly decoder = new StringDecoder("utf8");

  constructor(
    private readonly host: Host,
    private readonly file: string,
  ) {}

  async readNew(): Promise<string> {
    const { file, args } = hostCommand(this.host, `tail -c +${this.offset + 1} ${shellWord(this.file)} 2>/dev/null || true`);
    const result = await execa(file, args, { reject: false, stdin: "ignore", encoding: "buffer" });
    if (result.exitCode !== 0) return "";
    const bytes = Buffer.from(result.stdout as Uint8Array);
    this.offset += bytes.length;
    return this.decoder.write(bytes);
  }
}

/** Waits, waking early on the signal when `interruptible`. */
export function sleep(ms: number, signal: AbortSignal | undefined, interruptible: boolean): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    if (interruptible) signal?.addEventListener("abort", done, { once: true });
  });
}
