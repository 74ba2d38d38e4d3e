// What tests read of a run: its folder from bprof's output, and its results.json without the
// fields that name the run itself, so that two runs of the same profile compare equal.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as path from "node:path";

/** The run folder bprof printed: the results line of a finished run, or the resume line of a failed one. */
export function runDirOf(output: string): string {
  const dir = /^run \S+: (\S+)\/results\.json$/m.exec(output)?.[1] ?? /^resume with: bprof run --resume (\S+)$/m.exec(output)?.[1];
  assert.ok(dir, `no run folder in:\n${output}`);
  return dir;
}

/** results.json without its id, start and config file, and without `also` (a run's `target`, say). */
export async function resultsOf(runDir: string, also: readonly string[] = []): Promise<Record<string, unknown>> {
  const results = JSON.parse(await fs.readFile(path.join(runDir, "results.json"), "utf8")) as Record<string, unknown>;
  for (const field of ["run_id", "created", "config_file"]) {
    assert.ok(field in results, field);
    delete results[field];
  }
  for (const field of also) delete results[field];
  return results;
}

/** How far apart two hosts' fluency log-likelihoods may be, relative to their size. */
const FLUENCY_TOLERANCE = 1e-6;

/**
 * Asserts that a profile run elsewhere (an SSH host, a Slurm node) equals this machine's: every
 * field exactly, but the fluency figures within a relative 1e-6. They are sums of float
 * log-probabilities, and a session on another host may pick another BLAS kernel (OpenBLAS reads
 * OPENBLAS_CORETYPE from the environment, which an SSH login does not carry), so their last digits
 * differ; scores, flips, AIS and intervals come from comparisons of those numbers and do not.
 */
export function assertSameProfile(actual: unknown, expected: unknown, message?: string): void {
  assert.deepEqual(withFluencyOf(actual, expected), expected, message);
}

/** `actual` with each fluency number that is within the tolerance of `expected`'s replaced by it. */
function withFluencyOf(actual: unknown, expected: unknown, inFluency = false): unknown {
  if (inFluency && typeof actual === "number" && typeof expected === "number")
    return Math.abs(actual - expected) <= FLUENCY_TOLERANCE * Math.max(Math.abs(actual), Math.abs(expected)) ? expected : actual;
  if (Array.isArray(actual) && Array.isArray(expected)) return actual.map((x, i) => withFluencyOf(x, expected[i], inFluency));
  if (actual && expected && typeof actual === "object" && typeof expected === "object" && !Array.isArray(actual)) {
    const e = expected as Record<string, unknown>;
    return Object.fromEntries(
      Object.entries(actual as Record<string, unknown>).map(([key, value]) => [
        key,
        withFluencyOf(value, e[key], inFluency || key === "fluency"),
      ]),
    );
  }
  return actual;
}
