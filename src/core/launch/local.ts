// Launch bprof-runner on this machine and turn its event stream into callbacks and one outcome.
import type { RunnerEvent } from "./events";
import { runnerOutcome, type RunnerSummary } from "./outcome";
import { followEventProcess } from "./process";
import { RunnerError } from "../base/runnerError";

export { RunnerError } from "../base/runnerError";

export interface RunnerInvocation {
  runnerPath: string;
  subcommand: string;
  jobFile: string;
  outDir: string;
  threads?: number;
  onEvent?: (event: RunnerEvent) => void;
  signal?: AbortSignal;
}

/** The runner's arguments after its path; job and output paths as the runner will see them. */
export function runnerArguments(subcommand: string, jobFile: string, outDir: string, threads?: number): string[] {
  return [subcommand, "--job", jobFile, "--out", outDir, ...(threads !== undefined ? ["--threads", String(threads)] : [])];
}

export async function runLocal(invocation: RunnerInvocation): Promise<RunnerSummary> {
  const end = await followEventProcess(
    invocation.runnerPath,
    runnerArguments(invocation.subcommand, invocation.jobFile, invocation.outDir, invocation.threads),
    {
      where: "",
      // The runner stops when this process is gone (native-runner/src/main.cpp). Its OpenMP
      // threads spin briefly between parallel regions, then sleep (unless the user sets the
      // waits): libgomp's long default spin made 2 threads 3 to 30 times slower than 1 on a busy
      // 2-core machine, and sleeping at once (OMP_WAIT_POLICY=PASSIVE) cost the idle demo half as
      // long again (docs/performance.md, "Threads").
      env: {
        BPROF_STOP_WITH_PARENT: String(process.pid),
        ...openMpWaits(process.env),
      },
      ...(invocation.onEvent ? { onEvent: invocation.onEvent } : {}),
      ...(invocation.signal ? { signal: invocation.signal } : {}),
    },
  );
  if (end.notFound) {
    throw new RunnerError(
      "runner_not_found",
      `bprof-runner not found at ${invocation.runnerPath}: fix the runner named (benchmarkProfiler.runnerPath, BPROF_RUNNER or --runner), or leave it empty and bprof builds one`,
    );
  }
  return runnerOutcome(end);
}

/** libgomp's spin before a waiting thread sleeps, in iterations: about the idle machine's best (docs/performance.md, "Threads"). */
export const GOMP_SPIN_BEFORE_SLEEP = 1_000;

/** How a local runner's OpenMP threads wait: as the environment says, else a short spin, then sleep. */
export function openMpWaits(env: NodeJS.ProcessEnv): Record<string, string> {
  if (env.OMP_WAIT_POLICY !== undefined || env.GOMP_SPINCOUNT !== undefined) return {};
  return { GOMP_SPINCOUNT: String(GOMP_SPIN_BEFORE_SLEEP) };
}
