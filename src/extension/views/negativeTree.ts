// The Negative AIS tree: for each config, the cells of its run (picked, else the newest finished)
// whose AIS is below 0, significant ones first, each opening onto the documents the ablation turned
// from wrong to right; a document opens its data file at its line.
import * as path from "node:path";
import * as vscode from "vscode";
import type { CaseDocument, CellRef } from "../../core/report/cases";
import { loadRun, type LoadedRun } from "../../core/report/load";
import { buildReport, rulesOf } from "../../core/report/model";
import type { NegativeCell } from "../../core/report/types";
import { negativeCellTooltip, signed, type CaseFocus } from "../../core/language/tooltips";
import { documentName } from "../../core/report/documentName";
import type { Ctx } from "../ctx";
import { dataMarkdown } from "../language/convert";

type Node =
  | { kind: "run"; configFile: string; run: LoadedRun }
  | { kind: "cell"; run: LoadedRun; cell: NegativeCell; ref: CellRef }
  | { kind: "document"; document: CaseDocument; focus: CaseFocus; stale?: string };

class NegativeTree implements vscode.TreeDataProvider<Node> {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly runs = new Map<string, LoadedRun>();

  constructor(private readonly ctx: Ctx) {
    const refresh = () => this.changed.fire();
    ctx.subscriptions.push(
      this.changed,
      ctx.caseRuns.onDidChange(refresh),
      ctx.runs.onDidChange(refresh),
      ctx.workspace.onDidChange(refresh),
    );
  }

  private async runOf(runDir: string): Promise<LoadedRun> {
    let run = this.runs.get(runDir);
    if (!run) this.runs.set(runDir, (run = await loadRun(runDir)));
    return run;
  }

  async getChildren(node?: Node): Promise<Node[]> {
    if (!node) {
      const nodes: Node[] = [];
      for (const outline of await this.ctx.workspace.outlines()) {
        const runDir = await this.ctx.caseRuns.runOf(outline.file);
        if (runDir) nodes.push({ kind: "run", configFile: outline.file, run: await this.runOf(runDir) });
      }
      return nodes;
    }
    if (node.kind === "run") {
      const report = await buildReport(node.run, { metric: "acc" });
      const cells: Node[] = [];
      for (const model of report.models) {
        // every rule's cells when the run ranked by several; the random control's once
        const rules = rulesOf(model);
        for (const [r, rule] of rules.entries()) {
          for (const section of rule.sections) {
            for (const cell of section.negativeCells) {
              // the random control of each candidate set once, with the set's first rule
              if (rules.findIndex((q) => q.candidate_set === rule.candidate_set) !== r && cell.ability === null) continue;
              const method = rules.length > 1 && cell.ability !== null ? { method: rule.method } : {};
              const candidates = rule.candidate_set ? { candidates: rule.candidate_set } : {};
              cells.push({
                kind: "cell",
                run: node.run,
                cell,
                ref: {
                  model: model.name,
                  k: section.k,
                  ability: cell.ability,
                  selection: cell.selection,
                  benchmark: cell.benchmark,
                  ...method,
                  ...candidates,
                },
              });
            }
          }
        }
      }
      return cells.sort((a, b) => {
        const [x, y] = [(a as Extract<Node, { kind: "cell" }>).cell, (b as Extract<Node, { kind: "cell" }>).cell];
        return Number(y.significant) - Number(x.significant) || x.ais - y.ais;
      });
    }
    if (node.kind === "cell") {
      // The workspace model loads the cell's tasks, under its policy for task Python (Restricted Mode, the user's answers).
      const cases = await this.ctx.workspace.request("cellCases", { runDir: node.run.dir, ref: node.ref, metric: "acc" });
      return cases.documents
        .filter((d) => d.direction === "wrong_to_right")
        .map((document) => ({
          kind: "document",
          document,
          focus: { runDir: node.run.dir, ref: node.ref },
          ...(cases.stale ? { stale: cases.stale } : {}),
        }));
    }
    return [];
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if (node.kind === "run") {
      const item = new vscode.TreeItem(path.basename(node.configFile), vscode.TreeItemCollapsibleState.Expanded);
      item.description = `run ${node.run.results.run_id}`;
      item.tooltip = `Cells of run ${node.run.results.run_id} with a negative AIS (acc; exact_match for generate_until benchmarks)`;
      item.iconPath = new vscode.ThemeIcon("beaker");
      return item;
    }
    if (node.kind === "cell") {
      const c = node.cell;
      const item = new vscode.TreeItem(
        `${c.row} × ${c.benchmark}`,
        c.wrongToRight > 0 ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None,
      );
      // the rule, when the run ranked by several, beside the figures (the label stays the cell's)
      const rule = node.ref.method ? ` · ${node.ref.method}${node.ref.candidates === "all" ? ", all layers" : ""} rule` : "";
      item.description = `AIS ${signed(c.ais)}${c.significant ? "*" : ""} · k ${node.ref.k}${rule} · ${c.wrongToRight} wrong → right`;
      item.tooltip = dataMarkdown(negativeCellTooltip(c, node.ref));
      item.iconPath = new vscode.ThemeIcon(
        c.significant ? "arrow-circle-down" : "arrow-down",
        c.significant ? new vscode.ThemeColor("charts.blue") : undefined,
      );
      item.contextValue = "negativeCell";
      return item;
    }
    const d = node.document;
    const name = documentName({ index: d.index, ...(d.id !== undefined ? { id: d.id } : {}), ...(d.place ? { line: d.place.line } : {}) });
    const item = new vscode.TreeItem(name, vscode.TreeItemCollapsibleState.None);
    item.description = node.stale ? "data file changed since the run" : d.place ? path.basename(d.place.file) : "";
    item.tooltip = d.text ? d.text.context : name;
    item.iconPath = new vscode.ThemeIcon("file-text");
    if (d.place && !node.stale)
      item.command = {
        command: "benchmarkProfiler.openDocument",
        title: "Open Document",
        arguments: [d.place.file, d.place.line, node.focus],
      };
    return item;
  }
}

export function activateNegativeTree(ctx: Ctx): void {
  ctx.subscriptions.push(
    vscode.window.createTreeView("benchmarkProfiler.negative", { treeDataProvider: new NegativeTree(ctx), showCollapseAll: true }),
  );
}
