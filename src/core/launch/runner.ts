import * as path from "node:path";
import { existsSync } from "node:fs";

/**
 * Where bprof-runner is: an explicit path, then $BPROF_RUNNER, then the build folder of a source
 * checkout next to the bundle (dist/ -> native-runner/build/), then PATH.
 */
export function resolveRunnerPath(explicit?: string, bundleDir?: string): string {
  if (explicit) return explicit;
  if (process.env.BPROF_RUNNER) return process.env.BPROF_RUNNER;
  if (bundleDir) {
    const checkout = path.resolve(bundleDir, "..", "native-runner", "build", "bprof-runner");
    if (existsSync(checkout)) return checkout;
  }
  return "bprof-runner";
}
