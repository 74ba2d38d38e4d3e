// The Runs tree: every run of the workspace's configs (those started here, from the CLI, or in an
// earlier window), newest first, with where each stands as its folder says; it follows runs as
// they progress, from this window's run controller and from the folders' files.
import * as path from "node:path";
import * as vscode from "vscode";
import { progressLine } from "../../core/run";
import { runsOfConfigs, type RunRow } from "../../core/results/runs";
import type { Ctx } from "../ctx";

/** A run as the tree and the run commands see it. */
export interface RunNode {
  row: RunRow;
}

function statusText(row: RunRow): string {
  const s = row.status;
  switch (s.state) {
    case "finished":
      return "finished";
    case "running":
      return s.progress ? `running: ${progressLine(s.progress)}` : "running";
    case "failed":
      return s.code === "cancelled" ? "cancelled · resumable" : `failed: ${s.code}${s.resumable ? " · resumable" : ""}`;
    case "interrupted":
      return "interrupted · resumable";
  }
}

function statusIcon(row: RunRow): vscode.ThemeIcon {
  switch (row.status.state) {
    case "finished":
      return new vscode.ThemeIcon("pass", new vscode.ThemeColor("testing.iconPassed"));
    case "running":
      return new vscode.ThemeIcon("sync~spin");
    case "failed":
      return row.status.code === "cancelled"
        ? new vscode.ThemeIcon("debug-pause")
        : new vscode.ThemeIcon("error", new vscode.ThemeColor("testing.iconFailed"));
    case "interrupted":
      return new vscode.ThemeIcon("debug-pause");
  }
}

/** Menus key on these words: `run finished`, `run running`, `run resumable`, ... */
function contextOf(row: RunRow): string {
  const s = row.status;
  const resumable = s.state === "interrupted" || (s.state === "failed" && s.resumable);
  return ["run", s.state, ...(resumable ? ["resumable"] : [])].join(" ");
}

class RunsTree implements vscode.TreeDataProvider<RunNode> {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  private pending: NodeJS.Timeout | undefined;

  constructor(private readonly ctx: Ctx) {
    const watcher = vscode.workspace.createFileSystemWatcher("**/runs/*/{results.json,run-state.json,models/*/events.jsonl}");
    const soon = () => this.refreshSoon();
    ctx.subscriptions.push(
      this.changed,
      watcher,
      watcher.onDidCreate(soon),
      watcher.onDidChange(soon),
      watcher.onDidDelete(soon),
      ctx.runs.onDidChange(soon),
      ctx.workspace.onDidChange(soon),
      { dispose: () => clearTimeout(this.pending) },
    );
  }

  /** Event files change many times a second while a runner works: redraw at most once a second. */
  refreshSoon(): void {
    this.pending ??= setTimeout(() => {
      this.pending = undefined;
      this.changed.fire();
    }, 1000);
  }

  async getChildren(node?: RunNode): Promise<RunNode[]> {
    if (node) return [];
    const configs = (await this.ctx.workspace.outlines()).map((o) => o.file);
    const rows = await runsOfConfigs(configs);
    // This window's own runs know their progress before their files do.
    return rows.map((row) => {
      const active = this.ctx.runs.activeIn(row.dir);
      if (active?.progress && row.status.state !== "finished") {
        const p = active.progress;
        return {
          row: {
            ...row,
            status: {
              state: "running",
              pid: process.pid,
              progress: {
                model: p.model,
                phase: p.phase,
                done: p.done,
                total: p.total,
                ...(p.ability ? { ability: p.ability } : {}),
                ...(p.overall ? { overall: p.overall } : {}),
              },
            },
          },
        };
      }
      return { row };
    });
  }

  getTreeItem({ row }: RunNode): vscode.TreeItem {
    const item = new vscode.TreeItem(row.id, vscode.TreeItemCollapsibleState.None);
    item.description = `${path.basename(row.configFile)} · ${statusText(row)}`;
    // The runner's message and the paths are the user's text, not markdown.
    const tooltip = new vscode.MarkdownString(`**Run ${row.id}**`).appendText(` of ${row.configFile}\n\n${statusText(row)}\n\n`);
    if (row.status.state === "failed" && row.status.message) tooltip.appendText(`${row.status.message}\n\n`);
    item.tooltip = tooltip.appendText(row.dir);
    item.iconPath = statusIcon(row);
    item.contextValue = contextOf(row);
    item.id = row.dir;
    if (row.status.state === "finished")
      item.command = { command: "benchmarkProfiler.openRunResults", title: "Open Results", arguments: [{ row }] };
    return item;
  }
}

export function activateRunsTree(ctx: Ctx): void {
  ctx.subscriptions.push(vscode.window.createTreeView("benchmarkProfiler.runs", { treeDataProvider: new RunsTree(ctx) }));
}
