// What a launch is given: the resolved target (target.ts resolves it from the config) and the
// invocation of the runner. Its own module because every launcher (local.ts, ssh.ts, slurm.ts)
// takes them and target.ts, which dispatches to the launchers, makes them.
import type { RunnerEvent } from "./events";
import type { Host } from "../base/host";
import type { RunnerSpec } from "../runner/locate";

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

export interface LaunchInvocation {
  /** Which runner: named, or built on the host that runs it. */
  runner: RunnerSpec;
  subcommand: string;
  /** job.json in the run folder on this machine. */
  jobFile: string;
  /** The runner's output folder in the run folder on this machine; filled when the run ends. */
  outDir: string;
  /** This model's folder relative to the runs folder ("<run-id>/models/<name>"), the same on the host. */
  runPath: string;
  threads?: number;
  onEvent?: (event: RunnerEvent) => void;
  /** What the launcher is doing or waiting for ("Slurm job 42 pending: Resources"). */
  onStatus?: (message: string) => void;
  signal?: AbortSignal;
}
