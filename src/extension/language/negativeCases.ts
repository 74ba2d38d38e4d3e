// Negative-AIS cases in the data file itself: on each line of a benchmark document that an
// ablation turned from wrong to right (what makes an AIS negative), a mark and a note naming the
// ability; with the setting `benchmarkProfiler.inlineCases.rightToWrong`, those turned from right
// to wrong too. The hover on such a line names the document (its id and line) and shows one flip in
// full: which ability's ablation, at which k and selection, and the choices' log-probabilities (or
// the generation) before and after; the cell's flip when the file was opened from a cell, the rest
// folded to a line each. A data file
// that changed since the run gets one note that says so, and no marks.
import * as vscode from "vscode";
import { caseLinesHover, flipWho } from "../../core/language/tooltips";
import type { CaseLine } from "../../core/report/cases";
import type { FileCases } from "../../core/workspace/service";
import type { Ctx } from "../ctx";
import { EXTENSION_ID } from "../extensionId";
import { dataMarkdown } from "./convert";

const DATA_FILES = /\.(jsonl|json|csv)$/;

function lineNote(line: CaseLine, directions: Set<string>): string {
  const shown = line.flips.filter((f) => directions.has(f.document.direction));
  const first = shown[0]!;
  const more = shown.length > 1 ? ` +${shown.length - 1} more` : "";
  const arrow = first.document.direction === "wrong_to_right" ? "right" : "wrong";
  return `  ◀ ${arrow} after ablating ${flipWho(first)}${more}`;
}

class NegativeCases implements vscode.HoverProvider {
  private readonly wrongToRight: vscode.TextEditorDecorationType;
  private readonly rightToWrong: vscode.TextEditorDecorationType;
  private readonly stale = vscode.window.createTextEditorDecorationType({
    after: { color: new vscode.ThemeColor("editorWarning.foreground"), fontStyle: "italic" },
  });
  /** The cases of each decorated file, for its hovers. */
  private readonly cases = new Map<string, FileCases[]>();
  private pending: NodeJS.Timeout | undefined;

  constructor(private readonly ctx: Ctx) {
    const marked = (icon: string, background: string, ruler: string) =>
      vscode.window.createTextEditorDecorationType({
        isWholeLine: true,
        gutterIconPath: vscode.Uri.joinPath(ctx.extension.extensionUri, "media", icon),
        gutterIconSize: "70%",
        backgroundColor: new vscode.ThemeColor(background),
        overviewRulerColor: new vscode.ThemeColor(ruler),
        overviewRulerLane: vscode.OverviewRulerLane.Right,
        after: { color: new vscode.ThemeColor("editorCodeLens.foreground"), fontStyle: "italic" },
      });
    this.wrongToRight = marked("case-wrong-to-right.svg", "diffEditor.insertedLineBackground", "charts.blue");
    this.rightToWrong = marked("case-right-to-wrong.svg", "diffEditor.removedLineBackground", "charts.red");
    ctx.subscriptions.push(
      this.wrongToRight,
      this.rightToWrong,
      this.stale,
      vscode.window.onDidChangeVisibleTextEditors(() => this.refreshSoon()),
      vscode.workspace.onDidChangeConfiguration((e) => e.affectsConfiguration("benchmarkProfiler.inlineCases") && this.refreshSoon()),
      ctx.workspace.onDidChange(() => this.refreshSoon()),
      ctx.runs.onDidChange(() => this.refreshSoon()),
      ctx.caseRuns.onDidChange(() => this.refreshSoon()),
      { dispose: () => clearTimeout(this.pending) },
    );
    this.refreshSoon();
  }

  private directions(): Set<string> {
    const both = vscode.workspace.getConfiguration(EXTENSION_ID).get<boolean>("inlineCases.rightToWrong", false);
    return new Set(both ? ["wrong_to_right", "right_to_wrong"] : ["wrong_to_right"]);
  }

  private refreshSoon(): void {
    clearTimeout(this.pending);
    this.pending = setTimeout(() => void this.refresh(), 200);
  }

  private async refresh(): Promise<void> {
    const directions = this.directions();
    for (const editor of vscode.window.visibleTextEditors) {
      const file = editor.document.uri.fsPath;
      if (editor.document.uri.scheme !== "file" || !DATA_FILES.test(file)) continue;
      const found = await this.ctx.workspace.request("cases", { file, picks: this.ctx.caseRuns.picks() }).catch((e: Error) => {
        this.ctx.log(`inline cases of ${file}: ${e.message}`);
        return [];
      });
      this.cases.set(file, found);
      const byDirection = { wrong_to_right: [] as vscode.DecorationOptions[], right_to_wrong: [] as vscode.DecorationOptions[] };
      for (const runCases of found) {
        for (const line of runCases.lines) {
          const shown = line.flips.filter((f) => directions.has(f.document.direction));
          if (shown.length === 0 || line.line - 1 >= editor.document.lineCount) continue;
          const range = editor.document.lineAt(line.line - 1).range;
          byDirection[shown[0]!.document.direction].push({ range, renderOptions: { after: { contentText: lineNote(line, directions) } } });
        }
      }
      editor.setDecorations(this.wrongToRight, byDirection.wrong_to_right);
      editor.setDecorations(this.rightToWrong, byDirection.right_to_wrong);
      const stale = found.filter((c) => c.stale);
      editor.setDecorations(
        this.stale,
        stale.length === 0 || editor.document.lineCount === 0
          ? []
          : [
              {
                range: editor.document.lineAt(0).range,
                renderOptions: {
                  after: { contentText: `  ⚠ ${stale.map((c) => c.stale).join("; ")}: its flipped documents are not marked` },
                },
              },
            ],
      );
    }
  }

  provideHover(document: vscode.TextDocument, position: vscode.Position): vscode.Hover | undefined {
    const file = document.uri.fsPath;
    const markdown = caseLinesHover(this.cases.get(file) ?? [], position.line + 1, this.directions(), this.ctx.caseRuns.focusOf(file));
    return markdown === undefined ? undefined : new vscode.Hover(dataMarkdown(markdown));
  }
}

export function activateNegativeCases(ctx: Ctx): void {
  ctx.subscriptions.push(
    vscode.languages.registerHoverProvider({ scheme: "file", pattern: "**/*.{jsonl,json,csv}" }, new NegativeCases(ctx)),
  );
}
