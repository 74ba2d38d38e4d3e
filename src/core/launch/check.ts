// What only the target can say about a config, asked before a run: is the host reachable, is
// bprof-runner there and which version, are the model folders there, would Slurm take the job.
// `bprof validate` and the editor's Validate Config ask it for remote targets.
import type { ResolvedModel } from "../config/resolved";
import { JOB_PROTOCOL } from "../plan/job";
import { hostName, hostPathWord, runOnHost, shellWord, type Host } from "../base/host";
import { lastLines } from "./outcome";
import { RunnerError } from "../base/runnerError";
import type { Target } from "../config/target";
import { buildFactsOn, expectedBuildLength } from "../runner/build";
import { missingMessage } from "../runner/facts";
import { checkoutRunner, onThisMachine, type RunnerSpec } from "../runner/locate";
import { runnerSources } from "../runner/sources";

export interface TargetCheck {
  ok: boolean;
  /** One line: what was checked and what was found, or what to do. */
  message: string;
}

/** The checks in order; after an unreachable host, that one only. */
export async function checkTarget(target: Target, models: readonly ResolvedModel[], runner: RunnerSpec): Promise<TargetCheck[]> {
  if (target.kind === "local") return [];
  const host = target.host;
  const name = hostName(host);
  try {
    await runOnHost(host, "true", { what: "reach the host" });
  } catch (e) {
    if (e instanceof RunnerError) return [{ ok: false, message: e.message }];
    throw e;
  }
  const checks: TargetCheck[] = [{ ok: true, message: `reached ${name}${host.kind === "ssh" ? " over SSH" : ""}` }];
  const field = target.kind === "slurm" ? "target.slurm.runner" : "target.ssh.runner";
  // A runner the config names is not run to be checked, on this machine or a host: a config is
  // only text (a repository's, maybe), and checking it must not start a program it names; the run
  // does, once the user said so. The runner checked by running it is the user's own (a setting,
  // BPROF_RUNNER) or the one bprof built.
  if (target.runner !== undefined) checks.push(await runnerPresenceCheck(host, target.runner, field));
  else {
    const own = host.kind === "local" ? (runner.path ?? checkoutRunner(runner.sourcesDir)) : undefined;
    checks.push(own !== undefined ? await runnerCheck(host, own, field) : await runnerBuildCheck(host, runner, field));
  }
  for (const model of models) checks.push(await modelCheck(host, model));
  if (target.kind === "slurm") checks.push(await sbatchCheck(host, target.sbatchOptions));
  return checks;
}

async function runnerCheck(host: Host, runner: string, field: string): Promise<TargetCheck> {
  const result = await runOnHost(host, `${hostPathWord(runner)} --version`, { what: "run bprof-runner --version" });
  const version = result.stdout.trim().split("\n")[0];
  if (result.exitCode === 0 && version) {
    const protocol = Number(/\bprotocol (\d+)/.exec(version)?.[1]);
    if (protocol !== JOB_PROTOCOL)
      return {
        ok: false,
        message: `${version} at \`${runner}\` on ${hostName(host)} does not read protocol ${JOB_PROTOCOL} jobs, which this bprof writes: build the runner of this version there`,
      };
    return { ok: true, message: `${version} at \`${runner}\` on ${hostName(host)}` };
  }
  const why = result.exitCode === 127 ? "not found" : `exit ${result.exitCode}: ${lastLines(result.stderr, 1)}`;
  return {
    ok: false,
    message: `bprof-runner at \`${runner}\` on ${hostName(host)}: ${why}; fix ${field}, or leave it out and bprof builds one there`,
  };
}

/** That the runner named is an executable file, without running it. */
async function runnerPresenceCheck(host: Host, runner: string, field: string): Promise<TargetCheck> {
  const word = hostPathWord(runner);
  const result = await runOnHost(host, `test -f ${word} && test -x ${word}`, { what: "look for bprof-runner" });
  if (result.exitCode === 0)
    return {
      ok: true,
      message: `bprof-runner at \`${runner}\` on ${hostName(host)} is an executable file (not run before the run itself)`,
    };
  return {
    ok: false,
    message: `bprof-runner at \`${runner}\` on ${hostName(host)}: not an executable file; fix ${field}, or leave it out and bprof builds one`,
  };
}

/** No runner named: the one built on the host, or whether the host can build it. */
async function runnerBuildCheck(host: Host, spec: RunnerSpec, field: string): Promise<TargetCheck> {
  const sources = await runnerSources(spec.sourcesDir);
  if (!sources)
    return { ok: false, message: `the runner's sources are not at ${spec.sourcesDir} (a broken install): reinstall, or set ${field}` };
  const chosen = onThisMachine(host, spec);
  const facts = await buildFactsOn({ host, sources, cacheDir: spec.cacheDir, ...chosen });
  if (facts.cached) return runnerCheck(host, facts.cached, field);
  if (facts.missing.length > 0) return { ok: false, message: missingMessage(facts, hostName(host), chosen.python) };
  const torch = facts.torch ? `libtorch ${facts.torch.version}${facts.torch.cuda ? " with CUDA" : ""}` : "libtorch";
  return {
    ok: true,
    message: `bprof-runner is built on ${hostName(host)} on the first run, against ${torch}${expectedBuildLength(facts)}`,
  };
}

/** The folder the runner will read: config.json and weights. */
async function modelCheck(host: Host, model: ResolvedModel): Promise<TargetCheck> {
  const dir = model.remotePath ?? model.path;
  const word = hostPathWord(dir);
  const result = await runOnHost(host, `test -f ${word}/config.json && ls ${word} | grep -c '\\.safetensors$'`, {
    what: "look for the model folder",
  });
  const shards = Number(result.stdout.trim());
  if (result.exitCode === 0 && shards > 0)
    return {
      ok: true,
      message: `model \`${model.name}\`: ${dir} on ${hostName(host)} (config.json, ${shards} safetensors file${shards === 1 ? "" : "s"})`,
    };
  const what = result.stdout.trim() === "0" ? "has no *.safetensors weights" : "has no config.json (or does not exist)";
  return {
    ok: false,
    message: `model \`${model.name}\`: ${dir} on ${hostName(host)} ${what}; set models[].remote_path to where the model is there`,
  };
}

/** sbatch --test-only: Slurm checks partition, account, time and resources without queueing. */
async function sbatchCheck(host: Host, options: readonly string[]): Promise<TargetCheck> {
  const args = [...options, "--wrap", "true"].map(shellWord).join(" ");
  const result = await runOnHost(host, `sbatch --test-only ${args}`, { what: "ask sbatch" });
  const said = lastLines(`${result.stderr}\n${result.stdout}`, 2)
    .replace(/^sbatch: (error: )?/gm, "")
    .replace(/\n/g, "; ");
  if (result.exitCode === 0) return { ok: true, message: `sbatch --test-only accepts the job options on ${hostName(host)}: ${said}` };
  if (result.exitCode === 127)
    return {
      ok: false,
      message: `sbatch not found on ${hostName(host)}: install Slurm's client there or submit from a login node (target.slurm.ssh)`,
    };
  return { ok: false, message: `sbatch --test-only refuses the job options on ${hostName(host)}: ${said}; check target.slurm` };
}
