// Runs the bundled CLI the way a user does, as a separate process.
import { execa } from "execa";
import * as path from "node:path";

export const repoRoot = path.resolve(import.meta.dirname, "..", "..");
export const cliPath = path.join(repoRoot, "dist", "bprof.cjs");
/**
 * The runner the tests run: the checkout's build, or BPROF_TEST_RUNNER's (a build against another
 * libtorch, as scripts/test-torch2.sh makes one).
 */
export const runnerPath = process.env.BPROF_TEST_RUNNER ?? path.join(repoRoot, "native-runner", "build", "bprof-runner");

/** `env` adds to this process's environment (a test cluster's SLURM_CONF, say). */
export async function bprof(args: string[], options: { cwd?: string; env?: Record<string, string>; timeout?: number } = {}) {
  return execa("node", [cliPath, ...args], {
    reject: false,
    cwd: options.cwd ?? repoRoot,
    env: { BPROF_RUNNER: process.env.BPROF_RUNNER ?? runnerPath, ...options.env },
    timeout: options.timeout ?? 120_000,
  });
}
