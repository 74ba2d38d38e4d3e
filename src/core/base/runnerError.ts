/**
 * A runner run that did not end in a summary: the stable code (native-runner/PROTOCOL.md's, or a
 * launcher's own: runner_not_found, runner_build_needs, runner_build_failed, output_failed, run_folder_unsafe,
 * target_unreachable, target_failed, target_busy, cancelled, killed, internal, unsafe_code,
 * helper_failed) and a message that
 * says what to do.
 */
export class RunnerError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly exitCode?: number,
  ) {
    super(message);
    this.name = "RunnerError";
  }

  /** Whether resuming the run folder continues the run (the other codes need a fix first). */
  get resumable(): boolean {
    return RESUMABLE_CODES.has(this.code);
  }
}

/** The runner error codes after which `--resume` (or Resume in the editor) continues the run. */
const RESUMABLE_CODES: ReadonlySet<string> = new Set([
  "cancelled",
  "killed",
  "resources",
  "target_unreachable",
  "target_busy",
  "slurm_timeout",
  "slurm_failed",
  "helper_failed",
]);
