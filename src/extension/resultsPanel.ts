// Hosts the results webview: a strict Content Security Policy, one nonce'd bundled script.
import { randomBytes } from "node:crypto";
import * as vscode from "vscode";
import type { Results } from "../core/results/store";

export function showResults(context: vscode.ExtensionContext, results: Results): void {
  const panel = vscode.window.createWebviewPanel("benchmarkProfiler.results", `Results ${results.run_id}`, vscode.ViewColumn.Active, {
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
<body><div id="root">Loading…</div><script nonce="${nonce}" src="${script}"></script></body></html>`;
  void webview.postMessage({
    type: "results",
    runId: results.run_id,
    models: results.models.map((m) => ({ name: m.name, benchmarks: m.benchmarks })),
  });
}
