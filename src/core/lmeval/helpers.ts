// lm-eval's `!function module.name` helpers of a task's documents (process_docs, doc_to_text,
// doc_to_target, doc_to_choice), run by Python as lm-eval runs them: one python3 process per split
// of a task, every document in one batch, JSON in and out (bridgeSource.ts). Answers are kept in
// memory by the helper files' bytes and the documents, so checking a task again as the user types
// does not start Python again.
import { createHash } from "node:crypto";
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { execa } from "execa";
import { BRIDGE_SOURCE } from "./bridgeSource";
import { isModulePath, isPythonName } from "./pythonImports";
import { consentedUnder } from "./taskPython";

/** A `!function module.name` of a task file: the module is `<dir>/<module path>.py`. */
export interface HelperRef {
  /** The folder of the YAML file that names the helper. */
  dir: string;
  module: string;
  name: string;
}

export type DocumentHelperKey = "doc_to_text" | "doc_to_target" | "doc_to_choice";

export interface HelperRequest {
  processDocs?: HelperRef;
  perDocument: Partial<Record<DocumentHelperKey, HelperRef>>;
}

/** The documents after process_docs (as given when there is none) and each helper's value per document. */
export interface HelperAnswer {
  docs: Record<string, unknown>[];
  values: Partial<Record<DocumentHelperKey, unknown[]>>;
}

/** A helper that could not run or failed: which one (`step`), on which document, and the last line Python said. */
export class HelperError extends Error {
  constructor(
    message: string,
    readonly step: "import" | "process_docs" | DocumentHelperKey | "filter" | "score" | "python",
    readonly document?: number,
  ) {
    super(message);
    this.name = "HelperError";
  }
}

/** How long one task's helpers may run, all documents together: BPROF_HELPER_TIME_LIMIT_S seconds, else 120. */
export function helperTimeLimitMs(): number {
  const seconds = Number(process.env.BPROF_HELPER_TIME_LIMIT_S);
  return (Number.isFinite(seconds) && seconds > 0 ? seconds : 120) * 1000;
}

/** The Python that runs helpers: BPROF_PYTHON when set, else python3 on PATH. */
export function pythonCommand(): string {
  return process.env.BPROF_PYTHON || "python3";
}

/** `module.name` of a `!function` tag, resolved against the folder of the file that holds it. */
export function helperRef(functionName: string, yamlFile: string): HelperRef | undefined {
  const dot = functionName.lastIndexOf(".");
  if (dot <= 0 || dot === functionName.length - 1) return undefined;
  const module = functionName.slice(0, dot);
  const name = functionName.slice(dot + 1);
  // Python names only: TypeScript and Python must mean one file by it, inside the task's folder
  // (os.path.join would take an absolute module path as it is)
  if (!isModulePath(module) || !isPythonName(name)) return undefined;
  return { dir: path.dirname(yamlFile), module, name };
}

/** Who is told the helper files each start of Python imports (`bprof validate` says which ran). */
const importListeners = new Set<(files: string[]) => void>();

/** Calls `listener` with the helper files each time Python starts to run some; returns how to stop. */
export function onPythonImports(listener: (files: string[]) => void): () => void {
  importListeners.add(listener);
  return () => importListeners.delete(listener);
}

/** Answers by request key (helper files' bytes, documents, responses), of both kinds of helper. */
const answers = new Map<string, Promise<unknown>>();
const ANSWERS_KEPT = 64;

/** Runs the helpers on `docs`; the same helper files and documents give the kept answer. */
export async function runHelpers(request: HelperRequest, docs: readonly Record<string, unknown>[]): Promise<HelperAnswer> {
  const input = {
    docs,
    ...(request.processDocs ? { process_docs: request.processDocs } : {}),
    per_document: request.perDocument,
  };
  const refs = [request.processDocs, ...Object.values(request.perDocument)].filter((r): r is HelperRef => r !== undefined);
  return kept(await inputKey(input, refs), async () => {
    const answer = (await bridge(input, refs)) as { docs?: Record<string, unknown>[] | null; values?: HelperAnswer["values"] };
    return { docs: answer.docs ?? [...docs], values: answer.values ?? {} };
  });
}

/** The answer kept under `key`, else `run`'s, kept unless it fails (the user is about to fix the helper or the data). */
function kept<T>(key: string, run: () => Promise<T>): Promise<T> {
  let answer = answers.get(key) as Promise<T> | undefined;
  if (!answer) {
    answer = run();
    answers.set(key, answer);
    answer.catch(() => answers.delete(key));
    if (answers.size > ANSWERS_KEPT) answers.delete(answers.keys().next().value!);
  }
  return answer;
}

/**
 * A request's key: the Python that runs it, its input, the bytes of the helper files it names and
 * what may run in their folders (a new consent, an edited sibling module, asks Python again).
 */
async function inputKey(input: object, refs: readonly HelperRef[]): Promise<string> {
  const hash = createHash("sha256").update(pythonCommand()).update("\0").update(JSON.stringify(input));
  hash.update("\0").update(JSON.stringify(consentedUnder(taskFolders(refs))));
  for (const file of new Set(refs.map(helperModuleFile)))
    hash.update("\0").update(await fs.readFile(file).catch(() => Buffer.from("missing")));
  return hash.digest("hex");
}

