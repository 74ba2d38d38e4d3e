// Follow a process whose stdout is the runner's event stream: bprof-runner itself, or the ssh
// client that runs it on a host.
import { execa } from "execa";
import type { RunnerEvent } from "./events";
import { EventLineReader, type RunnerEnd } from "./outcome";

export interface FollowOptions {
  onEvent?: (event: RunnerEvent) => void;
  signal?: AbortSignal;
  /**
   * How a cancelled run is stopped. Default: SIGTERM to the process (the runner finishes the item
   * it is on, reports `cancelled` and exits). Over SSH, killing the client would not reach the
   * runner, so the launcher signals it on the host instead and the client ends with it.
   */
  cancel?: () => Promise<void>;
  /** For messages: "" here, " on gpu1" over SSH. */
  where: string;
  /** More environment for the process. */
  env?: Record<string, string>;
}

/** Runs `file args` to its end, passing each stdout line on as an event. */
export async function followEventProcess(file: string, args: string[], options: FollowOptions): Promise<RunnerEnd & { notFound: boolean }> {
  const child = execa(file, args, {
    reject: false,
    stdin: "ignore",
    ...(options.signal && !options.cancel ? { cancelSignal: options.signal } : {}),
    forceKillAfterDelay: 5000,
    ...(options.env ? { env: options.env } : {}),
  });
  let cancelled = false;
  const onAbort = () => {
    cancelled = true;
    // If the host cannot be told (the connection is gone), end the client: nothing else would.
    void options.cancel!()
      .catch(() => undefined)
      .finally(() => setTimeout(() => child.kill("SIGTERM"), 15_000).unref());
  };
  if (options.cancel && options.signal) {
    if (options.signal.aborted) onAbort();
    else options.signal.addEventListener("abort", onAbort, { once: true });
  }
  const reader = new EventLineReader(options.onEvent);
  child.stdout!.setEncoding("utf8");
  child.stdout!.on("data", (chunk: string) => reader.push(chunk));
  const result = await child;
  reader.end();
  options.signal?.removeEventListener("abort", onAbort);
  return {
    last: reader.last,
    exitCode: result.exitCode,
    signal: result.signal,
    cancelled: cancelled || result.isCanceled,
    stderrTail: String(result.stderr ?? ""),
    where: options.where,
    notFound: (result as { code?: string }).code === "ENOENT",
  };
}
