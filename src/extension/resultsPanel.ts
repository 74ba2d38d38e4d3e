// Hosts the results webview: a strict Content Security Policy, one nonce'd bundled script. The
// page gets the core's report model (the same one `bprof report` renders) as a JSON data block,
// which the script reads and draws: baseline accuracies and the AIS heatmap per model and k.
import { randomBytes } from "node:crypto";
import * as vscode from "vscode";
import { jsonForScript } from "../core/report/html";
import type { LoadedRun } from "../core/report/load";
import { buildReport } from "../core/report/model";

/** The id of the data block webview/results.ts reads. */
const DATA_ID = "bprof-results-data";

export async function showResults(context: vscode.ExtensionContext, run: LoadedRun): Promise<void> {
  const report = await buildReport(run);
  const panel = vscode.window.createWebviewPanel("benchmarkProfiler.results", `Results ${run.results.run_id}`, vscode.ViewColumn.Active, {
    enableScripts: true,
    localResourceRoots: [vscode.Uri.joinPath(context.extensionUri, "dist"), vscode.Uri.joinPath(context.extensionUri, "media")],
  });
  const webview = panel.webview;
  const nonce = randomBytes(16).toString("base64");
  const script = webview.asWebviewUri(vscode.Uri.joinPath(context.extensionUri, "dist", "webview", "results.js"));
  const style = webview.asWebviewUri(vscode.Uri.joinPath(context.extensionUri, "media", "webview.css"));
  webview.html = `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${webview.cspSource}; script-src 'nonce-${nonce}';">
<link rel="stylesheet" href="${style}"><title>Benchmark Profiler results</title></head>
<body><div id="root">Loading…</div>
<script type="application/json" id="${DATA_ID}">${jsonForScript(report)}</script>
<script nonce="${nonce}" src="${script}"></script></body></html>`;
}
