// VS Code glue: commands, diagnostics and progress around the core. Logic belongs in src/core.
import * as path from "node:path";
import * as vscode from "vscode";
import { loadProfile } from "../core/config/load";
import { copyDemoWorkspace } from "../core/demo/demoWorkspace";
import { errorsOf } from "../core/diagnostics";
import { RunnerError } from "../core/launch/runnerError";
import { resolveRunnerPath } from "../core/launch/runner";
import { checkTarget } from "../core/launch/check";
import { describeTarget } from "../core/launch/target";
import { latestResultsFile, loadRun } from "../core/report/load";
import { runProfile } from "../core/run";
import { publishDiagnostics } from "./diagnostics";
import { showResults } from "./resultsPanel";

const CONFIG_GLOB = "**/*.bprof.yaml";

export function activate(context: vscode.ExtensionContext): void {
  const diagnostics = vscode.languages.createDiagnosticCollection("bprof");
  const output = vscode.window.createOutputChannel("Benchmark Profiler");
  context.subscriptions.push(diagnostics, output);

  const validate = async (uri: vscode.Uri, forRun = false) => {
    const open = vscode.workspace.textDocuments.find((d) => d.uri.fsPath === uri.fsPath);
    const loaded = await loadProfile(uri.fsPath, { ...(open ? { text: open.getText() } : {}), forRun });
    publishDiagnostics(diagnostics, uri, loaded.diagnostics);
    return loaded;
  };

  context.subscriptions.push(
    vscode.commands.registerCommand("benchmarkProfiler.validateConfig", async (uri?: vscode.Uri) => {
      const target = uri ?? (await pickConfig());
      if (!target) return;
      const { profile: loaded, diagnostics: found } = await validate(target);
      const errors = errorsOf(found).length;
      const name = path.basename(target.fsPath);
      if (errors > 0 || !loaded) {
        void vscode.window.showErrorMessage(`${name}: ${errors} error(s); see the Problems panel`);
        return;
      }
      if (loaded.target.kind === "local") {
        void vscode.window.showInformationMessage(`${name}: config OK`);
        return;
      }
      // What only the target can say: the host, its runner, the model folders, sbatch --test-only.
      const where = describeTarget(loaded.target);
      const checks = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Checking ${where}` },
        () => checkTarget(loaded.target, loaded.models, runnerPathOf(context)));
      output.appendLine(`${name}: target ${where}`);
      for (const check of checks) output.appendLine(`  ${check.ok ? "ok" : "error"}: ${check.message}`);
      const failed = checks.filter((c) => !c.ok);
      if (failed.length === 0) void vscode.window.showInformationMessage(`${name}: config OK; ${where} is ready (${checks.length} checks)`);
      else void vscode.window.showErrorMessage(`${name}: ${failed[0]!.message}${failed.length > 1 ? ` (and ${failed.length - 1} more; see the output)` : ""}`);
    }),
    vscode.commands.registerCommand("benchmarkProfiler.profile", async (uri?: vscode.Uri) => {
      const target = uri ?? (await pickConfig());
      if (target) await profile(target, validate, output, context);
    }),
    vscode.commands.registerCommand("benchmarkProfiler.showLatestResults", () => showLatestResults(context)),
    vscode.commands.registerCommand("benchmarkProfiler.openDemo", async () => {
      // The shipped workspace is read-only: copy it to the extension's storage, show its config, profile it.
      try {
        const config = await copyDemoWorkspace(path.join(context.extensionPath, "media", "demo"), path.join(context.globalStorageUri.fsPath, "demo"));
        await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(config));
        await profile(vscode.Uri.file(config), validate, output, context);
      } catch (e) {
        void vscode.window.showErrorMessage(`Open Demo failed: ${e instanceof Error ? e.message : String(e)}`);
      }
    }),
  );

  // Validation as the user types: re-check a config shortly after each edit.
  const pending = new Map<string, NodeJS.Timeout>();
  const schedule = (doc: vscode.TextDocument) => {
    if (!doc.fileName.endsWith(".bprof.yaml")) return;
    clearTimeout(pending.get(doc.fileName));
    pending.set(doc.fileName, setTimeout(() => void validate(doc.uri), 300));
  };
  context.subscriptions.push(
    vscode.workspace.onDidOpenTextDocument(schedule),
    vscode.workspace.onDidChangeTextDocument((e) => schedule(e.document)),
    { dispose: () => pending.forEach(clearTimeout) },
  );
  vscode.workspace.textDocuments.forEach(schedule);
}

async function profile(
  uri: vscode.Uri,
  validate: (uri: vscode.Uri, forRun: boolean) => ReturnType<typeof loadProfile>,
  output: vscode.OutputChannel,
  context: vscode.ExtensionContext,
): Promise<void> {
  const { profile: loaded, diagnostics: found } = await validate(uri, true);
  if (!loaded) {
    void vscode.window.showErrorMessage(`Profile failed: ${path.basename(uri.fsPath)} has ${errorsOf(found).length} error(s); see the Problems panel`);
    return;
  }
  const runnerPath = runnerPathOf(context);
  output.appendLine(`profiling ${uri.fsPath} on ${describeTarget(loaded.target)}${loaded.target.kind === "local" ? ` with ${runnerPath}` : ""}`);
  try {
    const outcome = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Benchmark Profiler (${describeTarget(loaded.target)})`, cancellable: true },
      async (progress, token) => {
        const abort = new AbortController();
        token.onCancellationRequested(() => abort.abort());
        let reported = 0;
        return runProfile(loaded, {
          runnerPath,
          signal: abort.signal,
          onWarning: (m) => output.appendLine(`warning: ${m}`),
          onStatus: (message, model) => {
            output.appendLine(`${model}: ${message}`);
            progress.report({ message: `${model}: ${message}` });
          },
          onProgress: (p) => {
            const fraction = p.total > 0 ? (100 * p.done) / p.total : 0;
            const phase = p.ability === undefined ? p.phase : `${p.phase} (${p.ability})`;
            progress.report({ message: `${p.model}: ${phase} ${p.done}/${p.total}`, increment: Math.max(0, fraction - reported) });
            reported = Math.max(reported, fraction);
          },
        });
      },
    );
    output.appendLine(`run ${outcome.runId} finished: ${outcome.resultsFile}`);
    const benchmarks = loaded.benchmarks.length;
    const choice = await vscode.window.showInformationMessage(
      `Profile finished: run ${outcome.runId}, ${outcome.itemCount} items scored on ${benchmarks} benchmark(s).`,
      "Open Results",
    );
    if (choice === "Open Results") await showResults(context, { dir: outcome.runDir, resultsFile: outcome.resultsFile, results: outcome.results });
  } catch (e) {
    const message = e instanceof RunnerError ? `${e.code}: ${e.message}` : e instanceof Error ? e.message : String(e);
    output.appendLine(`profile failed: ${message}`);
    void vscode.window.showErrorMessage(`Profile failed: ${message}`);
  }
}

