// The workspace as the extension sees it: VS Code's documents and file events, sent to the
// workspace model in its worker thread (src/core/workspace), and the problems it finds, shown in
// the Problems panel and as squiggles. Typing is sent after a short pause, and at once before a
// hover or a completion asks, so they read what the editor shows.
import * as path from "node:path";
import * as vscode from "vscode";
import { WorkspaceClient, type ProblemsUpdate } from "../../core/workspace/client";
import type { FileChange } from "../../core/workspace/model";
import type { RequestMethod, RequestParams, RequestResult } from "../../core/workspace/protocol";
import type { ProfileOutline } from "../../core/language/outline";
import type { Problem } from "../../core/base/problems";
import {
  effectiveTaskPythonSetting,
  filesToAsk,
  withAnswer,
  workspacePolicy,
  type HelperFile,
  type HelperPolicy,
  type TaskPythonAnswers,
  type TaskPythonSetting,
} from "../../core/lmeval/taskPython";
import type { Log } from "../output";
import { toDiagnostic, diagnosticKey } from "../language/convert";

/** The files the model reads: configs, tasks, datasets and data, and what a model folder holds. */
const WATCHED = "**/*.{yaml,yml,jsonl,json,csv,parquet,jinja,safetensors}";
const SENT_EXTENSIONS = /\.(ya?ml|jsonl|json|csv)$/;
/** Pause in typing before the text is checked. */
const TYPING_PAUSE_MS = 150;
const TASK_PYTHON_SETTING = "benchmarkProfiler.taskPython";
/** workspaceState: the user's answers about task Python, by helper file and content (lmeval/taskPython.ts). */
const TASK_PYTHON_ANSWERS = "benchmarkProfiler.taskPythonAnswers";

function taskPythonSetting(): TaskPythonSetting {
  const inspected = vscode.workspace.getConfiguration().inspect<string>(TASK_PYTHON_SETTING);
  return effectiveTaskPythonSetting(inspected?.globalValue, inspected?.workspaceFolderValue ?? inspected?.workspaceValue);
}

/** The question, in a notification (not modal: checks go on meanwhile); undefined when dismissed. */
async function askToRunPython(files: readonly HelperFile[]): Promise<boolean | undefined> {
  const folders = vscode.workspace.workspaceFolders ?? [];
  // A notification turns `[text](command:...)` into a link that runs the command: a file's name
  // cannot make one (VS Code's links need `](` together).
  const shown = files
    .map((f) => vscode.workspace.asRelativePath(f.file, folders.length > 1))
    .join(", ")
    .replace(/\]\(/g, "] (");
  const allow = "Allow";
  const refuse = "Don't Allow";
  const choice = await vscode.window.showWarningMessage(
    `Benchmark Profiler: the lm-eval tasks of this folder import Python (${shown}), which checking them runs on this machine, as lm-eval runs it when it evaluates. Allow it for these files as they are now?`,
    allow,
    refuse,
  );
  return choice === allow ? true : choice === refuse ? false : undefined;
}

/** Larger documents are left to the disk (the model reads the saved file). */
const MAX_SENT_CHARACTERS = 64 * 1024 * 1024;

/** What the workspace model needs of the extension: its folder (for the worker's script), its state and the log. */
export interface WorkspaceNeeds {
  readonly extension: vscode.ExtensionContext;
  readonly log: Log;
}

export class Workspace implements vscode.Disposable {
  private client: WorkspaceClient | undefined;
  private readonly collection = vscode.languages.createDiagnosticCollection("bprof");
  private readonly problems = new Map<string, Map<string, Problem>>();
  private readonly pending = new Map<string, NodeJS.Timeout>();
  private readonly changed = new vscode.EventEmitter<void>();
  private outlined: Promise<ProfileOutline[]> | undefined;
  /** A question about task Python is on screen: one at a time. */
  private asking = false;
  private readonly disposables: vscode.Disposable[] = [this.collection, this.changed];
  /** Fires after problems changed (the Profiles tree and the CodeLens lines refresh). */
  readonly onDidChange = this.changed.event;

  constructor(private readonly needs: WorkspaceNeeds) {}

