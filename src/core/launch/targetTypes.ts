// What a launch is given besides its target (config/target.ts): the invocation of the runner. Its
// own module because every launcher (local.ts, ssh.ts, slurm.ts) takes it and target.ts, which
// dispatches to the launchers, makes it.
import type { RunnerEvent } from "./events";
import type { RunnerSpec } from "../runner/locate";
import type { ConfinedFolder } from "../base/confinedFolder";

export interface LaunchInvocation {
  /** Which runner: named, or built on the host that runs it. */
  runner: RunnerSpec;
  subcommand: string;
  /** The run folder on this machine, which every file the launch writes there goes through. */
  files: ConfinedFolder;
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
