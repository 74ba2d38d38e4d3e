// CodeLens lines: above a config, Profile, Validate and its latest results; above each ability,
// its items, the health of its datasets, and Generate Items (abilities with a built-in generator).
import * as vscode from "vscode";
import { findGenerator } from "../../core/diagnostic/generators/index";
import type { OutlineEntry, ProfileOutline } from "../../core/language/outline";
import type { Ctx } from "../ctx";
import { CONFIGS } from "./selectors";

function lens(line: number, title: string, command: string, args: unknown[], tooltip?: string): vscode.CodeLens {
  return new vscode.CodeLens(new vscode.Range(line, 0, line, 0), { title, command, arguments: args, ...(tooltip ? { tooltip } : {}) });
}

function configLenses(uri: vscode.Uri, outline: ProfileOutline): vscode.CodeLens[] {
  const lenses = [
    lens(0, "$(play) Profile", "benchmarkProfiler.profile", [uri], "Run the profile of this config"),
    lens(0, "$(check) Validate", "benchmarkProfiler.validateConfig", [uri], "Check this config, everything it names, and its target"),
  ];
  if (outline.latestResults)
    lenses.push(lens(0, `$(graph) Latest Results (run ${outline.latestResults.runId})`, "benchmarkProfiler.showLatestResults", [uri]));
  return lenses;
}

function abilityLenses(uri: vscode.Uri, entry: OutlineEntry): vscode.CodeLens[] {
  const line = entry.range.start.line;
  const lenses: vscode.CodeLens[] = [];
  const dataset = entry.files[0];
  if (entry.count !== undefined && dataset)
    lenses.push(lens(line, `${entry.count.toLocaleString("en-US")} items`, "vscode.open", [vscode.Uri.file(dataset)], "Open its dataset"));
  const health =
    entry.problems.errors > 0
      ? `${entry.problems.errors} error${entry.problems.errors === 1 ? "" : "s"}`
      : entry.healthWarnings
        ? `health: ${entry.healthWarnings} warning${entry.healthWarnings === 1 ? "" : "s"}`
        : "health: ok";
  lenses.push(lens(line, health, "workbench.actions.view.problems", [], "Problems of this ability's entry and datasets"));
  if (!("error" in findGenerator(entry.label)))
    lenses.push(
      lens(
        line,
        "Generate Items",
        "benchmarkProfiler.generateItems",
        [uri, entry.index],
        `Add items of the built-in ${entry.label} generator to its dataset`,
      ),
    );
  return lenses;
}

class Lenses implements vscode.CodeLensProvider {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.changed.event;

  constructor(private readonly ctx: Ctx) {
    ctx.subscriptions.push(
      this.changed,
      ctx.workspace.onDidChange(() => this.changed.fire()),
    );
  }

  async provideCodeLenses(document: vscode.TextDocument): Promise<vscode.CodeLens[]> {
    const outline = (await this.ctx.workspace.outlines()).find((o) => o.file === document.fileName);
    if (!outline) return [];
    return [...configLenses(document.uri, outline), ...outline.abilities.flatMap((a) => abilityLenses(document.uri, a))];
  }
}

export function activateCodeLens(ctx: Ctx): void {
  ctx.subscriptions.push(vscode.languages.registerCodeLensProvider(CONFIGS, new Lenses(ctx)));
}
