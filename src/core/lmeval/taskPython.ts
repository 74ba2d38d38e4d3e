// Whether a task's Python may run: its `!function` helpers, filter classes and scorers are code
// the task's folder ships, and lm-eval imports them only when an evaluation runs. The profiler
// imports them as soon as it checks a task, so the editor and the CLI decide first, by a policy:
// the CLI runs them (as lm-eval would, unless --no-task-python); the editor asks the user once per
// helper file and content hash in a trusted workspace, and never runs them in Restricted Mode.
import { createHash } from "node:crypto";
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { isWithinFolder } from "../base/fsutil";
import { importedTaskFiles } from "./pythonImports";

/** A helper file a task imports, and its content's SHA-256 (`missing` when it cannot be read). */
export interface HelperFile {
  file: string;
  sha256: string;
}

/**
 * Whether task Python may run: `run` always; `refuse` never, the workspace is not trusted;
 * `never` never, the user turned it off; `allowed` only helper files whose consent key
 * (consentKey) the user allowed.
 */
export type HelperPolicy = "run" | "refuse" | "never" | { allowed: readonly string[] };

/** The setting `benchmarkProfiler.taskPython`. */
export type TaskPythonSetting = "ask" | "allow" | "never";

const STRICTNESS: readonly TaskPythonSetting[] = ["allow", "ask", "never"];

/**
 * The setting that applies: the user's (default `ask`), made stricter, never laxer, by the
 * workspace's own settings, which a cloned repository may ship (`.vscode/settings.json`).
 */
export function effectiveTaskPythonSetting(user: unknown, workspace: unknown): TaskPythonSetting {
  const known = (value: unknown) => STRICTNESS.find((s) => s === value);
  const mine = known(user) ?? "ask";
  const theirs = known(workspace);
  return theirs && STRICTNESS.indexOf(theirs) > STRICTNESS.indexOf(mine) ? theirs : mine;
}

/** The user's answers, by consent key: true allowed, false refused. */
export type TaskPythonAnswers = Readonly<Record<string, boolean>>;

/** Why task Python does not run, and the helper files the user could allow (only when asking may change it). */
export interface HelperRefusal {
  message: string;
  ask?: HelperFile[];
}

/** What an answer is remembered by: the file and its content, so an edited helper is asked about again. */
export function consentKey(helper: HelperFile): string {
  return `${helper.sha256} ${helper.file}`;
}

/** A workspace's policy: nothing in Restricted Mode or when turned off, everything when allowed, else what the user allowed. */
export function workspacePolicy(trusted: boolean, setting: TaskPythonSetting, answers: TaskPythonAnswers): HelperPolicy {
  if (!trusted) return "refuse";
  if (setting === "never") return "never";
  if (setting === "allow") return "run";
  return { allowed: Object.keys(answers).filter((key) => answers[key] === true) };
}

/** The helper files the user has not answered about yet: those to ask about, once each. */
export function filesToAsk(files: readonly HelperFile[], answers: TaskPythonAnswers): HelperFile[] {
  const seen = new Set<string>();
  return files.filter((f) => {
    const key = consentKey(f);
    if (key in answers || seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** The answers with `files` answered `allow`. */
export function withAnswer(answers: TaskPythonAnswers, files: readonly HelperFile[], allow: boolean): TaskPythonAnswers {
  return { ...answers, ...Object.fromEntries(files.map((f) => [consentKey(f), allow])) };
}

/** Why `files` may not run under `policy`; undefined when they may. */
export function helperRefusal(policy: HelperPolicy | undefined, files: readonly HelperFile[]): HelperRefusal | undefined {
  if (policy === undefined || policy === "run" || files.length === 0) return undefined;
  if (policy === "refuse") return { message: "helpers run only in a trusted workspace: trust this folder to check and run this task" };
  if (policy === "never") return { message: "task Python is turned off (benchmarkProfiler.taskPython is `never`, or --no-task-python)" };
  const allowed = new Set(policy.allowed);
  const unanswered = files.filter((f) => !allowed.has(consentKey(f)));
  if (unanswered.length === 0) return undefined;
  const names = unanswered.map((f) => `\`${path.basename(f.file)}\``).join(", ");
  return {
    message: `it imports ${names}, Python this folder ships, which Benchmark Profiler runs only once you allow it (the prompt, or the setting benchmarkProfiler.taskPython)`,
    ask: unanswered,
  };
}

/** A helper module file, and the task folder it is imported from (the folder of the YAML that names it). */
export interface HelperEntry {
  dir: string;
  file: string;
}

/**
 * Every Python file of the task folders that running `entries` executes, as far as their imports
 * say (pythonImports.ts), hashed now: what a consent is to. A file whose real path leaves its task
 * folder (a link) is left out, so no answer can allow it and the bridge refuses it.
 */
export async function helperFilesToConsent(entries: readonly HelperEntry[]): Promise<HelperFile[]> {
  const byDir = new Map<string, string[]>();
  for (const { dir, file } of entries) byDir.set(dir, [...(byDir.get(dir) ?? []), file]);
  const files: string[] = [];
  for (const [dir, inDir] of byDir) {
    const realDir = await fs.realpath(dir).catch(() => dir);
    for (const file of await importedTaskFiles(dir, inDir)) {
      const real = await fs.realpath(file).catch(() => file);
      if (isWithinFolder(realDir, real)) files.push(file);
    }
  }
  return hashHelperFiles(files);
}

/**
 * The helper files' contents that a check allowed to run in this process, by file: the only
 * bytes the bridge executes (bridgeSource.ts checks each module's bytes against them before it
 * compiles them), so a file changed after its consent, or never consented to, does not run.
 */
const consented = new Map<string, Set<string>>();

/** Records that `files`, with these contents, may run (a check allowed them under its policy). */
export function recordConsent(files: readonly HelperFile[]): void {
  for (const f of files) {
    if (f.sha256 === "missing") continue;
    const file = path.resolve(f.file);
    const hashes = consented.get(file) ?? new Set<string>();
    hashes.add(f.sha256);
    consented.set(file, hashes);
  }
}

/** The consented contents of the files under `dirs`, by file: what the bridge may run there. */
export function consentedUnder(dirs: readonly string[]): Record<string, string[]> {
  const allowed: Record<string, string[]> = {};
  for (const [file, hashes] of consented) if (dirs.some((dir) => isWithinFolder(dir, file))) allowed[file] = [...hashes];
  return allowed;
}

/** The content hash of each helper file, read now; `missing` for a file that cannot be read. */
export async function hashHelperFiles(files: readonly string[]): Promise<HelperFile[]> {
  return Promise.all(
    [...new Set(files)].map(async (file) => {
      const bytes = await fs.readFile(file).catch(() => undefined);
      return { file, sha256: bytes ? createHash("sha256").update(bytes).digest("hex") : "missing" };
    }),
  );
}
