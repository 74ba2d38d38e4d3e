// The editor's side of the workspace worker: sends documents and file changes, receives problems,
// and asks typed requests. A worker that dies (or stops answering) is started again and given the
// open documents and the files found so far, so the editor keeps its checks.
import { Worker } from "node:worker_threads";
import type { FileChange } from "./model";
import type { FromWorker, RequestMethod, RequestParams, RequestResult, ToWorker } from "./protocol";
import type { Problem } from "../base/problems";
import type { HelperPolicy } from "../lmeval/taskPython";

export interface ProblemsUpdate {
  files: [string, Problem[]][];
  checked: string[];
  milliseconds: number;
}

export interface WorkspaceClientOptions {
  /** The worker's script: the bundle dist/workspaceWorker.cjs (tests start the TypeScript source through a loader). */
  script: string | URL;
  workerData?: unknown;
  onProblems(update: ProblemsUpdate): void;
  onLog?(message: string): void;
  /** A request unanswered after this long restarts the worker (default 60 s). */
  requestTimeoutMs?: number;
}

interface Pending {
  resolve(value: unknown): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

export class WorkspaceClient {
  private worker!: Worker;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly documents = new Map<string, { text: string; version: number }>();
  private readonly found = new Set<string>();
  private roots: string[] = [];
  private helpers?: HelperPolicy;
  private disposed = false;

  constructor(private readonly options: WorkspaceClientOptions) {
    this.start();
  }

  private start(): void {
    // Not the parent's flags: an extension host runs with inspector and other flags of its own.
    this.worker = new Worker(this.options.script, { workerData: this.options.workerData, execArgv: [] });
    this.worker.on("message", (message: FromWorker) => this.received(message));
    this.worker.on("error", (e) => this.options.onLog?.(`workspace worker failed: ${e.stack ?? e.message}`));
    this.worker.on("exit", (code) => {
      if (this.disposed) return;
      this.options.onLog?.(`workspace worker exited (code ${code}); starting it again`);
      this.restart();
    });
    if (this.helpers !== undefined) this.post({ type: "taskPython", policy: this.helpers });
    if (this.roots.length > 0) this.post({ type: "roots", folders: this.roots });
    if (this.found.size > 0) this.post({ type: "filesFound", files: [...this.found] });
    if (this.documents.size > 0)
      this.post({ type: "documents", set: [...this.documents].map(([file, d]) => ({ file, ...d })), closed: [] });
  }

  private restart(): void {
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(new Error("the workspace worker restarted"));
      this.pending.delete(id);
    }
    this.worker.removeAllListeners();
    void this.worker.terminate();
    this.start();
  }

  private received(message: FromWorker): void {
    if (message.type === "problems")
      this.options.onProblems({ files: message.files, checked: message.checked, milliseconds: message.milliseconds });
    else if (message.type === "log") this.options.onLog?.(message.message);
    else {
      const p = this.pending.get(message.id);
      if (!p) return;
      this.pending.delete(message.id);
      clearTimeout(p.timer);
      if (message.error !== undefined) p.reject(new Error(message.error));
      else p.resolve(message.result);
    }
  }

  private post(message: ToWorker): void {
    if (!this.disposed) this.worker.postMessage(message);
  }

  /** Whether task Python may run (the workspace's trust, the setting and the user's answers). */
  setHelperPolicy(policy: HelperPolicy): void {
    this.helpers = policy;
    this.post({ type: "taskPython", policy });
  }

  setRoots(folders: readonly string[]): void {
    this.roots = [...folders];
    this.post({ type: "roots", folders: this.roots });
  }

  setDocuments(set: readonly { file: string; text: string; version: number }[], closed: readonly string[] = []): void {
    for (const d of set) this.documents.set(d.file, { text: d.text, version: d.version });
    for (const file of closed) this.documents.delete(file);
    this.post({ type: "documents", set: [...set], closed: [...closed] });
  }

  filesChanged(changes: readonly FileChange[]): void {
    for (const c of changes) {
      if (c.kind === "deleted") this.found.delete(c.file);
    }
    this.post({ type: "filesChanged", changes: [...changes] });
  }

  filesFound(files: readonly string[]): void {
    for (const f of files) this.found.add(f);
    this.post({ type: "filesFound", files: [...files] });
  }

  request<M extends RequestMethod>(method: M, params: RequestParams<M>): Promise<Awaited<RequestResult<M>>> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timeoutMs = this.options.requestTimeoutMs ?? 60_000;
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`the workspace worker did not answer \`${method}\` in ${timeoutMs / 1000} s; it is started again`));
        this.options.onLog?.(`workspace worker: no answer to ${method} in ${timeoutMs} ms; restarting it`);
        this.restart();
      }, timeoutMs);
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, timer });
      this.post({ type: "request", id, method, params });
    });
  }

  dispose(): void {
    this.disposed = true;
    for (const p of this.pending.values()) clearTimeout(p.timer);
    this.pending.clear();
    void this.worker.terminate();
  }
}
