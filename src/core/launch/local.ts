// Launch bprof-runner on this machine and turn its event stream into callbacks and one outcome.
import { execa } from "execa";
import { createInterface } from "node:readline";
import { parseEventLine, type RunnerEvent } from "./events";

export interface RunnerInvocation {
  runnerPath: string;
  subcommand: string;
  jobFile: string;
  outDir: string;
  threads?: number;
  onEvent?: (event: RunnerEvent) => void;
  signal?: AbortSignal;
}

/** A runner run that did not end in a summary: the stable code from PROTOCOL.md and its message. */
export class RunnerError extends Error {
  constructor(readonly code: string, message: string, readonly exitCode?: number) {
    super(message);
    this.name = "RunnerError";
  }
}

export async function runLocal(invocation: RunnerInvocation): Promise<Extract<RunnerEvent, { type: "summary" }>> {
  const args = [invocation.subcommand, "--job", invocation.jobFile, "--out", invocation.outDir];
  if (invocation.threads !== undefined) args.push("--threads", String(invocation.threads));
  const child = execa(invocation.runnerPath, args, {
    reject: false,
    stdin: "ignore",
    ...(invocation.signal ? { cancelSignal: invocation.signal } : {}),
    forceKillAfterDelay: 5000,
  });
  let last: RunnerEvent | undefined;
  const lines = createInterface({ input: child.stdout! });
  const linesClosed = new Promise<void>((resolve) => lines.once("close", resolve));
  lines.on("line", (line) => {
    if (line.trim() === "") return;
    last = parseEventLine(line);
    invocation.onEvent?.(last);
  });
  const result = await child;
  await linesClosed;

  if ((result as { code?: string }).code === "ENOENT") {
    throw new RunnerError("runner_not_found", `bprof-runner not found at ${invocation.runnerPath}: build it with \`npm run setup\` or set its path (benchmarkProfiler.runnerPath, BPROF_RUNNER)`);
  }
  if (result.isCanceled || last?.type === "error" && last.code === "cancelled") {
    throw new RunnerError("cancelled", "the run was cancelled; start it again to resume", result.exitCode);
  }
  if (last?.type === "summary" && result.exitCode === 0) return last;
  if (last?.type === "error") throw new RunnerError(last.code, last.message, result.exitCode);
  const stderr = String(result.stderr ?? "").trim().split("\n").slice(-5).join("\n");
  const how = result.signal ? `was killed by ${result.signal}` : `exited with code ${result.exitCode}`;
  throw new RunnerError("internal", `bprof-runner ${how} without a final event${stderr ? `:\n${stderr}` : ""}`, result.exitCode);
}
