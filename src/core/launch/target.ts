// The one entry point that launches a profile's runner where its target (config/target.ts) says.
import type { Target } from "../config/target";
import { LOCAL_HOST } from "../base/host";
import { usableCores } from "./cores";
import { runLocal } from "./local";
import { RunnerError } from "../base/runnerError";
import type { RunnerSummary } from "./outcome";
import { runOnSlurm } from "./slurm";
import { runOverSsh, sshPlace } from "./ssh";
import type { LaunchInvocation } from "./targetTypes";
import { runShards, runShardsLocally, type ShardedRun } from "./shards";
import { runShardsOnSlurm } from "./slurmShards";
import { announcingBuilds, runnerOn } from "../runner/locate";

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
    return runShards(rest, sshPlace({ ...target, runner: named }, invocation.runPath, runner, invocation.files));
  }
  const { runner, jobFile: _jobFile, outDir: _outDir, runPath: _runPath, ...rest } = invocation;
  const onStatus = invocation.onStatus;
  return runShardsLocally({
    ...rest,
    runnerPath: await runnerOn(LOCAL_HOST, announcingBuilds(runner, onStatus, LOCAL_HOST), invocation.signal),
  });
}
