// Show Latest Results: the newest finished run of a config (the CodeLens passes it), else of the
// workspace, in the results view.
import * as vscode from "vscode";
import { latestResultsFile, loadRun } from "../../core/report/load";
import { runsOfConfig } from "../../core/results/runs";
import type { CommandFactory } from "../ctx";
import { showResults } from "../panels/resultsPanel";

export const showLatestResults: CommandFactory = (ctx) => async (config?: vscode.Uri) => {
  const latest = config ? (await runsOfConfig(config.fsPath)).find((r) => r.finished)?.dir : await latestInWorkspace();
  if (!latest) {
    void vscode.window.showErrorMessage(
      `No finished run ${config ? `of ${vscode.workspace.asRelativePath(config)}` : "in this workspace (.bprof/runs/*/results.json)"}; run Benchmark Profiler: Profile first.`,
    );
    return;
  }
  try {
    await showResults(ctx, await loadRun(latest));
  } catch (e) {
    void vscode.window.showErrorMessage(`Cannot show ${latest}: ${e instanceof Error ? e.message : String(e)}`);
  }
};

/** The newest results.json of the workspace (run ids sort by start time). */
async function latestInWorkspace(): Promise<string | undefined> {
  const found = await vscode.workspace.findFiles("**/.bprof/runs/*/results.json", "**/node_modules/**", 1000);
  return latestResultsFile(found.map((uri) => uri.fsPath));
}
