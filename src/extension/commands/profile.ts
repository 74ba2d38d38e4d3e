// Profile a config (the command palette, the CodeLens above a config), and Open Demo, which copies
// the built-in demo workspace and profiles it. A run shows its progress in a notification that
// can cancel it; the run itself is the core's runProfile.
import * as path from "node:path";
import * as vscode from "vscode";
import { loadProfile } from "../../core/config/load";
import { copyDemoWorkspace } from "../../core/demo/demoWorkspace";
import { RunnerError } from "../../core/launch/runnerError";
import { describeTarget } from "../../core/launch/target";
import { errorsOf } from "../../core/problems";
import { phaseLabel, runProfile } from "../../core/run";
import type { CommandFactory, Ctx } from "../ctx";
import { showResults } from "../panels/resultsPanel";
import { pickConfig } from "./pickConfig";

export const profile: CommandFactory = (ctx) => async (uri?: vscode.Uri) => {
  const config = uri ?? (await pickConfig());
  if (config && (await ctx.trusted("Profiling"))) await profileConfig(ctx, config);
};

export const openDemo: CommandFactory = (ctx) => async () => {
  if (!(await ctx.trusted("Open Demo"))) return;
  // The shipped workspace is read-only: copy it to the extension's storage, show its config, profile it.
  let config: string;
  try {
    config = await copyDemoWorkspace(path.join(ctx.extension.extensionPath, "media", "demo"), ctx.demoFolder);
  } catch (e) {
    void vscode.window.showErrorMessage(`Open Demo failed: ${e instanceof Error ? e.message : String(e)}`);
    return;
  }
  await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(config));
  await profileConfig(ctx, vscode.Uri.file(config));
};

async function profileConfig(ctx: Ctx, uri: vscode.Uri): Promise<void> {
  const open = vscode.workspace.textDocuments.find((d) => d.uri.fsPath === uri.fsPath);
  const { profile: loaded, problems } = await loadProfile(uri.fsPath, open ? { text: open.getText() } : {});
  if (!loaded) {
    void vscode.window.showErrorMessage(`Profile failed: ${path.basename(uri.fsPath)} has ${errorsOf(problems).length} error(s); see the Problems panel`);
    return;
  }
  const runnerPath = ctx.runnerPath();
  const where = describeTarget(loaded.target);
  ctx.log(`profiling ${uri.fsPath} on ${where}${loaded.target.kind === "local" ? ` with ${runnerPath}` : ""}`);
  try {
    const outcome = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Benchmark Profiler (${where})`, cancellable: true },
      async (progress, token) => {
        const abort = new AbortController();
        token.onCancellationRequested(() => abort.abort());
        let reported = 0;
        return runProfile(loaded, {
          runnerPath,
          signal: abort.signal,
          onWarning: (m) => ctx.log(`warning: ${m}`),
          onStatus: (message, model) => {
            ctx.log(`${model}: ${message}`);
            progress.report({ message: `${model}: ${message}` });
          },
          onProgress: (p) => {
            const fraction = p.total > 0 ? (100 * p.done) / p.total : 0;
            progress.report({ message: `${p.model}: ${phaseLabel(p)} ${p.done}/${p.total}`, increment: Math.max(0, fraction - reported) });
            reported = Math.max(reported, fraction);
          },
        });
      },
    );
    ctx.log(`run ${outcome.runId} finished: ${outcome.resultsFile}`);
    ctx.workspace.refresh();
    const choice = await vscode.window.showInformationMessage(
      `Profile finished: run ${outcome.runId}, ${outcome.itemCount} items scored on ${loaded.benchmarks.length} benchmark(s).`,
      "Open Results",
    );
    if (choice === "Open Results") await showResults(ctx, { dir: outcome.runDir, resultsFile: outcome.resultsFile, results: outcome.results });
  } catch (e) {
    const message = e instanceof RunnerError ? `${e.code}: ${e.message}` : e instanceof Error ? e.message : String(e);
    ctx.log(`profile failed: ${message}`);
    void vscode.window.showErrorMessage(`Profile failed: ${message}`);
  }
}
