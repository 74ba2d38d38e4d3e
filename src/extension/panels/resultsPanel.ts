// The results view: one panel per run, revealed when it is already open, restored after a window
// reload (its serializer reads the run folder and the query the page kept in its state). The page
// loads one nonce'd bundled script under a strict Content Security Policy; the core builds the view
// (src/core/report/view.ts) for each query the page sends, and the cases of the cell it selects.
import { randomBytes } from "node:crypto";
import * as path from "node:path";
import * as vscode from "vscode";
import { compareProfiles, type ProfileRef } from "../../core/report/compare";
import { comparisonView, type ComparisonView } from "../../core/report/compareFigure";
import { renderComparison } from "../../core/report/compareFormats";
import { loadRun, type LoadedRun } from "../../core/report/load";
import { heatmapSvg } from "../../core/report/svg";
import { resultsView, viewCsv, type ResultsQuery, type ResultsView } from "../../core/report/view";
import { writeFileAtomic } from "../../core/base/fsutil";
import {
  RESULTS_VIEW_TYPE,
  type FromResultsView,
  type ProfileKey,
  type ResultsViewState,
  type ToResultsView,
} from "../../../webview/protocol";
import type { Ctx } from "../ctx";

class ResultsPanel {
  private static readonly open = new Map<string, ResultsPanel>();

  /** Shows the run's panel: the open one, or a new one. */
  static async createOrShow(ctx: Ctx, run: LoadedRun): Promise<void> {
    const existing = ResultsPanel.open.get(run.dir);
    if (existing) {
      existing.panel.reveal();
      existing.setRun(run);
      return;
    }
    const panel = vscode.window.createWebviewPanel(
      RESULTS_VIEW_TYPE,
      `Results ${run.results.run_id}`,
      vscode.ViewColumn.Active,
      options(ctx),
    );
    new ResultsPanel(ctx, panel, run.dir).setRun(run);
  }

  /**
   * Shows two profiles compared: the open panel of this pair, or a new one. The comparison is
   * computed before the panel opens, so a pair that does not compare opens nothing (the caller
   * reports the ReportInputError).
   */
  static async showComparison(ctx: Ctx, a: ProfileKey, b: ProfileKey): Promise<void> {
    const view = comparisonView(await compareProfiles(await profileRef(a), await profileRef(b)));
    const key = comparisonKey(a, b);
    const existing = ResultsPanel.open.get(key);
    if (existing) {
      existing.panel.reveal();
      existing.setComparison(view);
      return;
    }
    const panel = vscode.window.createWebviewPanel(RESULTS_VIEW_TYPE, comparisonTitle(view), vscode.ViewColumn.Active, options(ctx));
    new ResultsPanel(ctx, panel, a.runDir, {}, { a, b }).setComparison(view);
  }

  /** A panel VS Code restored after a reload: its page said which run it showed, and how. */
  static async revive(ctx: Ctx, panel: vscode.WebviewPanel, state: ResultsViewState | undefined): Promise<void> {
    panel.webview.options = options(ctx);
    if (!state?.runDir) {
      panel.webview.html = message("This results view was opened by an older version: open the run again.");
      return;
    }
    if (state.compare) {
      const { a, b } = state.compare;
      try {
        const view = comparisonView(await compareProfiles(await profileRef(a), await profileRef(b)));
        new ResultsPanel(ctx, panel, a.runDir, {}, { a, b }).setComparison(view);
      } catch (e) {
        panel.webview.html = message(`Cannot compare ${a.model} of ${a.runDir} with ${b.model} of ${b.runDir}: ${(e as Error).message}`);
      }
      return;
    }
    try {
      new ResultsPanel(ctx, panel, state.runDir, state.query).setRun(await loadRun(state.runDir));
    } catch (e) {
      panel.webview.html = message(`Cannot show ${state.runDir}: ${(e as Error).message}`);
    }
  }

  private run: LoadedRun | undefined;
  private view: ResultsView | undefined;
  /** Set on a panel that compares two profiles (it shows no run). */
  private comparison: ComparisonView | undefined;
  private ready = false;

