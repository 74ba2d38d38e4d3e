// The Runs tree: every run of the workspace's configs (those started here, from the CLI, or in an
// earlier window), newest first, with where each stands as its folder says; it follows runs as
// they progress, from this window's run controller and from the folders' files.
import * as path from "node:path";
import * as vscode from "vscode";
import { progressText } from "../../core/plan/progressText";
import { isResumable, runsOfConfigs, type RunRow } from "../../core/results/runs";
import { ranInShards, shardLabel, shardsOfRun, shardStateText, shardWorkText, type ShardRow } from "../../core/results/shards";
import { runTooltip, shardTooltip } from "../../core/language/tooltips";
import { loadRun } from "../../core/report/load";
import { runFluencyLines } from "../../core/report/fluency";
import type { Ctx } from "../ctx";
import { dataMarkdown } from "../language/convert";

/** A run as the tree and the run commands see it. */
export interface RunNode {
  row: RunRow;
  /** It ran in shards: its children are the shards. */
  sharded?: boolean;
}

/** One shard of a sharded run (docs/targets.md, "Shards"): where it stands, from its folder. */
export interface ShardNode {
  shard: ShardRow;
  run: RunRow;
  /** The run has several models: the shard's label names its model. */
  namesModel: boolean;
}

/** What a command of the Runs view is given: a row of the tree, or nothing (the palette, a row VS Code no longer knows). */
export type RunsTreeNode = RunNode | ShardNode;
type Node = RunsTreeNode;

/** The folder of the run a row shows (a shard's is its run's); undefined for no row. */
export function runFolderOfNode(node: RunsTreeNode | undefined): string | undefined {
  if (!node) return undefined;
  return "shard" in node ? node.run.dir : node.row.dir;
}

/** Where a run stands, in words: its row in the tree, and the palette's pick of runs. */
export function statusText(row: RunRow): string {
  const s = row.status;
  switch (s.state) {
    case "finished":
      return "finished";
    case "running":
      return s.progress ? `running: ${progressText(s.progress)}` : "running";
    case "failed":
      return s.code === "cancelled" ? "cancelled · resumable" : `failed: ${s.code}${s.resumable ? " · resumable" : ""}`;
    case "interrupted":
      return "interrupted · resumable";
  }
}

/** How a run or a shard looks where it stands: one icon per kind of state, the same for both. */
function stateIcon(state: "finished" | "running" | "failed" | "paused" | "waiting"): vscode.ThemeIcon {
  switch (state) {
    case "finished":
      return new vscode.ThemeIcon("pass", new vscode.ThemeColor("testing.iconPassed"));
    case "running":
      return new vscode.ThemeIcon("sync~spin");
    case "failed":
      return new vscode.ThemeIcon("error", new vscode.ThemeColor("testing.iconFailed"));
    case "paused":
      return new vscode.ThemeIcon("debug-pause");
    case "waiting":
      return new vscode.ThemeIcon("clock");
  }
}

function statusIcon(row: RunRow): vscode.ThemeIcon {
  const s = row.status;
  if (s.state === "failed") return stateIcon(s.code === "cancelled" ? "paused" : "failed");
  return stateIcon(s.state === "interrupted" ? "paused" : s.state);
}

/** Menus key on these words: `run finished`, `run running`, `run resumable`, ... */
function contextOf(row: RunRow): string {
  const s = row.status;
  return ["run", s.state, ...(isResumable(s) ? ["resumable"] : [])].join(" ");
}

function shardIcon(shard: ShardRow): vscode.ThemeIcon {
  if (shard.state === "failed") return stateIcon(shard.error?.code === "cancelled" ? "paused" : "failed");
  return stateIcon(shard.state === "stopped" ? "paused" : shard.state);
}

function shardItem({ shard, run, namesModel }: ShardNode): vscode.TreeItem {
  const item = new vscode.TreeItem(`${namesModel ? `${shard.model} ` : ""}${shardLabel(shard)}`, vscode.TreeItemCollapsibleState.None);
  item.description = shardStateText(shard);
  item.tooltip = dataMarkdown(
    shardTooltip({
      label: shardLabel(shard),
      model: shard.model,
      work: shardWorkText(shard),
      ...(shard.error && shard.error.code !== "cancelled" ? { message: shard.error.message } : {}),
      events: shard.eventsFile ?? path.join(run.dir, "models", shard.model, "shards", String(shard.index)),
    }),
  );
  item.iconPath = shardIcon(shard);
  item.contextValue = `shard ${shard.state}`;
  item.id = `${run.dir}#${shard.model}/${shard.index}`;
  if (shard.eventsFile)
    item.command = { command: "vscode.open", title: "Open the Shard's Events", arguments: [vscode.Uri.file(shard.eventsFile)] };
  return item;
}

/**
 * The tree keeps one node object per run folder and changes it in place, firing the change for that
 * node alone: refreshing the whole tree makes VS Code forget every row until it has read the runs
 * again, and a row's action clicked meanwhile (Cancel Run on a run whose progress redraws it every
 * second) reached its command with no node. Only a run that comes or goes redraws the whole tree.
 */
