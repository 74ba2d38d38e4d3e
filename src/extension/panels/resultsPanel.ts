// The results view: one panel per run, revealed when it is already open, restored after a window
// reload (its serializer reads the run folder the page kept in its state). The page loads one
// nonce'd bundled script under a strict Content Security Policy and gets the core's report model
// (the one `bprof report` renders) as a message.
import { randomBytes } from "node:crypto";
import * as path from "node:path";
import * as vscode from "vscode";
import { loadRun, type LoadedRun } from "../../core/report/load";
import { buildReport } from "../../core/report/model";
import { RESULTS_VIEW_TYPE, type FromResultsView, type ResultsViewState, type ToResultsView } from "../../../webview/protocol";
import type { Ctx } from "../ctx";

class ResultsPanel {
  private static readonly open = new Map<string, ResultsPanel>();

  /** Shows the run's panel: the open one, or a new one. */
  static async createOrShow(ctx: Ctx, run: LoadedRun): Promise<void> {
    const existing = ResultsPanel.open.get(run.dir);
    if (existing) {
      existing.panel.reveal();
      await existing.load(run);
      return;
    }
    const panel = vscode.window.createWebviewPanel(RESULTS_VIEW_TYPE, `Results ${run.results.run_id}`, vscode.ViewColumn.Active, options(ctx));
    new ResultsPanel(ctx, panel, run.dir).load(run);
  }

  /** A panel VS Code restored after a reload: its page said which run it showed. */
  static async revive(ctx: Ctx, panel: vscode.WebviewPanel, state: ResultsViewState | undefined): Promise<void> {
    panel.webview.options = options(ctx);
    if (!state?.runDir) {
      panel.webview.html = `<!DOCTYPE html><html><body><p>This results view was opened by an older version: open the run again.</p></body></html>`;
      return;
    }
    const view = new ResultsPanel(ctx, panel, state.runDir);
    try {
      await view.load(await loadRun(state.runDir));
    } catch (e) {
      panel.webview.html = `<!DOCTYPE html><html><body><p>${escapeHtml(`Cannot show ${state.runDir}: ${(e as Error).message}`)}</p></body></html>`;
    }
  }

  private report: ToResultsView | undefined;
  private ready = false;

  private constructor(private readonly ctx: Ctx, readonly panel: vscode.WebviewPanel, readonly runDir: string) {
    ResultsPanel.open.set(runDir, this);
    panel.webview.html = page(ctx, panel.webview, { runDir });
    panel.iconPath = vscode.Uri.joinPath(ctx.extension.extensionUri, "media", "activity.svg");
    panel.onDidDispose(() => ResultsPanel.open.delete(runDir), null, ctx.subscriptions);
    panel.webview.onDidReceiveMessage((message: FromResultsView) => {
      switch (message.type) {
        case "ready":
          this.ready = true;
          this.post();
          break;
      }
    }, null, ctx.subscriptions);
  }

  async load(run: LoadedRun): Promise<void> {
    this.panel.title = `Results ${run.results.run_id}`;
    this.report = { type: "report", report: await buildReport(run) };
    this.post();
  }

  private post(): void {
    if (this.ready && this.report) void this.panel.webview.postMessage(this.report);
  }
}

function options(ctx: Ctx): vscode.WebviewPanelOptions & vscode.WebviewOptions {
  const root = ctx.extension.extensionUri;
  return { enableScripts: true, retainContextWhenHidden: false, localResourceRoots: [vscode.Uri.joinPath(root, "dist"), vscode.Uri.joinPath(root, "media")] };
}

function page(ctx: Ctx, webview: vscode.Webview, state: ResultsViewState): string {
  const nonce = randomBytes(16).toString("base64");
  const script = webview.asWebviewUri(vscode.Uri.joinPath(ctx.extension.extensionUri, "dist", "webview", "results.js"));
  const style = webview.asWebviewUri(vscode.Uri.joinPath(ctx.extension.extensionUri, "media", "webview.css"));
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${webview.cspSource}; script-src 'nonce-${nonce}';">
<link rel="stylesheet" href="${style}"><title>Benchmark Profiler results</title></head>
<body data-state="${escapeHtml(JSON.stringify(state))}"><div id="root">Loading ${escapeHtml(path.basename(state.runDir))}…</div>
<script nonce="${nonce}" src="${script}"></script></body></html>`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function showResults(ctx: Ctx, run: LoadedRun): Promise<void> {
  return ResultsPanel.createOrShow(ctx, run);
}

export function activateResultsPanel(ctx: Ctx): void {
  ctx.subscriptions.push(vscode.window.registerWebviewPanelSerializer(RESULTS_VIEW_TYPE, {
    deserializeWebviewPanel: (panel, state: ResultsViewState | undefined) => ResultsPanel.revive(ctx, panel, state),
  }));
}
