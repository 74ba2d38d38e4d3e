// What the Runs tree does with a run: open its results or its HTML report, resume, cancel or delete
// it, reveal its folder, copy its id.
import { promises as fs } from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import { writeFileAtomic } from "../../core/base/fsutil";
import { renderReport } from "../../core/report/index";
import { loadRun } from "../../core/report/load";
import { askRunToStop, runStatus } from "../../core/results/runs";
import type { CommandFactory } from "../ctx";
import { showResults } from "../panels/resultsPanel";
import type { RunNode } from "../views/runsTree";

export const openRunResults: CommandFactory = (ctx) => async (node: RunNode) => {
  await showResults(ctx, await loadRun(node.row.dir));
};

/** Writes report.html in the run folder (the page `bprof report` writes) and opens it in the browser. */
export const openRunReport: CommandFactory = (ctx) => async (node: RunNode) => {
  const script = await fs.readFile(path.join(ctx.extension.extensionPath, "dist", "report.js"), "utf8");
  const rendered = await renderReport(await loadRun(node.row.dir), { format: "html", script });
  const file = path.join(node.row.dir, "report.html");
  await writeFileAtomic(file, rendered.text);
  for (const warning of rendered.warnings) ctx.log(`report: ${warning}`);
  if (!(await vscode.env.openExternal(vscode.Uri.file(file)))) void vscode.window.showInformationMessage(`The report is at ${file}`);
};

export const resumeRun: CommandFactory = (ctx) => async (node: RunNode) => {
  await ctx.runs.resume(node.row.dir, node.row.configFile);
};

/** Cancels a run of this window, or asks the process that runs it here (the CLI, another window) to stop. */
export const cancelRun: CommandFactory = (ctx) => async (node: RunNode) => {
  if (ctx.runs.cancel(node.row.dir)) return;
  const status = await runStatus(node.row.dir);
  if (status.state !== "running") return;
  const stop = "Stop It";
  const choice = await vscode.window.showWarningMessage(
    `Run ${node.row.id} is run by another process (pid ${status.pid}). Ask it to stop? It finishes the item it is on; the run can be resumed.`,
    { modal: true },
    stop,
  );
  if (choice !== stop) return;
  // The pid and host come from run-state.json, a file in the folder: core checks them before signalling.
  const asked = await askRunToStop(node.row.dir);
  if ("refused" in asked) void vscode.window.showErrorMessage(asked.refused);
};

export const deleteRun: CommandFactory = (ctx) => async (node: RunNode) => {
  const status = await runStatus(node.row.dir);
  if (status.state === "running") {
    void vscode.window.showErrorMessage(`Run ${node.row.id} is running: cancel it first.`);
    return;
  }
  const remove = "Delete";
  const choice = await vscode.window.showWarningMessage(
    `Delete run ${node.row.id} and its folder?`,
    { modal: true, detail: node.row.dir },
    remove,
  );
  if (choice !== remove) return;
  await fs.rm(node.row.dir, { recursive: true, force: true });
  ctx.workspace.refresh();
};

export const revealRun: CommandFactory = () => async (node: RunNode) => {
  await vscode.commands.executeCommand(
    vscode.env.uiKind === vscode.UIKind.Desktop ? "revealFileInOS" : "revealInExplorer",
    vscode.Uri.file(node.row.dir),
  );
};

export const copyRunId: CommandFactory = () => async (node: RunNode) => {
  await vscode.env.clipboard.writeText(node.row.id);
  void vscode.window.setStatusBarMessage(`Copied run id ${node.row.id}`, 3000);
};
