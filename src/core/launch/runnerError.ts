/**
 * A runner run that did not end in a summary: the stable code (native-runner/PROTOCOL.md's, or a
 * launcher's own: runner_not_found, target_unreachable, target_failed, cancelled, internal) and a
 * message that says what to do.
 */
export class RunnerError extends Error {
  constructor(readonly code: string, message: string, readonly exitCode?: number) {
    super(message);
    this.name = "RunnerError";
  }
}
