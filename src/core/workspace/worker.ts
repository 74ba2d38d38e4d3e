// The worker thread of the editor: holds the workspace model, checks what changed after each
// message (one update at a time; changes that arrive meanwhile are checked in the next), posts
// the problems that changed, and answers requests. Started by WorkspaceClient.
import { parentPort } from "node:worker_threads";
import { performance } from "node:perf_hooks";
import { WorkspaceModel } from "./model";
import type { FromWorker, RequestMethod, RequestParams, ToWorker } from "./protocol";
import { WorkspaceService } from "./service";

const port = parentPort;
if (!port) throw new Error("workspace worker: started outside a worker thread");

const model = new WorkspaceModel();
const service = new WorkspaceService(model);
let updating: Promise<void> | undefined;
let checkedTotal = 0;

function post(message: FromWorker): void {
  port!.postMessage(message);
}

/** Updates until nothing is pending; the promise of the running loop when one runs. */
function update(): Promise<void> {
  // `finally` runs after the assignment, even when nothing was pending and the loop ended at once;
  // a change that came in as the loop ended starts the next one.
  updating ??= checkWhilePending().finally(() => {
    updating = undefined;
    if (model.pending) void update();
  });
  return updating;
}

async function checkWhilePending(): Promise<void> {
  try {
    while (model.pending) {
      const started = performance.now();
      const result = await model.update();
      checkedTotal += result.checked.length;
      if (result.problems.size > 0 || result.checked.length > 0) {
        post({ type: "problems", files: [...result.problems], checked: result.checked, milliseconds: performance.now() - started });
      }
    }
  } catch (e) {
    post({ type: "log", message: `workspace check failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}` });
  }
}

async function answer(method: RequestMethod, params: unknown): Promise<unknown> {
  switch (method) {
    case "hover": {
      const { file, position } = params as RequestParams<"hover">;
      return service.hover(file, position);
    }
    case "completion": {
      const { file, position } = params as RequestParams<"completion">;
      return service.completion(file, position);
    }
    case "outlines":
      await update();
      return service.outlines();
    case "settled":
      await update();
      return { checked: checkedTotal };
    case "compileJobs": {
      await update();
      const problems = await model.compileJobs((params as RequestParams<"compileJobs">).file);
      const changed = model.takeChangedProblems();
      if (changed.size > 0) post({ type: "problems", files: [...changed], checked: [], milliseconds: 0 });
      return problems;
    }
    case "problemsOf":
      await update();
      return model.problemsOf((params as RequestParams<"problemsOf">).file);
    case "cases": {
      await update();
      const { file, picks } = params as RequestParams<"cases">;
      return service.cases(file, picks);
    }
    case "cellCases": {
      const { runDir, ref, metric } = params as RequestParams<"cellCases">;
      return service.cellCases(runDir, ref, metric);
    }
  }
}

port.on("message", (message: ToWorker) => {
  switch (message.type) {
    case "documents":
      for (const d of message.set) model.setDocument(d.file, d.text, d.version);
      for (const file of message.closed) model.closeDocument(file);
      break;
    case "filesChanged":
      model.filesChanged(message.changes);
      service.filesChanged(message.changes);
      break;
    case "filesFound":
      model.filesFound(message.files);
      break;
    case "roots":
      service.setRoots(message.folders);
      return;
    case "taskPython":
      model.setHelpers(message.policy);
      break;
    case "request":
      answer(message.method, message.params).then(
        (result) => post({ type: "response", id: message.id, result: result ?? null }),
        (e: unknown) => post({ type: "response", id: message.id, error: e instanceof Error ? e.message : String(e) }),
      );
      return;
  }
  void update();
});
