// Where a profile's runner runs: the config's `target` resolved (local paths made absolute against
// the config's folder, Slurm's fields as sbatch options). Launching it is launch/'s business.
import * as os from "node:os";
import * as path from "node:path";
import type { SlurmSpec, SshConnectionSpec, TargetSpec } from "./types";
import { hostName, LOCAL_HOST, type Host, type SshConnection } from "../base/host";

export type Target =
  | { kind: "local" }
  /** `runner` undefined: the one built on the host from the bundled sources. */
  | { kind: "ssh"; host: Host & { kind: "ssh" }; runner?: string; workdir: string }
  | SlurmTarget;

export interface SlurmTarget {
  kind: "slurm";
  /** Where sbatch, squeue and scancel run: this machine or a login node. */
  host: Host;
  /** Undefined: the one built on the host from the bundled sources (this machine's, from here). */
  runner?: string;
  /** Undefined: the run folder itself (the host is this machine). */
  workdir?: string;
  /** sbatch's options, from the config's fields and `sbatch_args`. */
  sbatchOptions: string[];
  pollSeconds: number;
  cpusPerTask?: number;
}

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

/** A runner the config names (`target.ssh.runner`, `target.slurm.runner`): a program of the config's, not one bprof built. */
export interface NamedRunner {
  runner: string;
  host: string;
  field: "target.ssh.runner" | "target.slurm.runner";
}

/** The runner the target's config names, if it names one: it runs only once the user said so. */
export function namedRunnerOf(target: Target): NamedRunner | undefined {
  if (target.kind === "local" || target.runner === undefined) return undefined;
  return { runner: target.runner, host: hostName(target.host), field: target.kind === "ssh" ? "target.ssh.runner" : "target.slurm.runner" };
}

/** What the user's answer about a named runner is remembered by: the host and the path. */
export function namedRunnerKey(named: NamedRunner): string {
  return `${named.host}\u0000${named.runner}`;
}
