// Benchmark Profiler in VS Code, as a table of contents: the services, each made with the few
// things it needs; one context over them; the language features of configs, datasets and task
// files; the views; and the commands.
import * as vscode from "vscode";
import { createCommands } from "./commands/index";
import { profilePendingDemo } from "./commands/profile";
import { Ctx } from "./ctx";
import { logTo } from "./output";
import { CaseRuns } from "./runs/caseRuns";
import { RunController } from "./runs/controller";
import { Runner } from "./runs/runner";
import { ReviewMode } from "./review/reviewMode";
import { Workspace } from "./workspace/workspace";
import { activateCodeLens } from "./language/codeLens";
import { activateCompletion } from "./language/completion";
import { activateHovers } from "./language/hover";
import { activateNegativeCases } from "./language/negativeCases";
import { activateQuickFixes } from "./language/quickFixes";
import { activateResultsPanel } from "./panels/resultsPanel";
import { activateProfilesTree } from "./views/profilesTree";
import { activateNegativeTree } from "./views/negativeTree";
import { activateRunsTree } from "./views/runsTree";

export function activate(extension: vscode.ExtensionContext): void {
  const output = vscode.window.createOutputChannel("Benchmark Profiler");
  const log = logTo(output);
  const workspace = new Workspace({ extension, log });
  const runner = new Runner({ extension, output, log });
  const runs = new RunController({ workspace, state: extension.workspaceState, runner, output, log });
  const caseRuns = new CaseRuns({ extension, workspace });
  extension.subscriptions.push(output, workspace, runs, caseRuns);
  const review = new ReviewMode({ extension });
  extension.subscriptions.push(review);
  const ctx = new Ctx(extension, output, log, { workspace, runs, runner, caseRuns, review });
  workspace.start();

  activateQuickFixes(ctx);
  activateCompletion(ctx);
  activateHovers(ctx);
  activateCodeLens(ctx);
  activateNegativeCases(ctx);
  activateProfilesTree(ctx);
  activateRunsTree(ctx);
  activateNegativeTree(ctx);
  activateResultsPanel(ctx);

  for (const [name, factory] of Object.entries(createCommands())) ctx.registerCommand(name, factory);
  // A window Open Demo opened on the demo's folder profiles it.
  void profilePendingDemo(ctx);
}

export function deactivate(): void {}
