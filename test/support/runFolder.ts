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
