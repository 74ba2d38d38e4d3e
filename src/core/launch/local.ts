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
      // threads sleep between parallel regions instead of spinning (unless the user says
      // otherwise): on a machine whose other processes hold a core, a spinning thread waits for a
      // descheduled one at every region, and 2 threads scored 3 to 30 times slower than 1 on a
      // busy 2-core machine, against as fast with passive waits (docs/performance.md).
      env: {
        BPROF_STOP_WITH_PARENT: String(process.pid),
        ...(process.env.OMP_WAIT_POLICY === undefined ? { OMP_WAIT_POLICY: "PASSIVE" } : {}),
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
