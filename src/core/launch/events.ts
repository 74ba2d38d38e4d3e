// The runner's newline-delimited JSON events (native-runner/PROTOCOL.md).
import type { Selection } from "../config/types";

export type RunnerEvent =
  | { type: "start"; subcommand: string; runner_version: string; device: string; threads: number }
  | {
      type: "progress";
      phase: string;
      done: number;
      total: number;
      ability?: string;
      /**
       * A profile's `score` phase: the variant being scored (ability id; null with no method for the
       * random control, with `draw` its random draw when the job has several).
       */
      variant?: { ability: string | null; method: string | null; selection: Selection; k: number; draw?: number };
    }
  | {
      type: "variant";
      ability: string | null;
      selection: Selection;
      k: number;
      n: number;
      file: string;
      resumed?: boolean;
      /** The random control's draw, when the job has several (`ablation.random_draws`). */
      draw?: number;
    }
  | { type: "warning"; message: string }
  | { type: "result"; file: string; items: number }
  | { type: "summary"; status: "ok"; seconds: number }
  | { type: "error"; code: string; message: string };

/** Parses one stdout line; a line that is not an event becomes a warning rather than a crash. */
export function parseEventLine(line: string): RunnerEvent {
  try {
    const value = JSON.parse(line) as { type?: unknown };
    if (typeof value === "object" && value !== null && typeof value.type === "string") return value as RunnerEvent;
  } catch {
    // fall through: reported as a warning below
  }
  return { type: "warning", message: `runner printed a line that is not an event: ${line.slice(0, 200)}` };
}
