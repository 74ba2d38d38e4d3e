// Benchmark Profiler in VS Code, as a table of contents: one context, the workspace model, the
// language features of configs, datasets and task files, the views, and the commands.
import type * as vscode from "vscode";
import { createCommands } from "./commands/index";
import { profilePendingDemo } from "./commands/profile";
import { Ctx } from "./ctx";
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
  const ctx = Ctx.create(extension);
  ctx.workspace.start();

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
