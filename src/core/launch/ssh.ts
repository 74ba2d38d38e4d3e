// Run bprof-runner on a host over SSH: the job goes there, the runner's events stream back
// through the connection as they would from a local process, and its output comes back at the
// end. The host keeps the run's folder, so `--resume` continues there.
import { hostCommand, hostName, hostPathWord, runOnHost, runOnHostOrFail, shellWord, unreachable } from "../base/host";
import { runnerArguments } from "./local";
import { announcingBuilds, runnerOn } from "../runner/locate";
import { runnerOutcome, type RunnerSummary } from "./outcome";
import { followEventProcess } from "./process";
import { downloadRunnerOutput, prepareRemoteFolder, uploadJob, type RemoteFolder } from "./remoteFolder";
import { RunnerError } from "../base/runnerError";
import { GATHER_SCRIPT, type ShardPlace } from "./shards";
import type { Target } from "../config/target";
import type { LaunchInvocation } from "./targetTypes";

/** sh's exit code for a command it cannot find. */
const COMMAND_NOT_FOUND = 127;

export async function runOverSsh(target: Extract<Target, { kind: "ssh" }>, invocation: LaunchInvocation): Promise<RunnerSummary> {
  const where = ` on ${hostName(target.host)}`;
  invocation.onStatus?.(`copying the job to ${hostName(target.host)}`);
  const folder = await prepareRemoteFolder(target.host, target.workdir, invocation.runPath);
  await refuseIfRunnerAlive(folder);
  await uploadJob(folder, invocation.jobFile);

  const runner =
    target.runner ??
    (await runnerOn(target.host, announcingBuilds(invocation.runner, invocation.onStatus, target.host), invocation.signal));
  const { file, args } = hostCommand(target.host, runnerScript(folder, runner, invocation));
  invocation.onStatus?.(`running bprof-runner${where} in ${folder.dir}`);
  const end = await followEventProcess(file, args, {
    where,
    cancel: () => stopRemoteRunner(folder),
    ...(invocation.onEvent ? { onEvent: invocation.onEvent } : {}),
    ...(invocation.signal ? { signal: invocation.signal } : {}),
  });
  if (end.notFound) throw new RunnerError("target_unreachable", "ssh (the OpenSSH client) is not installed on this machine");
  if (end.exitCode === 255 && end.last?.type !== "error" && !end.cancelled) throw unreachable(target.host, end.stderrTail);
  if (end.exitCode === COMMAND_NOT_FOUND && end.last === undefined) {
    const named =
      target.runner !== undefined
        ? "target.ssh.runner names none: fix it, or leave it out and bprof builds one there"
        : "the one built there is gone: run again to build it";
    throw new RunnerError("runner_not_found", `bprof-runner not found${where} at \`${runner}\`: ${named}`);
  }
  const summary = runnerOutcome(end);
  invocation.onStatus?.(`copying the results back from ${hostName(target.host)}`);
  await downloadRunnerOutput(folder, invocation.files, invocation.outDir);
  return summary;
}

/**
 * Runs the runner in the model's folder on the host, its pid written first so a cancel can reach
 * it: closing the connection would not (no terminal, no hangup signal).
 */
function runnerScript(folder: RemoteFolder, runner: string, invocation: LaunchInvocation): string {
  const args = runnerArguments(invocation.subcommand, "job.json", "runner", invocation.threads).map(shellWord).join(" ");
  return `cd ${shellWord(folder.dir)} && echo $$ > runner.pid && exec ${hostPathWord(runner)} ${args}`;
}

/**
 * A runner of an earlier attempt that still runs in the folder (the connection dropped, the
 * runner did not notice): a second one would write the same files, so the run waits for it.
 */
async function refuseIfRunnerAlive(folder: RemoteFolder): Promise<void> {
  const pidFile = `${shellWord(folder.dir)}/runner.pid`;
  // The pid must still be a runner started here (its arguments), not a process that reused it.
  const script = `pid="$(cat ${pidFile} 2>/dev/null)" && [ -n "$pid" ] && ps -p "$pid" -o args= | grep -q -- '--job job.json --out runner' && echo "$pid"`;
  const result = await runOnHost(folder.host, script, { what: "look for a runner from before" });
  const pid = result.stdout.trim();
  if (result.exitCode === 0 && pid !== "") {
    throw new RunnerError(
      "target_busy",
      `a bprof-runner of this run still runs on ${hostName(folder.host)} (pid ${pid}, ${folder.dir}): let it finish, or stop it with \`kill ${pid}\` there, then resume`,
    );
  }
}

/** SIGTERM to the runner on the host: it finishes its item, reports `cancelled` and exits. */
async function stopRemoteRunner(folder: RemoteFolder): Promise<void> {
  await runOnHost(folder.host, `kill -TERM "$(cat ${shellWord(folder.dir)}/runner.pid)"`, { what: "stop the runner" });
}

/**
 * A host over SSH as the shards' place (launch/shards.ts): each shard a runner there in its own
 * folder, <workdir>/<run>/models/<name>/shards/<i>, its output copied back when it ends; the
 * merge gathers the shards' files there and runs the whole job in the model's folder. The target
 * names its runner: one resolved before, so that the shards do not each build it.
 */
export function sshPlace(
  target: Extract<Target, { kind: "ssh" }> & { runner: string },
  runPath: string,
  runner: LaunchInvocation["runner"],
  files: LaunchInvocation["files"],
): ShardPlace {
  return {
    cores: async () => Number((await runOnHostOrFail(target.host, "nproc", { what: "count the host's cores" })).trim()) || 1,
    run: (job) =>
      runOverSsh(target, {
        runner,
        files,
        subcommand: job.subcommand,
        jobFile: job.jobFile,
        outDir: job.outDir,
        runPath: job.runPath,
        ...(job.threads !== undefined ? { threads: job.threads } : {}),
        ...(job.onEvent ? { onEvent: job.onEvent } : {}),
        ...(job.signal ? { signal: job.signal } : {}),
      }),
    gather: async () => {
      const folder = await prepareRemoteFolder(target.host, target.workdir, runPath);
      await runOnHostOrFail(target.host, [`cd ${shellWord(folder.dir)} || exit 1`, ...GATHER_SCRIPT].join("\n"), {
        what: `gather the shards' files in ${folder.dir}`,
      });
    },
  };
}
