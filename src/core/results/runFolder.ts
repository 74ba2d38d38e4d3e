// One run on disk: .bprof/runs/<run-id>/ with the config snapshot, per-model jobs, event logs,
// per-item scores and results.json (its schema in schema.ts), each file written whole.
import { randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { modelFolderName } from "../config/modelFolder";
import { OutsideFolderError, pathWithinFolder, writeFileAtomic, writeJsonAtomic } from "../base/fsutil";
import type { Results } from "./schema";

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

/** run.json: what a run needs to be resumed (`bprof run --resume`). */
export interface RunManifest {
  run_id: string;
  created: string;
  /** Absolute path of the config; the snapshot beside run.json is the text that was run. */
  config_file: string;
}

export const CONFIG_SNAPSHOT = "config.bprof.yaml";
export const RUN_MANIFEST = "run.json";

function runFolder(dir: string, manifest: RunManifest): RunFolder & { manifest: RunManifest } {
  return { id: manifest.run_id, dir, manifest, modelDir: (model) => path.join(dir, "models", modelFolderName(model)) };
}

export async function createRunFolder(
  outputDir: string,
  configText: string,
  configFile: string,
): Promise<RunFolder & { manifest: RunManifest }> {
  const id = newRunId();
  const dir = path.join(outputDir, "runs", id);
  await fs.mkdir(dir, { recursive: true });
  await writeFileAtomic(path.join(dir, CONFIG_SNAPSHOT), configText);
  const manifest: RunManifest = { run_id: id, created: new Date().toISOString(), config_file: configFile };
  await writeJsonAtomic(path.join(dir, RUN_MANIFEST), manifest);
  return runFolder(dir, manifest);
}

/** An existing run folder, with the config text it ran; throws with a message when it is not one. */
export async function openRunFolder(dir: string): Promise<RunFolder & { manifest: RunManifest; configText: string }> {
  let manifest: RunManifest;
  let configText: string;
  try {
    // a folder to resume can come with a repository: its files are read only where they lie in it
    manifest = JSON.parse(await fs.readFile(await pathWithinFolder(dir, RUN_MANIFEST, "the run folder"), "utf8")) as RunManifest;
    configText = await fs.readFile(await pathWithinFolder(dir, CONFIG_SNAPSHOT, "the run folder"), "utf8");
  } catch (e) {
    if (e instanceof OutsideFolderError) throw e;
    throw new Error(`${dir} is not a run folder of this version (it needs ${RUN_MANIFEST} and ${CONFIG_SNAPSHOT})`);
  }
  if (typeof manifest.run_id !== "string" || typeof manifest.config_file !== "string" || manifest.config_file === "") {
    throw new Error(`${path.join(dir, RUN_MANIFEST)} does not name the run's config`);
  }
  return { ...runFolder(dir, manifest), configText };
}

export async function writeResults(run: RunFolder, results: Results): Promise<string> {
  const file = path.join(run.dir, "results.json");
  await writeJsonAtomic(file, results);
  return file;
}

export async function writeJsonl(file: string, rows: readonly unknown[]): Promise<void> {
  await writeFileAtomic(file, rows.map((r) => JSON.stringify(r)).join("\n") + (rows.length > 0 ? "\n" : ""));
}
