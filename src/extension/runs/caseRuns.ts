// Which run's cases the editor shows for each config: the one the user picked (Pick Run for Inline
// Cases), else the config's newest finished run. Kept in the workspace's state. And the cell each
// data file was last opened from, whose flips its hover shows first.
import * as path from "node:path";
import * as vscode from "vscode";
import type { CaseFocus } from "../../core/language/tooltips";
import { runsOfConfig } from "../../core/results/runs";
import type { Workspace } from "../workspace/workspace";

const KEY = "benchmarkProfiler.caseRuns";

/** What the picks need: the workspace's state they are kept in, and the workspace's configs. */
export interface CaseRunsNeeds {
  readonly extension: vscode.ExtensionContext;
  readonly workspace: Workspace;
}

export class CaseRuns implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  private readonly focused = new Map<string, CaseFocus>();

  constructor(private readonly needs: CaseRunsNeeds) {}

  /** Remembers the cell a data file is opened from; without one, the file's hover has no focus. */
  focusOn(file: string, focus: CaseFocus | undefined): void {
    if (focus) this.focused.set(path.resolve(file), focus);
    else this.focused.delete(path.resolve(file));
  }

  /** The cell the data file was last opened from, if it was opened from one. */
  focusOf(file: string): CaseFocus | undefined {
    return this.focused.get(path.resolve(file));
  }

  /** config file -> run folder, for the configs whose run the user picked. */
  picks(): Record<string, string> {
    return this.needs.extension.workspaceState.get<Record<string, string>>(KEY, {});
  }

  /** The run whose cases to show for a config. */
  async runOf(configFile: string): Promise<string | undefined> {
    return this.picks()[configFile] ?? (await runsOfConfig(configFile)).find((r) => r.finished)?.dir;
  }

  /** Asks which finished run of which config to show (the newest is the default). */
  async pick(): Promise<void> {
    const configs = (await this.needs.workspace.outlines()).map((o) => o.file);
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
    await this.needs.extension.workspaceState.update(KEY, picks);
    this.changed.fire();
  }

  dispose(): void {
    this.changed.dispose();
  }
}