/** The task folders the helpers of `refs` are imported from: the only folders Python loads modules of. */
function taskFolders(refs: readonly HelperRef[]): string[] {
  return [...new Set(refs.map((r) => path.resolve(r.dir)))];
}

/** The file Python imports for `ref`: `<dir>/<module path>.py`. */
export function helperModuleFile(ref: HelperRef): string {
  return path.join(ref.dir, ...ref.module.split(".")) + ".py";
}

/**
 * Python in a task's filter_list: a filter class (lm-eval's Filter API), built with the step's
 * other keys; or, for `call: "function"`, a function called as filter_fn(resps, docs).
 */
export interface FilterHelper {
  ref: HelperRef;
  kwargs: Record<string, unknown>;
  call?: "function";
}

/**
 * One filter class applied to every document's responses at once: `resps[i]` are document i's
 * responses, `docs[i]` the document. Kept like the document helpers' answers.
 */
export async function runFilterHelper(
  filter: FilterHelper,
  resps: readonly string[][],
  docs: readonly Record<string, unknown>[],
): Promise<string[][]> {
  const input = {
    filter: { ...filter.ref, kwargs: filter.kwargs, ...(filter.call ? { call: filter.call } : {}) },
    resps,
    docs,
  };
  return kept(await inputKey(input, [filter.ref]), async () => ((await bridge(input, [filter.ref])) as { resps: string[][] }).resps);
}

/**
 * A task's own per-document score in Python. `process_results(doc, results)` returns a dict whose
 * `metric` is the score (results: each choice's (log-likelihood, is_greedy), or the filtered
 * answer of a generation); a `!function` metric is called as lm-eval calls one per document,
 * fn(references=[target], predictions=[answer], **kwargs), and returns the score or a dict of one.
 */
export type PythonScorer =
  | { kind: "process_results"; ref: HelperRef; metric: string }
  | { kind: "metric"; ref: HelperRef; metric: string; kwargs: Record<string, unknown> };

/** One document to score: process_results' `results`, or a metric's reference and prediction. */
export type ScorerInput =
  { doc: Record<string, unknown>; results: unknown[]; chance?: boolean } | { reference: unknown; prediction: unknown };

/**
 * The scorer's value for every input, in order, each a finite number; for a process_results
 * input asked for `chance`, also its value when every choice is equally likely. Kept like the
 * helpers' answers.
 */
export async function runScorer(
  scorer: PythonScorer,
  inputs: readonly ScorerInput[],
): Promise<{ values: number[]; chance: (number | null)[] }> {
  const input = {
    score: { ...scorer.ref, kind: scorer.kind, metric: scorer.metric, kwargs: scorer.kind === "metric" ? scorer.kwargs : {} },
    inputs,
  };
  return kept(
    await inputKey(input, [scorer.ref]),
    async () => (await bridge(input, [scorer.ref])) as { values: number[]; chance: (number | null)[] },
  );
}

/**
 * Runs the bridge on one request, which imports the modules of `refs`; the answer, or
 * HelperError with what Python said. Python runs isolated (-I: no working folder, script folder,
 * PYTHON* variables or user site on its path) and writes no bytecode (-B); the bridge loads the
 * task folders' modules itself, from their source bytes, and only those bytes a check consented
 * to (`consent`), so a planted __pycache__, a module shadowing the standard library at the
 * repository's root or a sibling changed since its consent never runs.
 */
async function bridge(request: object, refs: readonly HelperRef[]): Promise<unknown> {
  const dirs = taskFolders(refs);
  const input = JSON.stringify({ ...request, consent: { dirs, allowed: consentedUnder(dirs) } });
  const python = pythonCommand();
  const limit = helperTimeLimitMs();
  const child = await execa(python, ["-I", "-B", "-c", BRIDGE_SOURCE], {
    input,
    reject: false,
    timeout: limit,
    maxBuffer: 1 << 30,
    env: { PYTHONDONTWRITEBYTECODE: "1" },
  });
  let answer: { loaded?: string[]; error?: { step: HelperError["step"]; document: number | null; message: string } } | undefined;
  try {
    answer = JSON.parse(child.stdout) as typeof answer;
  } catch {
    answer = undefined;
  }
  // the modules of the task folders that ran; without an answer, those the request names
  const ran = Array.isArray(answer?.loaded) ? answer.loaded : [...new Set(refs.map(helperModuleFile))];
  for (const listener of importListeners) listener(ran);
  if ((child as { code?: string }).code === "ENOENT") {
    throw new HelperError(
      `${python} was not found: this task's \`!function\` helpers need Python 3 (install it, or set BPROF_PYTHON to one)`,
      "python",
    );
  }
  if (child.timedOut)
    throw new HelperError(`the helpers did not finish within ${limit / 1000} s (BPROF_HELPER_TIME_LIMIT_S sets the limit)`, "python");
  if (answer === undefined) {
    const said = child.stderr.trim().split("\n").at(-1) ?? "";
    throw new HelperError(`${python} ended without an answer (exit ${child.exitCode ?? child.signal})${said ? `: ${said}` : ""}`, "python");
  }
  if (answer.error) throw new HelperError(answer.error.message, answer.error.step, answer.error.document ?? undefined);
  return answer;
}
