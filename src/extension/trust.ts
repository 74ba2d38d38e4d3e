// Workspace Trust: the runner, SSH and Slurm are programs a workspace's files choose, so they run
// only in a trusted workspace.
import * as vscode from "vscode";

/** Whether `what` may run; in Restricted Mode this says why not, with the way out. */
export async function trusted(
  what: string,
  why = "it starts the runner (and ssh or sbatch) that this folder's config names",
): Promise<boolean> {
  if (vscode.workspace.isTrusted) return true;
  const manage = "Manage Workspace Trust";
  const choice = await vscode.window.showErrorMessage(
    `${what} needs a trusted workspace: ${why}. ` +
      "This window is in Restricted Mode, where Benchmark Profiler only checks files, reviews datasets and shows results.",
    manage,
  );
  if (choice === manage) await vscode.commands.executeCommand("workbench.trust.manage");
  return false;
}
