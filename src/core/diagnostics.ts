// A problem in a user's file, located precisely enough for an editor squiggle and for a
// one-line CLI message: file, 1-based line and column, and the config field it concerns.

export type Severity = "error" | "warning";

export interface Diagnostic {
  file: string;
  line: number;
  column: number;
  endLine?: number;
  endColumn?: number;
  severity: Severity;
  message: string;
  /** Dotted path of the config field, e.g. `models[0].path`, when there is one. */
  field?: string;
}

export function formatDiagnostic(d: Diagnostic): string {
  const where = `${d.file}:${d.line}:${d.column}`;
  const field = d.field ? ` (field ${d.field})` : "";
  return `${where}: ${d.severity}: ${d.message}${field}`;
}

export function errorsOf(diagnostics: Diagnostic[]): Diagnostic[] {
  return diagnostics.filter((d) => d.severity === "error");
}

/** A diagnostic for a whole file that has no finer position (missing file, unreadable file). */
export function fileDiagnostic(file: string, message: string, field?: string): Diagnostic {
  return { file, line: 1, column: 1, severity: "error", message, ...(field ? { field } : {}) };
}