class RunsTree implements vscode.TreeDataProvider<Node> {
  private readonly changed = new vscode.EventEmitter<Node[] | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private pending: NodeJS.Timeout | undefined;
  /** The nodes the tree last showed, by run folder, in its order. */
  private nodes = new Map<string, RunNode>();
  /** Updates one after the other: two reads at once could apply an older one last. */
  private updating: Promise<void> = Promise.resolve();
  /** Set once the view exists: while it is hidden, VS Code reads nothing, and a change is only noted. */
  view: vscode.TreeView<Node> | undefined;

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
      this.updating = this.updating
        .then(() => this.update())
        .catch((e: unknown) => {
          this.ctx.log(`runs view: ${e instanceof Error ? e.message : String(e)}`);
          this.changed.fire(undefined);
        });
    }, 1000);
  }

  /** Redraws the runs that changed, or the whole tree when a run came or went. */
  private async update(): Promise<void> {
    if (!this.view?.visible || this.nodes.size === 0) {
      this.changed.fire(undefined);
      return;
    }
    const fresh = await this.currentNodes();
    const shown = [...this.nodes.keys()];
    const sameRuns = fresh.length === shown.length && fresh.every((n, i) => shown[i] === n.row.dir);
    if (!sameRuns) {
      this.changed.fire(undefined);
      return;
    }
    const changed = fresh.flatMap((n) => {
      const kept = this.nodes.get(n.row.dir)!;
      if (JSON.stringify([kept.row, kept.sharded]) === JSON.stringify([n.row, n.sharded])) return [];
      kept.row = n.row;
      kept.sharded = n.sharded;
      return [kept];
    });
    if (changed.length > 0) this.changed.fire(changed);
  }

  async getChildren(node?: Node): Promise<Node[]> {
    if (node && "shard" in node) return [];
    if (node) {
      const shards = await shardsOfRun(node.row.dir, node.row.status.state === "running");
      const namesModel = new Set(shards.map((s) => s.model)).size > 1;
      return shards.map((shard) => ({ shard, run: node.row, namesModel }));
    }
    // The same object for a run as before: VS Code keeps knowing its row while the tree redraws.
    const nodes = (await this.currentNodes()).map((n) => {
      const kept = this.nodes.get(n.row.dir);
      if (!kept) return n;
      kept.row = n.row;
      kept.sharded = n.sharded;
      return kept;
    });
    this.nodes = new Map(nodes.map((n) => [n.row.dir, n]));
    return nodes;
  }

  /** The runs as their folders and this window's runs say now, newest first, as new nodes. */
  private async currentNodes(): Promise<RunNode[]> {
    const configs = (await this.ctx.workspace.outlines()).map((o) => o.file);
    const rows = await runsOfConfigs(configs);
    // This window's own runs know their progress before their files do.
    const nodes = rows.map((row): RunNode => {
      const active = this.ctx.runs.activeIn(row.dir);
      if (active?.progress && row.status.state !== "finished") {
        const p = active.progress;
        return {
          row: {
            ...row,
            status: {
              state: "running",
              pid: process.pid,
              progress: p,
            },
          },
        };
      }
      return { row };
    });
    return Promise.all(nodes.map(async (n) => ((await ranInShards(n.row.dir, n.row.finished)) ? { ...n, sharded: true } : n)));
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if ("shard" in node) return shardItem(node);
    const { row, sharded } = node;
    // The state first (what a narrow side bar keeps), then the run's id and its config.
    const item = new vscode.TreeItem(
      statusText(row),
      sharded ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None,
    );
    item.description = `${row.id} · ${path.basename(row.configFile)}`;
    item.tooltip = dataMarkdown(runTooltip(tooltipFields(row)));
    item.iconPath = statusIcon(row);
    item.contextValue = contextOf(row);
    item.id = row.dir;
    if (row.status.state === "finished")
      item.command = { command: "benchmarkProfiler.openRunResults", title: "Open Results", arguments: [node] };
    return item;
  }

  /** A finished run's tooltip gets its fluency when hovered: its results are read then, not for every row. */
  async resolveTreeItem(item: vscode.TreeItem, node: Node): Promise<vscode.TreeItem> {
    if ("shard" in node || node.row.status.state !== "finished") return item;
    try {
      const fluency = runFluencyLines((await loadRun(node.row.dir)).results);
      if (fluency.length > 0) item.tooltip = dataMarkdown(runTooltip({ ...tooltipFields(node.row), fluency }));
    } catch {
      // results that cannot be read keep the plain tooltip; opening them says why
    }
    return item;
  }
}

/** What a run's tooltip says without reading its results. */
function tooltipFields(row: RunRow): Parameters<typeof runTooltip>[0] {
  const message = row.status.state === "failed" ? row.status.message : undefined;
  return { id: row.id, configFile: row.configFile, status: statusText(row), ...(message ? { message } : {}), dir: row.dir };
}

export function activateRunsTree(ctx: Ctx): void {
  const tree = new RunsTree(ctx);
  tree.view = vscode.window.createTreeView("benchmarkProfiler.runs", { treeDataProvider: tree });
  ctx.subscriptions.push(tree.view);
}
