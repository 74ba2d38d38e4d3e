// The core's positions, problems and edits as VS Code's, and back.
import * as vscode from "vscode";
import type { Range, TextEdit } from "../../core/language/text";
import { problemRange } from "../../core/language/text";
import type { Problem } from "../../core/base/problems";

/**
 * Markdown the core built around names and texts from files (escaped there: core/language/markdown.ts),
 * shown with command links, HTML and theme icons off, as a second guard.
 */
export function dataMarkdown(markdown: string): vscode.MarkdownString {
  const shown = new vscode.MarkdownString(markdown, false);
  shown.isTrusted = false;
  shown.supportHtml = false;
  return shown;
}

export function toRange(r: Range): vscode.Range {
  return new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character);
}

export function toDiagnostic(p: Problem): vscode.Diagnostic {
  const severity = p.severity === "error" ? vscode.DiagnosticSeverity.Error : vscode.DiagnosticSeverity.Warning;
  const diagnostic = new vscode.Diagnostic(toRange(problemRange(p)), p.field ? `${p.message} (${p.field})` : p.message, severity);
  diagnostic.source = "bprof";
  diagnostic.code = p.code;
  return diagnostic;
}

/** What identifies a published diagnostic, on both sides of VS Code's copy of it. */
export function diagnosticKey(uri: vscode.Uri, d: Problem | vscode.Diagnostic): string {
  if ("file" in d) {
    const r = problemRange(d);
    return `${uri.fsPath}|${r.start.line}:${r.start.character}-${r.end.line}:${r.end.character}|${d.code}`;
  }
  const r = d.range;
  const code = typeof d.code === "object" ? d.code.value : d.code;
  return `${uri.fsPath}|${r.start.line}:${r.start.character}-${r.end.line}:${r.end.character}|${code}`;
}

export function toWorkspaceEdit(edits: readonly TextEdit[]): vscode.WorkspaceEdit {
  const edit = new vscode.WorkspaceEdit();
  for (const e of edits) edit.replace(vscode.Uri.file(e.file), toRange(e.range), e.newText);
  return edit;
}
