// Completion in configs, from the workspace model: keys (left to Red Hat's YAML extension when it
// is installed, which completes them from the same schema), ability names, task files, datasets,
// model folders and k values.
import * as vscode from "vscode";
import type { CompletionItem, CompletionKind } from "../../core/language/completion";
import type { Ctx } from "../ctx";
import { dataMarkdown, toRange } from "./convert";
import { CONFIGS } from "./selectors";

const KINDS: Record<CompletionKind, vscode.CompletionItemKind> = {
  key: vscode.CompletionItemKind.Property,
  value: vscode.CompletionItemKind.EnumMember,
  ability: vscode.CompletionItemKind.Value,
  file: vscode.CompletionItemKind.File,
  folder: vscode.CompletionItemKind.Folder,
  number: vscode.CompletionItemKind.Constant,
};

function toCompletion(item: CompletionItem): vscode.CompletionItem {
  const completion = new vscode.CompletionItem(item.label, KINDS[item.kind]);
  completion.insertText = item.insertText;
  completion.range = toRange(item.range);
  // Values with spaces ("Spatial Reasoning") must match what is typed as a whole, not word by word.
  completion.filterText = item.label;
  if (item.detail) completion.detail = item.detail;
  if (item.documentation) completion.documentation = dataMarkdown(item.documentation);
  if (item.sortText) completion.sortText = item.sortText;
  if (item.kind === "key") completion.command = { command: "editor.action.triggerSuggest", title: "values" };
  return completion;
}

class Completions implements vscode.CompletionItemProvider {
  constructor(private readonly ctx: Ctx) {}

  async provideCompletionItems(document: vscode.TextDocument, position: vscode.Position): Promise<vscode.CompletionItem[]> {
    this.ctx.workspace.flush(document);
    const items = await this.ctx.workspace.request("completion", {
      file: document.fileName,
      position: { line: position.line, character: position.character },
    });
    const keysElsewhere = this.ctx.yamlExtensionActive;
    return items.filter((i) => !(keysElsewhere && i.kind === "key")).map(toCompletion);
  }
}

export function activateCompletion(ctx: Ctx): void {
  ctx.subscriptions.push(vscode.languages.registerCompletionItemProvider(CONFIGS, new Completions(ctx), ":", " ", "/", "[", ",", "-"));
}