  private constructor(
    private readonly ctx: Ctx,
    readonly panel: vscode.WebviewPanel,
    readonly runDir: string,
    private query: ResultsQuery = {},
    compare?: { a: ProfileKey; b: ProfileKey },
  ) {
    const key = compare ? comparisonKey(compare.a, compare.b) : runDir;
    ResultsPanel.open.set(key, this);
    panel.webview.html = page(ctx, panel.webview, { runDir, query, ...(compare ? { compare } : {}) });
    panel.iconPath = vscode.Uri.joinPath(ctx.extension.extensionUri, "media", "activity.svg");
    panel.onDidDispose(() => ResultsPanel.open.delete(key), null, ctx.subscriptions);
    panel.webview.onDidReceiveMessage(
      (m: FromResultsView) => this.received(m).catch((e: Error) => this.post({ type: "error", message: e.message })),
      null,
      ctx.subscriptions,
    );
  }

  setRun(run: LoadedRun): void {
    this.run = run;
    this.panel.title = `Results ${run.results.run_id}`;
    void this.showView().catch((e: Error) => this.post({ type: "error", message: e.message }));
  }

  setComparison(view: ComparisonView): void {
    this.comparison = view;
    this.panel.title = comparisonTitle(view);
    this.post({ type: "comparison", view });
  }

  private async received(message: FromResultsView): Promise<void> {
    switch (message.type) {
      case "ready":
        this.ready = true;
        if (this.comparison) this.post({ type: "comparison", view: this.comparison });
        else if (this.view) this.post({ type: "view", view: this.view });
        return;
      case "query":
        this.query = message.query;
        await this.showView();
        return;
      case "cell":
        // The workspace model loads the cell's tasks, under its policy for task Python (Restricted Mode, the user's answers).
        this.post({
          type: "cases",
          cases: await this.ctx.workspace.request("cellCases", {
            runDir: this.runDir,
            ref: message.ref,
            metric: this.view?.query.metric ?? "acc",
          }),
        });
        return;
      case "open":
        this.ctx.caseRuns.focusOn(message.file, message.ref && { runDir: this.runDir, ref: message.ref });
        await openDocumentLine(message.file, message.line);
        return;
      case "export":
        await this.export(message);
        return;
    }
  }

  private async showView(): Promise<void> {
    if (!this.run) return;
    this.view = await resultsView(this.run, this.query);
    if (this.ready) this.post({ type: "view", view: this.view });
  }

  private async export(message: Extract<FromResultsView, { type: "export" }>): Promise<void> {
    if (this.comparison) return this.exportComparison(this.comparison, message);
    const view = this.view;
    if (!view) return;
    const q = view.query;
    const rule =
      (view.choices.methods.length > 1 && q.method ? `-${q.method}` : "") +
      (view.choices.candidates.length > 1 && q.candidates ? `-${q.candidates}` : "");
    const base = `${view.run.id}-${q.model}-${q.metric}${q.k !== null ? `-k${q.k}` : ""}-${q.cells}${rule}`.replace(
      /[^A-Za-z0-9._-]+/g,
      "_",
    );
    const target = await vscode.window.showSaveDialog({
      defaultUri: vscode.Uri.file(path.join(view.run.dir, `${base}.${message.format}`)),
      filters: { [message.format.toUpperCase()]: [message.format] },
    });
    if (!target) return;
    const content =
      message.format === "png"
        ? Buffer.from(message.dataUrl.replace(/^data:image\/png;base64,/, ""), "base64")
        : message.format === "svg"
          ? view.profile
            ? heatmapSvg(view.profile.heatmap, message.theme)
            : ""
          : viewCsv(view);
    await writeFileAtomic(target.fsPath, content);
    void vscode.window.showInformationMessage(`Saved ${target.fsPath}`);
  }

