// Quick fixes: for each of our problems under the cursor, the core's fixes (fixesFor), keyed on
// the problem's code and data, as code actions. A fix that writes a new file runs as a command.
import * as vscode from "vscode";
import { fixesFor } from "../../core/language/fixes";
import type { Ctx } from "../ctx";
import { toWorkspaceEdit } from "./convert";
import { CHECKED } from "./selectors";

class QuickFixes implements vscode.CodeActionProvider {
  static readonly kinds = [vscode.CodeActionKind.QuickFix];

  constructor(private readonly ctx: Ctx) {}

  provideCodeActions(document: vscode.TextDocument, _range: vscode.Range, context: vscode.CodeActionContext): vscode.CodeAction[] {
    const actions: vscode.CodeAction[] = [];
    for (const diagnostic of context.diagnostics) {
      if (diagnostic.source !== "bprof") continue;
      const problem = this.ctx.workspace.problemOf(document.uri, diagnostic);
      if (!problem) continue;
      for (const fix of fixesFor(problem, document.getText())) {
        const action = new vscode.CodeAction(fix.title, vscode.CodeActionKind.QuickFix);
        action.diagnostics = [diagnostic];
        action.isPreferred = fix.preferred === true;
        if (fix.createDataset) {
          action.command = {
            command: "benchmarkProfiler.createDataset",
            title: fix.title,
            arguments: [fix.createDataset.file, fix.createDataset.ability],
          };
        } else action.edit = toWorkspaceEdit(fix.edits);
        actions.push(action);
      }
    }
    return actions;
  }
}

export function activateQuickFixes(ctx: Ctx): void {
  ctx.subscriptions.push(
    vscode.languages.registerCodeActionsProvider(CHECKED, new QuickFixes(ctx), { providedCodeActionKinds: QuickFixes.kinds }),
  );
}