  /** Starts the worker, sends what the workspace holds, and follows its changes. */
  start(): void {
    this.needs.log("starting the workspace model");
    this.client = new WorkspaceClient({
      script: path.join(this.needs.extension.extensionPath, "dist", "workspaceWorker.cjs"),
      onProblems: (update) => this.show(update),
      onLog: (message) => this.needs.log(message),
    });
    this.client.setHelperPolicy(this.helperPolicy);
    this.client.setRoots((vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath));
    const watcher = vscode.workspace.createFileSystemWatcher(WATCHED);
    this.disposables.push(
      watcher,
      watcher.onDidCreate((uri) => this.fileChanged(uri, "created")),
      watcher.onDidChange((uri) => this.fileChanged(uri, "changed")),
      watcher.onDidDelete((uri) => this.fileChanged(uri, "deleted")),
      vscode.workspace.onDidOpenTextDocument((d) => this.send(d)),
      vscode.workspace.onDidChangeTextDocument((e) => this.schedule(e.document)),
      vscode.workspace.onDidCloseTextDocument((d) => this.close(d)),
      vscode.workspace.onDidGrantWorkspaceTrust(() => this.client?.setHelperPolicy(this.helperPolicy)),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration(TASK_PYTHON_SETTING)) this.client?.setHelperPolicy(this.helperPolicy);
      }),
      vscode.workspace.onDidChangeWorkspaceFolders(() =>
        this.client?.setRoots((vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath)),
      ),
    );
    for (const document of vscode.workspace.textDocuments) this.send(document);
    void this.discover();
  }

  private async discover(): Promise<void> {
    // Run folders (.bprof/runs/*) hold snapshots of configs, not configs.
    const found = await Promise.all(
      ["**/*.bprof.yaml", "**/*.diag.jsonl"].map((glob) => vscode.workspace.findFiles(glob, "**/{node_modules,.bprof}/**", 5000)),
    );
    this.needs.log(`found ${found.flat().length} configs and datasets`);
    this.client?.filesFound(found.flat().map((uri) => uri.fsPath));
  }

  private fileChanged(uri: vscode.Uri, kind: FileChange["kind"]): void {
    if (uri.scheme === "file") this.client?.filesChanged([{ file: uri.fsPath, kind }]);
  }

  private isSent(document: vscode.TextDocument): boolean {
    return document.uri.scheme === "file" && SENT_EXTENSIONS.test(document.fileName) && document.getText().length <= MAX_SENT_CHARACTERS;
  }

  private send(document: vscode.TextDocument): void {
    clearTimeout(this.pending.get(document.fileName));
    this.pending.delete(document.fileName);
    if (this.isSent(document))
      this.client?.setDocuments([{ file: document.fileName, text: document.getText(), version: document.version }]);
  }

  private schedule(document: vscode.TextDocument): void {
    if (!SENT_EXTENSIONS.test(document.fileName) || document.uri.scheme !== "file") return;
    clearTimeout(this.pending.get(document.fileName));
    this.pending.set(
      document.fileName,
      setTimeout(() => this.send(document), TYPING_PAUSE_MS),
    );
  }

  private close(document: vscode.TextDocument): void {
    clearTimeout(this.pending.get(document.fileName));
    this.pending.delete(document.fileName);
    if (document.uri.scheme === "file") this.client?.setDocuments([], [document.fileName]);
  }

  /** Files the model should check even if no search found them (a config passed to a command). */
  found(files: readonly string[]): void {
    this.client?.filesFound(files);
  }

  /** Asks the outlines again (a run finished: a config has new results). */
  refresh(): void {
    this.outlined = undefined;
    this.changed.fire();
  }

  /** Sends `document`'s text now if a pause in typing is still pending. */
  flush(document: vscode.TextDocument): void {
    if (this.pending.has(document.fileName)) this.send(document);
  }

  /**
   * Whether task Python may run, for every task this window loads (the worker's checks, results
   * and cases, Profile): never in Restricted Mode; else as the setting says, and under `ask` only
   * the helper files (by content) the user allowed in this workspace.
   */
  get helperPolicy(): HelperPolicy {
    return workspacePolicy(vscode.workspace.isTrusted, taskPythonSetting(), this.pythonAnswers);
  }

  private get pythonAnswers(): TaskPythonAnswers {
    return this.needs.extension.workspaceState.get<TaskPythonAnswers>(TASK_PYTHON_ANSWERS, {});
  }

  /**
   * Asks once about helper files the checks found not allowed yet (a problem's `pythonFiles`):
   * each file and content is asked about once per workspace, and the answer kept in its state.
   */
  private async askAboutPython(problems: readonly Problem[]): Promise<void> {
    if (this.asking || !vscode.workspace.isTrusted || taskPythonSetting() !== "ask") return;
    const files = filesToAsk(
      problems.flatMap((p) => p.data?.pythonFiles ?? []),
      this.pythonAnswers,
    );
    if (files.length === 0) return;
    this.asking = true;
    try {
      const allow = await askToRunPython(files);
      if (allow === undefined) return; // dismissed: asked again by the next check that meets the files
      await this.needs.extension.workspaceState.update(TASK_PYTHON_ANSWERS, withAnswer(this.pythonAnswers, files, allow));
      this.needs.log(`task Python ${allow ? "allowed" : "refused"}: ${files.map((f) => f.file).join(", ")}`);
      this.client?.setHelperPolicy(this.helperPolicy);
    } finally {
      this.asking = false;
    }
  }

  private show(update: ProblemsUpdate): void {
    void this.askAboutPython(update.files.flatMap(([, problems]) => problems));
    for (const [file, problems] of update.files) {
      const uri = vscode.Uri.file(file);
      this.problems.set(file, new Map(problems.map((p) => [diagnosticKey(uri, p), p])));
      if (problems.length === 0) this.problems.delete(file);
      this.collection.set(uri, problems.map(toDiagnostic));
    }
    if (update.checked.length > 0)
      this.needs.log(
        `checked ${update.checked.length} file(s) in ${update.milliseconds.toFixed(0)} ms: ${update.checked.map((c) => path.basename(c)).join(", ")}`,
      );
    this.outlined = undefined;
    this.changed.fire();
  }

  /** The outline of every config, asked once per change of the problems. */
  outlines(): Promise<ProfileOutline[]> {
    this.outlined ??= this.request("outlines", {}).catch((e: Error) => {
      this.needs.log(`outlines: ${e.message}`);
      this.outlined = undefined;
      return [];
    });
    return this.outlined;
  }

  /** The problem behind a diagnostic this extension published (quick fixes read its code and data). */
  problemOf(uri: vscode.Uri, diagnostic: vscode.Diagnostic): Problem | undefined {
    return this.problems.get(uri.fsPath)?.get(diagnosticKey(uri, diagnostic));
  }

  request<M extends RequestMethod>(method: M, params: RequestParams<M>): Promise<Awaited<RequestResult<M>>> {
    if (!this.client) return Promise.reject(new Error("the workspace model is not running"));
    return this.client.request(method, params);
  }

  dispose(): void {
    for (const timer of this.pending.values()) clearTimeout(timer);
    this.client?.dispose();
    for (const d of this.disposables) d.dispose();
  }
}
