// How a runner run ended, decided the same way wherever it ran: by its last event and its exit.
import { parseEventLine, type RunnerEvent } from "./events";
import { RunnerError } from "../base/runnerError";

export type RunnerSummary = Extract<RunnerEvent, { type: "summary" }>;

/** What the launcher saw when the runner's process (or Slurm job) ended. */
export interface RunnerEnd {
  last: RunnerEvent | undefined;
  exitCode: number | undefined;
  /** The signal that killed it, if one did. */
  signal?: string | undefined;
  cancelled: boolean;
  /** The end of its stderr (or of the Slurm job's output file), for a message. */
  stderrTail: string;
  /** Where it ran, for messages: "", " on gpu1", " in Slurm job 42". */
  where: string;
}

/** The summary of a run that ended well; a RunnerError that says why otherwise. */
export function runnerOutcome(end: RunnerEnd): RunnerSummary {
  const { last } = end;
  // A cancel that came after the runner's last word cancels nothing: the work is done and kept.
  if (last?.type === "summary" && end.exitCode === 0) return last;
  if (end.cancelled || (last?.type === "error" && last.code === "cancelled")) {
    throw new RunnerError("cancelled", `the run was cancelled${end.where}; start it again to resume`, end.exitCode);
  }
  if (last?.type === "error") throw new RunnerError(last.code, `${last.message}${end.where ? ` (${end.where.trim()})` : ""}`, end.exitCode);
  const tail = lastLines(end.stderrTail, 5);
  if (end.signal) {
    // Killed from outside (the out-of-memory killer, a job limit, someone's kill): what it finished is kept.
    const who = end.signal === "SIGKILL" ? " (the system's out-of-memory killer, or someone)" : "";
    throw new RunnerError(
      "killed",
      `bprof-runner${end.where} was killed by ${end.signal}${who} without a final event; a resume continues where it stopped${tail ? `:\n${tail}` : ""}`,
      end.exitCode,
    );
  }
  const how = end.exitCode === undefined ? "ended" : `exited with code ${end.exitCode}`;
  throw new RunnerError("internal", `bprof-runner${end.where} ${how} without a final event${tail ? `:\n${tail}` : ""}`, end.exitCode);
}

export function lastLines(text: string, n: number): string {
  return text.trim().split("\n").slice(-n).join("\n");
}

/** Turns chunks of a runner's stdout into events, one per complete line. */
export class EventLineReader {
  private pending = "";
  last: RunnerEvent | undefined;

  constructor(private readonly onEvent?: (event: RunnerEvent) => void) {}

  push(chunk: string): void {
    const lines = (this.pending + chunk).split("\n");
    this.pending = lines.pop()!;
    for (const line of lines) this.line(line);
  }

  /** The last line, when the stream ended without a newline after it. */
  end(): void {
    if (this.pending !== "") this.line(this.pending);
    this.pending = "";
  }

  private line(line: string): void {
    if (line.trim() === "") return;
    this.last = parseEventLine(line);
    this.onEvent?.(this.last);
  }
}
