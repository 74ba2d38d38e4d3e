// The runs of a config, found on disk: its output folder (`output`, else .bprof beside it) holds
// runs/<run-id>/, each with run.json naming the config it ran. The CLI (`--resume`, `report`) and
// the editor (the latest results of a config) find runs the same way.
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { parseConfig } from "../config/parse";
import { isDirectory, isFile, pathWithinFolder, readTail } from "../base/fsutil";
import { ConfinedFolder } from "../base/confinedFolder";
import { parseEventLine } from "../launch/events";
import { RunnerError } from "../base/runnerError";
import { RUN_MANIFEST, type RunManifest } from "./runFolder";
import type { RunOverall } from "../plan/estimate";
import { measuredPace, type Pace } from "../plan/pace";
import { modelFolderName } from "../config/modelFolder";

export const DEFAULT_OUTPUT = ".bprof";

export interface RunEntry {
  id: string;
  dir: string;
  /** The config file the run was started from. */
  configFile: string;
  /** results.json is written: the run finished. */
  finished: boolean;
}

/** Where a run stands, read from its folder (so runs of the CLI and of another window count too). */
export type RunStatus =
  | { state: "finished" }
  | { state: "running"; pid: number; progress?: RunFolderProgress }
  | { state: "failed"; code: string; message: string; resumable: boolean }
  /** Stopped without a word (its process was killed, its machine went down): resume continues it. */
  | { state: "interrupted" };

export interface RunFolderProgress {
  /** The folder name of the model being run. */
  model: string;
  phase: string;
  done: number;
  total: number;
  ability?: string;
  /** The whole run's share and time left, when this window runs it (estimate.ts). */
  overall?: RunOverall;
}

/** run-state.json: who runs the folder now, or how its last attempt ended. */
interface RunStateFile {
  state: "running" | "failed";
  pid: number;
  hostname: string;
  code?: string;
  message?: string;
  resumable?: boolean;
}

export const RUN_STATE = "run-state.json";

/** Marks the folder as run by this process; a second process that finds it so refuses it (`target_busy`). */
export async function claimRunFolder(dir: string): Promise<void> {
  const current = await readState(dir);
  if (current?.state === "running" && current.pid !== process.pid && isAlive(current)) {
    throw new RunnerError(
      "target_busy",
      `run ${path.basename(dir)} is being run by process ${current.pid} on this machine: let it finish, or stop it (Ctrl-C there, or \`kill -INT ${current.pid}\`), then resume`,
    );
  }
  const files = await ConfinedFolder.at(dir, "the run folder");
  await files.writeJson(RUN_STATE, { state: "running", pid: process.pid, hostname: os.hostname() } satisfies RunStateFile);
}

/** Records how the attempt ended: nothing left to say when it finished, else the error. */
export async function releaseRunFolder(dir: string, error?: unknown): Promise<void> {
  const file = path.join(dir, RUN_STATE);
  if (error === undefined) {
    await fs.rm(file, { force: true });
    return;
  }
  const code = error instanceof RunnerError ? error.code : "internal";
  const message = error instanceof Error ? error.message : String(error);
  const resumable = error instanceof RunnerError ? error.resumable : false;
  await (
    await ConfinedFolder.at(dir, "the run folder")
  ).writeJson(RUN_STATE, {
    state: "failed",
    pid: process.pid,
    hostname: os.hostname(),
    code,
    message,
    resumable,
  } satisfies RunStateFile);
}

async function readState(dir: string): Promise<RunStateFile | undefined> {
  return readRunFile(dir, RUN_STATE).then(
    (t) => JSON.parse(t) as RunStateFile,
    () => undefined,
  );
}

/**
 * The text of a file of a run folder; rejects where it leads out of the folder (a link): a run
 * folder can come with a repository, and what it links to is not its to show.
 */
export async function readRunFile(dir: string, file: string): Promise<string> {
  return fs.readFile(await pathWithinFolder(dir, file, "the run folder"), "utf8");
}

