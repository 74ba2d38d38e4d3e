// Where a profile's runner runs, resolved from the config's `target`, and the one entry point
// that launches it there.
import * as os from "node:os";
import * as path from "node:path";
import type { SlurmSpec, SshConnectionSpec, TargetSpec } from "../config/types";
import { hostName, LOCAL_HOST, type Host, type SshConnection } from "../base/host";
import { usableCores } from "./cores";
import { runLocal } from "./local";
import { RunnerError } from "../base/runnerError";
import type { RunnerSummary } from "./outcome";
import { runOnSlurm } from "./slurm";
import { runOverSsh, sshPlace } from "./ssh";
import type { LaunchInvocation, SlurmTarget, Target } from "./targetTypes";
import { runShards, runShardsLocally, type ShardedRun } from "./shards";
import { runShardsOnSlurm } from "./slurmShards";
import { announcingBuilds, runnerOn } from "../runner/locate";

/** Where runs of a target keep their files on the host when the config does not say. */
export const DEFAULT_REMOTE_WORKDIR = ".bprof/runs";
export const DEFAULT_POLL_SECONDS = 5;

/** The config's `target` with local paths made absolute against the config's folder. */
export function resolveTarget(spec: TargetSpec | undefined, configDir: string): Target {
  if (spec === undefined || spec === "local") return { kind: "local" };
  if ("ssh" in spec) {
    const { runner, workdir, ...connection } = spec.ssh;
    return {
      kind: "ssh",
      host: { kind: "ssh", connection: resolveConnection(connection, configDir) },
      ...(runner !== undefined ? { runner } : {}),
      workdir: workdir ?? DEFAULT_REMOTE_WORKDIR,
    };
  }
  return resolveSlurm(spec.slurm, configDir);
}

function resolveSlurm(spec: SlurmSpec, configDir: string): SlurmTarget {
  const host: Host = spec.ssh ? { kind: "ssh", connection: resolveConnection(spec.ssh, configDir) } : LOCAL_HOST;
  const options = [
    ...(spec.partition ? [`--partition=${spec.partition}`] : []),
    ...(spec.time ? [`--time=${spec.time}`] : []),
    ...(spec.gpus !== undefined ? [`--gpus=${spec.gpus}`] : []),
    ...(spec.cpus_per_task !== undefined ? [`--cpus-per-task=${spec.cpus_per_task}`] : []),
    ...(spec.mem ? [`--mem=${spec.mem}`] : []),
    ...(spec.account ? [`--account=${spec.account}`] : []),
    ...(spec.sbatch_args ?? []),
  ];
  const onThisMachine = host.kind === "local";
  const workdir = spec.workdir ?? (onThisMachine ? undefined : DEFAULT_REMOTE_WORKDIR);
  return {
    kind: "slurm",
    host,
    ...(spec.runner !== undefined ? { runner: spec.runner } : {}),
    // From this machine, a relative workdir means what every other path of the config means.
    ...(workdir !== undefined ? { workdir: onThisMachine ? path.resolve(configDir, expandHome(workdir)) : workdir } : {}),
    sbatchOptions: options,
    pollSeconds: spec.poll_seconds ?? DEFAULT_POLL_SECONDS,
    ...(spec.cpus_per_task !== undefined ? { cpusPerTask: spec.cpus_per_task } : {}),
  };
}

function resolveConnection(spec: SshConnectionSpec, configDir: string): SshConnection {
  const options = Object.fromEntries(
    Object.entries(spec.options ?? {}).map(([k, v]) => [k, typeof v === "boolean" ? (v ? "yes" : "no") : String(v)]),
  );
  return {
    host: spec.host,
    ...(spec.port !== undefined ? { port: spec.port } : {}),
    ...(spec.user !== undefined ? { user: spec.user } : {}),
    ...(spec.identity_file !== undefined ? { identityFile: path.resolve(configDir, expandHome(spec.identity_file)) } : {}),
    options,
  };
}

function expandHome(p: string): string {
  return p === "~" || p.startsWith("~/") ? path.join(os.homedir(), p.slice(1)) : p;
}

/** Is the model read from this machine's files (so its weights must be there now)? */
export function readsLocalFiles(target: Target): boolean {
  return target.kind === "local" || (target.kind === "slurm" && target.host.kind === "local");
}

/** For progress lines and messages: "this machine", "gpu1 over SSH", "Slurm on login1". */
export function describeTarget(target: Target): string {
  if (target.kind === "local") return "this machine";
  if (target.kind === "ssh") return `${hostName(target.host)} over SSH`;
  return `Slurm on ${hostName(target.host)}`;
}

export async function launchRunner(target: Target, invocation: LaunchInvocation): Promise<RunnerSummary> {
  const common = {
    subcommand: invocation.subcommand,
    ...(invocation.threads !== undefined ? { threads: invocation.threads } : {}),
    ...(invocation.onEvent ? { onEvent: invocation.onEvent } : {}),
    ...(invocation.signal ? { signal: invocation.signal } : {}),
  };
  switch (target.kind) {
    case "local":
      return runLocal({
        ...common,
        // every core this process may use, whatever libtorch's own default (docs/config.md, `threads`)
        threads: invocation.threads ?? (await usableCores()),
        runnerPath: await runnerOn(LOCAL_HOST, announcingBuilds(invocation.runner, invocation.onStatus, LOCAL_HOST), invocation.signal),
        jobFile: invocation.jobFile,
        outDir: invocation.outDir,
      });
    case "ssh":
      return runOverSsh(target, invocation);
    case "slurm":
      return runOnSlurm(target, invocation);
  }
}

/** A model's profile in shards: side by side on this machine or a host over SSH (launch/shards.ts), or a Slurm array (launch/slurmShards.ts). */
export async function launchShards(
  target: Target,
  invocation: Omit<ShardedRun, "runnerPath"> & Pick<LaunchInvocation, "runner" | "jobFile" | "outDir" | "runPath">,
): Promise<RunnerSummary> {
  if (target.kind === "slurm") {
    const count = invocation.setting.count;
    if (count === "auto") throw new RunnerError("bad_config", "a Slurm target takes a number of shards, not auto", 2);
    const { setting: _setting, modelDir: _modelDir, ...rest } = invocation;
    return runShardsOnSlurm(target, { ...rest, subcommand: "profile", count });
  }
  if (target.kind === "ssh") {
    const { runner, jobFile: _jobFile, outDir: _outDir, ...rest } = invocation;
    const named =
      target.runner ?? (await runnerOn(target.host, announcingBuilds(runner, invocation.onStatus, target.host), invocation.signal));
    return runShards(rest, sshPlace({ ...target, runner: named }, invocation.runPath, runner));
  }
  const { runner, jobFile: _jobFile, outDir: _outDir, runPath: _runPath, ...rest } = invocation;
  const onStatus = invocation.onStatus;
  return runShardsLocally({
    ...rest,
    runnerPath: await runnerOn(LOCAL_HOST, announcingBuilds(runner, onStatus, LOCAL_HOST), invocation.signal),
  });
}
