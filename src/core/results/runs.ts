// The runs of a config, found on disk: its output folder (`output`, else .bprof beside it) holds
// runs/<run-id>/, each with run.json naming the config it ran. The CLI (`--resume`, `report`) and
// the editor (the latest results of a config) find runs the same way.
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { parseConfig } from "../config/parse";
import { isDirectory, isFile } from "../fsutil";
import { RUN_MANIFEST, type RunManifest } from "./store";

export const DEFAULT_OUTPUT = ".bprof";

export interface RunEntry {
  id: string;
  dir: string;
  /** The config file the run was started from. */
  configFile: string;
  /** results.json is written: the run finished. */
  finished: boolean;
}

/** The folder a config's runs go to; `text` is the config's text when the caller has it. */
export async function outputDirOf(configFile: string, text?: string): Promise<string> {
  const file = path.resolve(configFile);
  const source = text ?? (await fs.readFile(file, "utf8").catch(() => undefined));
  const output = source === undefined ? undefined : parseConfig(source, file).config?.output;
  return path.resolve(path.dirname(file), output ?? DEFAULT_OUTPUT);
}

/** The runs in an output folder, newest first (run ids sort by their start time). */
export async function runsIn(outputDir: string): Promise<RunEntry[]> {
  const runsDir = path.join(outputDir, "runs");
  const ids = await fs.readdir(runsDir).catch(() => [] as string[]);
  const runs = await Promise.all(ids.map(async (id): Promise<RunEntry | undefined> => {
    const dir = path.join(runsDir, id);
    const manifest = await fs.readFile(path.join(dir, RUN_MANIFEST), "utf8").then((t) => JSON.parse(t) as RunManifest, () => undefined);
    if (typeof manifest?.config_file !== "string") return undefined;
    return { id, dir, configFile: manifest.config_file, finished: await isFile(path.join(dir, "results.json")) };
  }));
  return runs.filter((r): r is RunEntry => r !== undefined).sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
}

/** The runs started from `configFile`, newest first. */
export async function runsOfConfig(configFile: string, text?: string): Promise<RunEntry[]> {
  const file = path.resolve(configFile);
  return (await runsIn(await outputDirOf(file, text))).filter((r) => path.resolve(r.configFile) === file);
}

/** A run folder from a path, or from a run id under the config's output folder (else ./.bprof). */
export async function resolveRunDir(ref: string, configFile?: string): Promise<string | undefined> {
  if (await isDirectory(ref)) return path.resolve(ref);
  if (ref.includes("/") || ref.includes(path.sep)) return undefined;
  const output = configFile ? await outputDirOf(configFile) : path.resolve(DEFAULT_OUTPUT);
  const dir = path.join(output, "runs", ref);
  return (await isDirectory(dir)) ? dir : undefined;
}
