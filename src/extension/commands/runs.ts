// What the Runs tree does with a run: open its results or its HTML report, resume, cancel or delete
// it, reveal its folder, copy its id. Each is given the tree's row it was invoked on, or nothing
// from the palette (or from a row VS Code had forgotten while the tree redrew): then it asks which run.
import { promises as fs } from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import { ConfinedFolder } from "../../core/base/confinedFolder";
import { renderReport } from "../../core/report/index";
import { loadRun } from "../../core/report/load";
import { askRunToStop, runAllows, runOfFolder, runsOfConfigs, runStatus, type RunAction, type RunRow } from "../../core/results/runs";
import type { CommandFactory, Ctx } from "../ctx";
import { showResults } from "../panels/resultsPanel";
import { runFolderOfNode, statusText, type RunsTreeNode } from "../views/runsTree";

/** What each action's pick asks, and says when no run of the workspace is in a state for it. */
const ASKS: Record<RunAction, { placeHolder: string; none: string }> = {
  open: { placeHolder: "Which finished run?", none: "No finished run in this workspace yet: profile a config first." },
  resume: { placeHolder: "Which run to resume?", none: "No run of this workspace can be resumed: none was cancelled or interrupted." },
  cancel: { placeHolder: "Which run to cancel?", none: "No run of this workspace is running." },
  delete: { placeHolder: "Which run to delete?", none: "No run of this workspace can be deleted (a running one is cancelled first)." },
  reveal: { placeHolder: "Which run?", none: "No run in this workspace yet: profile a config first." },
};

/**
 * The run a command acts on, as its folder says now: the row's run (found again by its folder, since
 * the row may be from an earlier read), else the one the user picks among the runs the action
 * applies to. Undefined when there is none or the user picked none (each said why).
 */
async function runFor(ctx: Ctx, node: RunsTreeNode | undefined, action: RunAction): Promise<RunRow | undefined> {
  const rows = await runsOfConfigs((await ctx.workspace.outlines()).map((o) => o.file));
  const dir = runFolderOfNode(node);
  if (dir !== undefined) {
    const row = runOfFolder(rows, dir);
    if (!row) void vscode.window.showInformationMessage(`Run ${path.basename(dir)} is no longer in this workspace.`);
    return row;
  }
  // This window's run that has not written its state yet is running too.
  const offered = rows.filter((r) => runAllows(r, action) || (action === "cancel" && ctx.runs.activeIn(r.dir)));
  if (offered.length === 0) {
    void vscode.window.showInformationMessage(ASKS[action].none);
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(
    offered.map((row) => ({ label: row.id, description: path.basename(row.configFile), detail: statusText(row), row })),
    { placeHolder: ASKS[action].placeHolder, matchOnDescription: true },
  );
  return picked?.row;
}

export const openRunResults: CommandFactory = (ctx) => async (node?: RunsTreeNode) => {
  const run = await runFor(ctx, node, "open");
  if (run) await showResults(ctx, await loadRun(run.dir));
};

/** Writes report.html in the run folder (the page `bprof report` writes) and opens it in the browser. */
export const openRunReport: CommandFactory = (ctx) => async (node?: RunsTreeNode) => {
  const run = await runFor(ctx, node, "open");
  if (!run) return;
  const script = await fs.readFile(path.join(ctx.extension.extensionPath, "dist", "report.js"), "utf8");
  const rendered = await renderReport(await loadRun(run.dir), { format: "html", script });
  const file = await (await ConfinedFolder.at(run.dir, "the run folder")).writeFile("report.html", rendered.text);
  for (const warning of rendered.warnings) ctx.log(`report: ${warning}`);
  if (!(await vscode.env.openExternal(vscode.Uri.file(file)))) void vscode.window.showInformationMessage(`The report is at ${file}`);
};

export const resumeRun: CommandFactory = (ctx) => async (node?: RunsTreeNode) => {
  const run = await runFor(ctx, node, "resume");
  if (run) await ctx.runs.resume(run.dir, run.configFile);
};

/** Cancels a run of this window, or asks the process that runs it here (the CLI, another window) to stop. */
export const cancelRun: CommandFactory = (ctx) => async (node?: RunsTreeNode) => {
  // This window's run stops at once, before the runs are read again.
  const given = runFolderOfNode(node);
  if (given !== undefined && ctx.runs.cancel(given)) return;
  const run = await runFor(ctx, node, "cancel");
  if (!run || ctx.runs.cancel(run.dir)) return;
  const status = await runStatus(run.dir);
  if (status.state !== "running") {
    if (given === undefined) void vscode.window.showInformationMessage(`Run ${run.id} is not running any more.`);
    return;
  }
  const stop = "Stop It";
  const choice = await vscode.window.showWarningMessage(
    `Run ${run.id} is run by another process (pid ${status.pid}). Ask it to stop? It finishes the item it is on; the run can be resumed.`,
    { modal: true },
    stop,
  );
  if (choice !== stop) return;
  // The pid and host come from run-state.json, a file in the folder: core checks them before signalling.
  const asked = await askRunToStop(run.dir);
  if ("refused" in asked) void vscode.window.showErrorMessage(asked.refused);
};

export const deleteRun: CommandFactory = (ctx) => async (node?: RunsTreeNode) => {
  const run = await runFor(ctx, node, "delete");
  if (!run) return;
  const status = await runStatus(run.dir);
  if (status.state === "running") {
    void vscode.window.showErrorMessage(`Run ${run.id} is running: cancel it first.`);
    return;
  }
  const remove = "Delete";
  const choice = await vscode.window.showWarningMessage(`Delete run ${run.id} and its folder?`, { modal: true, detail: run.dir }, remove);
  if (choice !== remove) return;
  await fs.rm(run.dir, { recursive: true, force: true });
  ctx.workspace.refresh();
};

export const revealRun: CommandFactory = (ctx) => async (node?: RunsTreeNode) => {
  const run = await runFor(ctx, node, "reveal");
  if (!run) return;
  await vscode.commands.executeCommand(
    vscode.env.uiKind === vscode.UIKind.Desktop ? "revealFileInOS" : "revealInExplorer",
    vscode.Uri.file(run.dir),
  );
};

export const copyRunId: CommandFactory = (ctx) => async (node?: RunsTreeNode) => {
  const run = await runFor(ctx, node, "reveal");
  if (!run) return;
  await vscode.env.clipboard.writeText(run.id);
  void vscode.window.setStatusBarMessage(`Copied run id ${run.id}`, 3000);
};