/**
 * Whether a run state's pid can name one process: a positive integer. run-state.json lies in a
 * folder anyone can hand over, and to process.kill -1 is every process of the user, 0 this
 * process's group, and a negative number a group.
 */
function isProcessId(pid: unknown): pid is number {
  return typeof pid === "number" && Number.isSafeInteger(pid) && pid > 0;
}

/** Whether the process that wrote a state still lives (on this machine; one elsewhere is taken as alive). */
function isAlive(state: RunStateFile): boolean {
  if (!isProcessId(state.pid)) return false;
  if (state.hostname !== os.hostname()) return true;
  try {
    process.kill(state.pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

export async function runStatus(dir: string): Promise<RunStatus> {
  if (await isFile(path.join(dir, "results.json"))) return { state: "finished" };
  const state = await readState(dir);
  if (state?.state === "running" && isAlive(state)) {
    const progress = await latestProgress(dir);
    return { state: "running", pid: state.pid, ...(progress ? { progress } : {}) };
  }
  if (state?.state === "failed")
    return { state: "failed", code: state.code ?? "internal", message: state.message ?? "", resumable: state.resumable === true };
  return { state: "interrupted" };
}

/** The events file of the model whose events were written last, and that model's folder name. */
async function newestEvents(dir: string): Promise<{ model: string; file: string } | undefined> {
  const modelsDir = path.join(dir, "models");
  const models = await fs.readdir(modelsDir).catch(() => [] as string[]);
  const logs = await Promise.all(
    models.map(async (model) => {
      // a log that links out of the run folder is not read: as if there were none
      const file = await pathWithinFolder(dir, path.join("models", model, "events.jsonl")).catch(() => undefined);
      const mtime = file === undefined ? -1 : ((await fs.stat(file).catch(() => undefined))?.mtimeMs ?? -1);
      return { model, file: file ?? "", mtime };
    }),
  );
  return logs.filter((l) => l.mtime >= 0).sort((a, b) => b.mtime - a.mtime)[0];
}

/** The log of a run that failed: the events file (NDJSON of the runner) written last in its folder. */
export async function latestEventsFile(dir: string): Promise<string | undefined> {
  return (await newestEvents(dir))?.file;
}

/**
 * What a failed run's notification says: what failed (the model and the phase it was in, when
 * known) and the error, its code first. `Profile failed while scoring model m (baseline): resources: ...`
 */
export function failureSummary(error: { code?: string; message: string }, at?: { model: string; phase: string; ability?: string }): string {
  const where = at ? ` in model ${at.model}, ${at.ability === undefined ? at.phase : `${at.phase} (${at.ability})`}` : "";
  return `Profile failed${where}: ${error.code ? `${error.code}: ` : ""}${error.message}`;
}

/** The last progress event of the model whose events were written last. */
async function latestProgress(dir: string): Promise<RunFolderProgress | undefined> {
  const newest = await newestEvents(dir);
  if (!newest) return undefined;
  const tail = await readTail(newest.file, 16 * 1024);
  for (const line of tail.split("\n").reverse()) {
    if (line.trim() === "") continue;
    const event = parseEventLine(line);
    if (event.type === "progress")
      return {
        model: newest.model,
        phase: event.phase,
        done: event.done,
        total: event.total,
        ...(event.ability ? { ability: event.ability } : {}),
      };
  }
  return undefined;
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
  const runs = await Promise.all(
    ids.map(async (id): Promise<RunEntry | undefined> => {
      const dir = path.join(runsDir, id);
      const manifest = await readRunFile(dir, RUN_MANIFEST).then(
        (t) => JSON.parse(t) as RunManifest,
        () => undefined,
      );
      if (typeof manifest?.config_file !== "string") return undefined;
      return { id, dir, configFile: manifest.config_file, finished: await isFile(path.join(dir, "results.json")) };
    }),
  );
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

export interface RunRow extends RunEntry {
  status: RunStatus;
}

/** The runs of some configs with where each stands, newest first (a folder shared by configs is read once). */
export async function runsOfConfigs(configFiles: readonly string[]): Promise<RunRow[]> {
  const wanted = new Set(configFiles.map((f) => path.resolve(f)));
  const outputs = new Set(await Promise.all([...wanted].map((f) => outputDirOf(f))));
  const runs = (await Promise.all([...outputs].map((dir) => runsIn(dir)))).flat().filter((r) => wanted.has(path.resolve(r.configFile)));
  const rows = await Promise.all(
    runs.map(async (r) => ({ ...r, status: r.finished ? ({ state: "finished" } as const) : await runStatus(r.dir) })),
  );
  return rows.sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
}

/** Whether resuming the run continues it: it stopped (cancelled, interrupted, or failed on something a second try may not meet). */
export function isResumable(status: RunStatus): boolean {
  return status.state === "interrupted" || (status.state === "failed" && status.resumable);
}

/** What the Runs view does with a run; each applies to the runs in some states only. */
export type RunAction = "open" | "resume" | "cancel" | "delete" | "reveal";

/** Whether an action applies to a run where it stands (the Runs view's menus offer it on the run's row then). */
export function runAllows(row: RunRow, action: RunAction): boolean {
  switch (action) {
    case "open":
      return row.status.state === "finished";
    case "resume":
      return isResumable(row.status);
    case "cancel":
      return row.status.state === "running";
    case "delete":
      return row.status.state !== "running";
    case "reveal":
      return true;
  }
}

/**
 * The run of a folder among rows read now, undefined when it is not among them (its folder was
 * deleted, its config left the workspace). A row kept from an earlier read may say where the run
 * stood then; this one says where it stands.
 */
export function runOfFolder(rows: readonly RunRow[], dir: string): RunRow | undefined {
  const wanted = path.resolve(dir);
  return rows.find((row) => path.resolve(row.dir) === wanted);
}

/**
 * Why the process a run state names may not be asked to stop from here; undefined when it may.
 * Only a positive pid of another process on this machine is signalled: one on another machine
 * (its pid means nothing here) is stopped there.
 */
function stopRefusal(state: RunStateFile | undefined): string | undefined {
  if (state?.state !== "running") return "it is not running";
  if (!isProcessId(state.pid))
    return `its ${RUN_STATE} names no process (pid ${JSON.stringify(state.pid)}), so nothing was signalled; the run can be resumed`;
  if (state.pid === process.pid) return "it is run by this process, which does not signal itself: cancel it where it was started";
  if (state.hostname !== os.hostname())
    return `it runs on ${JSON.stringify(String(state.hostname))}, not on this machine: stop it there (Ctrl-C, or \`kill -INT ${state.pid}\`)`;
  return undefined;
}

/** Asks the process that runs a folder to stop (SIGINT: it finishes its item and the run can resume), or says why not. */
export async function askRunToStop(dir: string): Promise<{ pid: number } | { refused: string }> {
  const state = await readState(dir).catch(() => undefined);
  const refused = stopRefusal(state);
  if (refused !== undefined) return { refused: `run ${path.basename(dir)} was not stopped: ${refused}` };
  const pid = state!.pid;
  try {
    process.kill(pid, "SIGINT");
    return { pid };
  } catch (e) {
    return { refused: `run ${path.basename(dir)} was not stopped: process ${pid} cannot be signalled (${(e as Error).message})` };
  }
}

/** The pace of the model's runner in the newest finished run of the config that timed it. */
export async function newestPace(configFile: string, model: string): Promise<Pace | undefined> {
  for (const run of (await runsOfConfig(configFile).catch(() => [])).filter((r) => r.finished)) {
    const pace = await measuredPace(path.join(run.dir, "models", modelFolderName(model)), run.id);
    if (pace) return pace;
  }
  return undefined;
}
