// One run on disk: .bprof/runs/<run-id>/ with the config snapshot, per-model jobs, event logs,
// per-item scores and results.json (schema documented in docs/results-schema.md).
import { randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import * as path from "node:path";
import type { BenchmarkAccuracy } from "../analysis/accuracy";
import { writeFileAtomic, writeJsonAtomic } from "../fsutil";

export const RESULTS_SCHEMA_VERSION = 1;

export interface Results {
  schema: "bprof.results";
  schema_version: number;
  run_id: string;
  created: string;
  config_file: string;
  runner_version?: string;
  models: { name: string; path: string; dtype: string; benchmarks: ({ name: string; task_file: string } & BenchmarkAccuracy)[] }[];
}

/** Sortable by time, unique enough for runs started in the same second. */
export function newRunId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  return `${stamp}-${randomBytes(2).toString("hex")}`;
}

export interface RunFolder {
  id: string;
  dir: string;
  modelDir(model: string): string;
}

export async function createRunFolder(outputDir: string, configText: string): Promise<RunFolder> {
  const id = newRunId();
  const dir = path.join(outputDir, "runs", id);
  await fs.mkdir(dir, { recursive: true });
  await writeFileAtomic(path.join(dir, "config.bprof.yaml"), configText);
  return { id, dir, modelDir: (model) => path.join(dir, "models", model.replace(/[^A-Za-z0-9._-]+/g, "_")) };
}

export async function writeResults(run: RunFolder, results: Results): Promise<string> {
  const file = path.join(run.dir, "results.json");
  await writeJsonAtomic(file, results);
  return file;
}

export async function writeJsonl(file: string, rows: readonly unknown[]): Promise<void> {
  await writeFileAtomic(file, rows.map((r) => JSON.stringify(r)).join("\n") + (rows.length > 0 ? "\n" : ""));
}
