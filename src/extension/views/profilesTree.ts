// The Profiles tree: every config of the workspace, then its models, benchmarks and abilities,
// each with its problem counts; selecting one reveals it in the config.
import * as path from "node:path";
import * as vscode from "vscode";
import { problemCountsText, sumCounts, type OutlineEntry, type ProblemCounts, type ProfileOutline } from "../../core/language/outline";
import type { Ctx } from "../ctx";
import { profileEntryTooltip } from "../../core/language/tooltips";
import { dataMarkdown, toRange } from "../language/convert";

type Node =
  | { kind: "config"; outline: ProfileOutline }
  | { kind: "group"; outline: ProfileOutline; group: "models" | "benchmarks" | "abilities" }
  | { kind: "entry"; outline: ProfileOutline; entry: OutlineEntry };

const GROUP_LABELS = { models: "Models", benchmarks: "Benchmarks", abilities: "Abilities" } as const;
const ENTRY_ICONS = { model: "server-process", benchmark: "checklist", ability: "symbol-method" } as const;

/** The counts as Problems shows them: the config's own, and those of the files it names said apart. */
const countsText = problemCountsText;

function statusIcon(c: ProblemCounts, fallback: string): vscode.ThemeIcon {
  if (c.errors > 0) return new vscode.ThemeIcon("error", new vscode.ThemeColor("problemsErrorIcon.foreground"));
  if (c.warnings > 0) return new vscode.ThemeIcon("warning", new vscode.ThemeColor("problemsWarningIcon.foreground"));
  return new vscode.ThemeIcon(fallback);
}

function sum(entries: readonly OutlineEntry[]): ProblemCounts {
  return sumCounts(entries.map((e) => e.problems));
}

function reveal(file: string, range?: vscode.Range): vscode.Command {
  return { command: "benchmarkProfiler.reveal", title: "Reveal", arguments: [vscode.Uri.file(file), range] };
}

class ProfilesTree implements vscode.TreeDataProvider<Node> {
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;

  constructor(private readonly ctx: Ctx) {
    ctx.subscriptions.push(
      this.changed,
      ctx.workspace.onDidChange(() => this.changed.fire(undefined)),
    );
  }

  async getChildren(node?: Node): Promise<Node[]> {
    if (!node) return (await this.ctx.workspace.outlines()).map((outline) => ({ kind: "config", outline }));
    if (node.kind === "config") {
      return (["models", "benchmarks", "abilities"] as const)
        .filter((g) => node.outline[g].length > 0)
        .map((group) => ({ kind: "group", outline: node.outline, group }));
    }
    if (node.kind === "group") return node.outline[node.group].map((entry) => ({ kind: "entry", outline: node.outline, entry }));
    return [];
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if (node.kind === "config") {
      const item = new vscode.TreeItem(path.basename(node.outline.file), vscode.TreeItemCollapsibleState.Expanded);
      item.description = countsText(node.outline.problems) || vscode.workspace.asRelativePath(path.dirname(node.outline.file));
      item.tooltip = node.outline.file;
      item.iconPath = statusIcon(node.outline.problems, "beaker");
      item.command = reveal(node.outline.file);
      item.contextValue = "config";
      item.resourceUri = vscode.Uri.file(node.outline.file);
      return item;
    }
    if (node.kind === "group") {
      const entries = node.outline[node.group];
      const item = new vscode.TreeItem(`${GROUP_LABELS[node.group]} (${entries.length})`, vscode.TreeItemCollapsibleState.Expanded);
      item.description = countsText(sum(entries));
      item.contextValue = node.group;
      return item;
    }
    const { entry } = node;
    const item = new vscode.TreeItem(entry.label, vscode.TreeItemCollapsibleState.None);
    const count =
      entry.count === undefined
        ? ""
        : entry.kind === "ability"
          ? `${entry.count.toLocaleString("en-US")} items`
          : `${entry.count.toLocaleString("en-US")} documents`;
    item.description = [countsText(entry.problems), count, entry.review].filter(Boolean).join(" · ") || entry.detail;
    item.tooltip = dataMarkdown(profileEntryTooltip(entry));
    item.iconPath = statusIcon(entry.problems, ENTRY_ICONS[entry.kind]);
    item.command = reveal(node.outline.file, toRange(entry.range));
    item.contextValue = entry.kind;
    return item;
  }
}

export function activateProfilesTree(ctx: Ctx): void {
  ctx.subscriptions.push(
    vscode.window.createTreeView("benchmarkProfiler.profiles", { treeDataProvider: new ProfilesTree(ctx), showCollapseAll: true }),
  );
}