/** The runner this machine uses: the setting, else $BPROF_RUNNER, the checkout's build, PATH. */
function runnerPathOf(context: vscode.ExtensionContext): string {
  const configured = vscode.workspace.getConfiguration("benchmarkProfiler").get<string>("runnerPath");
  return resolveRunnerPath(configured || undefined, path.join(context.extensionPath, "dist"));
}

/** The newest finished run in the workspace (run ids sort by start time), in the results view. */
async function showLatestResults(context: vscode.ExtensionContext): Promise<void> {
  const found = await vscode.workspace.findFiles("**/.bprof/runs/*/results.json", "**/node_modules/**", 1000);
  const latest = latestResultsFile(found.map((uri) => uri.fsPath));
  if (!latest) {
    void vscode.window.showErrorMessage("No finished run in this workspace (.bprof/runs/*/results.json); run Benchmark Profiler: Profile first.");
    return;
  }
  try {
    await showResults(context, await loadRun(latest));
  } catch (e) {
    void vscode.window.showErrorMessage(`Cannot show ${latest}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

async function pickConfig(): Promise<vscode.Uri | undefined> {
  const active = vscode.window.activeTextEditor?.document;
  if (active?.fileName.endsWith(".bprof.yaml")) return active.uri;
  const found = await vscode.workspace.findFiles(CONFIG_GLOB, "**/node_modules/**", 50);
  if (found.length === 0) {
    void vscode.window.showErrorMessage("No *.bprof.yaml config in this workspace.");
    return undefined;
  }
  if (found.length === 1) return found[0];
  const picked = await vscode.window.showQuickPick(
    found.map((uri) => ({ label: vscode.workspace.asRelativePath(uri), uri })),
    { placeHolder: "Which profiling config?" },
  );
  return picked?.uri;
}

export function deactivate(): void {}
