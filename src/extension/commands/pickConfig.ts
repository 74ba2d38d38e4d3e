// Which config a command is about, when it was not given one: the active editor's, the only one
// of the workspace, or the user's pick.
import * as vscode from "vscode";

export async function pickConfig(): Promise<vscode.Uri | undefined> {
  const active = vscode.window.activeTextEditor?.document;
  if (active?.fileName.endsWith(".bprof.yaml")) return active.uri;
  const found = await vscode.workspace.findFiles("**/*.bprof.yaml", "**/{node_modules,.bprof}/**", 50);
  if (found.length === 0) {
    void vscode.window.showErrorMessage("No *.bprof.yaml config in this workspace: write one, or run Benchmark Profiler: Open Demo.");
    return undefined;
  }
  if (found.length === 1) return found[0];
  const picked = await vscode.window.showQuickPick(
    found.map((uri) => ({ label: vscode.workspace.asRelativePath(uri), uri })),
    { placeHolder: "Which profiling config?" },
  );
  return picked?.uri;
}
