// Core diagnostics -> VS Code's Problems panel and squiggles.
import * as vscode from "vscode";
import type { Diagnostic } from "../core/diagnostics";

export function publishDiagnostics(collection: vscode.DiagnosticCollection, owner: vscode.Uri, diagnostics: readonly Diagnostic[]): void {
  const byFile = new Map<string, vscode.Diagnostic[]>([[owner.fsPath, []]]);
  for (const d of diagnostics) {
    const start = new vscode.Position(d.line - 1, Math.max(0, d.column - 1));
    const end = d.endLine !== undefined && d.endColumn !== undefined ? new vscode.Position(d.endLine - 1, Math.max(0, d.endColumn - 1)) : start;
    const range = end.isAfter(start) ? new vscode.Range(start, end) : new vscode.Range(start, start.translate(0, 1));
    const severity = d.severity === "error" ? vscode.DiagnosticSeverity.Error : vscode.DiagnosticSeverity.Warning;
    const item = new vscode.Diagnostic(range, d.field ? `${d.message} (${d.field})` : d.message, severity);
    item.source = "bprof";
    byFile.set(d.file, [...(byFile.get(d.file) ?? []), item]);
  }
  for (const [file, items] of byFile) collection.set(vscode.Uri.file(file), items);
}