  private async exportComparison(view: ComparisonView, message: Extract<FromResultsView, { type: "export" }>): Promise<void> {
    const { a, b, k } = view.comparison;
    const base = `compare-${a.run}-${a.model}-${b.run}-${b.model}-k${k}`.replace(/[^A-Za-z0-9._-]+/g, "_");
    const target = await vscode.window.showSaveDialog({
      defaultUri: vscode.Uri.file(path.join(this.runDir, `${base}.${message.format}`)),
      filters: { [message.format.toUpperCase()]: [message.format] },
    });
    if (!target) return;
    const content =
      message.format === "png"
        ? Buffer.from(message.dataUrl.replace(/^data:image\/png;base64,/, ""), "base64")
        : message.format === "svg"
          ? heatmapSvg(view.heatmap, message.theme)
          : renderComparison(view.comparison, "csv");
    await writeFileAtomic(target.fsPath, content);
    void vscode.window.showInformationMessage(`Saved ${target.fsPath}`);
  }

  private post(message: ToResultsView): void {
    if (this.ready) void this.panel.webview.postMessage(message);
  }
}

/** Opens a data file at a 1-based line, selecting the line. */
export async function openDocumentLine(file: string, line: number): Promise<void> {
  const editor = await vscode.window.showTextDocument(vscode.Uri.file(file), { preview: true });
  const at = new vscode.Position(Math.max(0, line - 1), 0);
  editor.selection = new vscode.Selection(at, at);
  editor.revealRange(new vscode.Range(at, at), vscode.TextEditorRevealType.InCenter);
}

function options(ctx: Ctx): vscode.WebviewPanelOptions & vscode.WebviewOptions {
  const root = ctx.extension.extensionUri;
  return {
    enableScripts: true,
    retainContextWhenHidden: false,
    localResourceRoots: [vscode.Uri.joinPath(root, "dist"), vscode.Uri.joinPath(root, "media")],
  };
}

function page(ctx: Ctx, webview: vscode.Webview, state: ResultsViewState): string {
  const nonce = randomBytes(16).toString("base64");
  const script = webview.asWebviewUri(vscode.Uri.joinPath(ctx.extension.extensionUri, "dist", "webview", "results.js"));
  const style = webview.asWebviewUri(vscode.Uri.joinPath(ctx.extension.extensionUri, "media", "webview.css"));
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${webview.cspSource}; img-src ${webview.cspSource} data:; font-src ${webview.cspSource}; script-src 'nonce-${nonce}';">
<link rel="stylesheet" href="${style}"><title>Benchmark Profiler results</title></head>
<body data-state="${escapeHtml(JSON.stringify(state))}"><div id="root">Loading ${escapeHtml(path.basename(state.runDir))}…</div>
<script nonce="${nonce}" src="${script}"></script></body></html>`;
}

function message(text: string): string {
  return `<!DOCTYPE html><html><body><p>${escapeHtml(text)}</p></body></html>`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

async function profileRef(key: ProfileKey): Promise<ProfileRef> {
  return { run: await loadRun(key.runDir), model: key.model };
}

function comparisonKey(a: ProfileKey, b: ProfileKey): string {
  return JSON.stringify(["compare", a.runDir, a.model, b.runDir, b.model]);
}

function comparisonTitle(view: ComparisonView): string {
  return `Compare ${view.comparison.a.model} − ${view.comparison.b.model}`;
}

/** Opens (or reveals) the difference heatmap of two profiles; throws the ReportInputError of a pair that does not compare. */
export function showComparison(ctx: Ctx, a: ProfileKey, b: ProfileKey): Promise<void> {
  return ResultsPanel.showComparison(ctx, a, b);
}

export function showResults(ctx: Ctx, run: LoadedRun): Promise<void> {
  return ResultsPanel.createOrShow(ctx, run);
}

export function activateResultsPanel(ctx: Ctx): void {
  ctx.subscriptions.push(
    vscode.window.registerWebviewPanelSerializer(RESULTS_VIEW_TYPE, {
      deserializeWebviewPanel: (panel, state: ResultsViewState | undefined) => ResultsPanel.revive(ctx, panel, state),
    }),
    // A finished run of this window (opened at once unless benchmarkProfiler.openResultsWhenDone is off).
    ctx.runs.onDidAskForResults((run) => void showResults(ctx, run)),
  );
}
