// Hovers from the workspace model: a diagnostic item as the importance loss reads it, a benchmark's
// first document as the model sees it, an ability's items and health, a config key's meaning
// (that last one left to Red Hat's YAML extension when it is installed).
import * as vscode from "vscode";
import type { Ctx } from "../ctx";
import { dataMarkdown } from "./convert";
import { CONFIGS, DATASETS } from "./selectors";

class Hovers implements vscode.HoverProvider {
  constructor(private readonly ctx: Ctx) {}

  async provideHover(document: vscode.TextDocument, position: vscode.Position): Promise<vscode.Hover | undefined> {
    this.ctx.workspace.flush(document);
    const found = await this.ctx.workspace.request("hover", {
      file: document.fileName,
      position: { line: position.line, character: position.character },
    });
    if (!found || (found.schemaOnly && this.ctx.yamlExtensionActive)) return undefined;
    return new vscode.Hover(dataMarkdown(found.markdown));
  }
}

export function activateHovers(ctx: Ctx): void {
  ctx.subscriptions.push(
    vscode.languages.registerHoverProvider(
      [...(CONFIGS as vscode.DocumentFilter[]), ...(DATASETS as vscode.DocumentFilter[])],
      new Hovers(ctx),
    ),
  );
}
