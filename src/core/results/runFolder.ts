// One run on disk: .bprof/runs/<run-id>/ with the config snapshot, per-model jobs, event logs,
// per-item scores and results.json (its schema in schema.ts), each file written whole.
import { randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { modelFolderName } from "../config/modelFolder";
import { OutsideFolderError, pathWithinFolder } from "../base/fsutil";
import { ConfinedFolder, UnsafeFolderError } from "../base/confinedFolder";
import type { Results } from "./schema";

/** Sortable by time, unique enough for runs started in the same second. */
export function newRunId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  return `${stamp}-${randomBytes(2).toString("hex")}`;
}

export interface RunFolder {
  id: string;
  dir: string;
  /** Every file of the run is written through this: inside the folder, never through a link. */
  files: ConfinedFolder;
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

function runFolder(files: ConfinedFolder, manifest: RunManifest): RunFolder & { manifest: RunManifest } {
  const dir = files.root;
  return { id: manifest.run_id, dir, files, manifest, modelDir: (model) => path.join(dir, "models", modelFolderName(model)) };
}

export async function createRunFolder(
  outputDir: string,
  configText: string,
  configFile: string,
): Promise<RunFolder & { manifest: RunManifest }> {
  await fs.mkdir(outputDir, { recursive: true });
  // the output folder is the config's choice; the runs folder in it and each run's are bprof's own
  const runs = await ConfinedFolder.at(path.join(outputDir, "runs"), "the runs folder", { create: true });
  const id = await newRunFolderName(runs);
  const files = await ConfinedFolder.at(path.join(runs.root, id), "the run folder");
  await files.writeFile(CONFIG_SNAPSHOT, configText);
  const manifest: RunManifest = { run_id: id, created: new Date().toISOString(), config_file: configFile };
  await files.writeJson(RUN_MANIFEST, manifest);
  return runFolder(files, manifest);
}

/** A run id whose folder this call made (mkdir fails on one that exists, so none is reused). */
async function newRunFolderName(runs: ConfinedFolder): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    const id = newRunId();
    try {
      await fs.mkdir(path.join(runs.root, id));
      return id;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST" || attempt >= 8) throw e;
    }
  }
}

/** An existing run folder, with the config text it ran; throws with a message when it is not one. */
export async function openRunFolder(dir: string): Promise<RunFolder & { manifest: RunManifest; configText: string }> {
  // a folder to resume can come with a repository: it is written only inside itself
  const files = await ConfinedFolder.at(dir, "the run folder").catch((e: unknown) => {
    throw e instanceof UnsafeFolderError ? new Error(e.message) : e;
  });
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
  return { ...runFolder(files, manifest), configText };
}

export async function writeResults(run: RunFolder, results: Results): Promise<string> {
  return run.files.writeJson("results.json", results);
}

/** Writes `file` (in `folder`, or relative to it) as JSON Lines, one row a line. */
export async function writeJsonl(folder: ConfinedFolder, file: string, rows: readonly unknown[]): Promise<void> {
  await folder.writeFile(file, rows.map((r) => JSON.stringify(r)).join("\n") + (rows.length > 0 ? "\n" : ""));
}
