// The messages between the editor and the worker thread that holds the workspace model. Checks,
// template rendering and tokenizers run in the worker, so a slow check never freezes the editor.
import type { CompletionItem } from "../language/completion";
import type { HelperPolicy } from "../lmeval/taskPython";
import type { ProfileOutline } from "../language/outline";
import type { Position } from "../language/text";
import type { Problem } from "../base/problems";
import type { FileChange } from "./model";
import type { FileCases } from "./service";
import type { CellCases, CellRef } from "../report/cases";
import type { ChoiceMetric } from "../analysis/ais";

/** From the editor, answered by nothing. */
export type WorkerNotification =
  | { type: "documents"; set: { file: string; text: string; version: number }[]; closed: string[] }
  | { type: "filesChanged"; changes: FileChange[] }
  | { type: "filesFound"; files: string[] }
  /** The workspace folders, searched for task files, datasets and model folders to complete. */
  | { type: "roots"; folders: string[] }
  /** Whether task files' Python runs: never in Restricted Mode, else as the user allowed (lmeval/taskPython.ts). */
  | { type: "taskPython"; policy: HelperPolicy };

/** From the editor, each answered by one response with its id. */
export interface WorkerRequests {
  /** Markdown for the thing at `position`, and whether it is only the schema's words (a YAML extension may show those). */
  hover(params: { file: string; position: Position }): { markdown: string; schemaOnly: boolean } | null;
  completion(params: { file: string; position: Position }): CompletionItem[];
  /** The outlines of every config, for the Profiles tree and the CodeLens lines. */
  outlines(params: Record<string, never>): ProfileOutline[];
  /** Resolves once every change sent so far is checked (commands that need current problems). */
  settled(params: Record<string, never>): { checked: number };
  /** Compiles a config's jobs (tokenizes every item); returns what that found, also published as problems. */
  compileJobs(params: { file: string }): Problem[];
  /** The problems of one file as they stand. */
  problemsOf(params: { file: string }): Problem[];
  /** The documents of a benchmark data file that runs flipped, by line (the run of each config: picked, else the newest finished). */
  cases(params: { file: string; picks: Record<string, string> }): FileCases[];
  /** The documents one cell of a run flipped, with their texts and places (the results view, the Negative AIS view). */
  cellCases(params: { runDir: string; ref: CellRef; metric: ChoiceMetric }): CellCases;
}

export type RequestMethod = keyof WorkerRequests;
export type RequestParams<M extends RequestMethod> = Parameters<WorkerRequests[M]>[0];
export type RequestResult<M extends RequestMethod> = ReturnType<WorkerRequests[M]>;

export type ToWorker = WorkerNotification | { type: "request"; id: number; method: RequestMethod; params: unknown };

/** From the worker. */
export type FromWorker =
  | { type: "problems"; files: [string, Problem[]][]; checked: string[]; milliseconds: number }
  | { type: "response"; id: number; result?: unknown; error?: string }
  | { type: "log"; message: string };
