// Which run's cases the editor shows for each config: the one the user picked (Pick Run for Inline
// Cases), else the config's newest finished run. Kept in the workspace's state.
import * as path from "node:path";
import * as vscode from "vscode";
import { runsOfConfig } from "../../core/results/runs";
import type { Ctx } from "../ctx";

const KEY = "benchmarkProfiler.caseRuns";

export class CaseRuns implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;

  constructor(private readonly ctx: Ctx) {}

  /** config file -> run folder, for the configs whose run the user picked. */
  picks(): Record<string, string> {
    return this.ctx.extension.workspaceState.get<Record<string, string>>(KEY, {});
  }

  /** The run whose cases to show for a config. */
  async runOf(configFile: string): Promise<string | undefined> {
    return this.picks()[configFile] ?? (await runsOfConfig(configFile)).find((r) => r.finished)?.dir;
  }

  /** Asks which finished run of which config to show (the newest is the default). */
  async pick(): Promise<void> {
    const configs = (await this.ctx.workspace.outlines()).map((o) => o.file);
    const items: (vscode.QuickPickItem & { configFile?: string; runDir?: string })[] = [];
    for (const configFile of configs) {
      const finished = (await runsOfConfig(configFile)).filter((r) => r.finished);
      if (finished.length === 0) continue;
      items.push({ label: path.basename(configFile), kind: vscode.QuickPickItemKind.Separator });
      const picked = this.picks()[configFile];
      items.push({
        label: "Newest finished run",
        description: finished[0]!.id,
        configFile,
        ...(picked === undefined ? { picked: true, detail: "shown now" } : {}),
      });
      for (const run of finished)
        items.push({ label: run.id, configFile, runDir: run.dir, ...(picked === run.dir ? { detail: "shown now" } : {}) });
    }
    if (items.length === 0) {
      void vscode.window.showInformationMessage("No finished run in this workspace yet: profile a config first.");
      return;
    }
    const choice = await vscode.window.showQuickPick(items, {
      placeHolder: "Whose flipped documents should the editor mark?",
      matchOnDescription: true,
    });
    if (!choice?.configFile) return;
    const picks = { ...this.picks() };
    if (choice.runDir) picks[choice.configFile] = choice.runDir;
    else delete picks[choice.configFile];
    await this.ctx.extension.workspaceState.update(KEY, picks);
    this.changed.fire();
  }

  dispose(): void {
    this.changed.dispose();
  }
}
