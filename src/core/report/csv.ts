// CSV report (RFC 4180): a header, then one line per cell (see cells.ts); CRLF line ends, fields
// quoted when they hold a comma, a quote, a line break or surrounding spaces, quotes doubled.
// Numbers are written in full precision (the shortest text that reads back to the same double);
// null is an empty field; booleans are true/false.
//
// Text fields come from user files (model, ability and benchmark names, reasons), and a
// spreadsheet runs a cell that starts with = + - @ tab or carriage return as a formula (CSV
// injection). As OWASP recommends, such a text field gets a single quote in front, which the
// spreadsheet shows and does not run. Numbers are never touched: a negative AIS such as -0.12 is
// written as the number it is.
import { CELL_COLUMNS, type FlatCell } from "./cells";
import { visibleControls } from "./format";

/** Characters that make a spreadsheet read a cell as a formula (OWASP, CSV injection). */
const FORMULA_START = /^[=+\-@\t\r]/;

/** A text field that cannot start a formula: a single quote in front of one that could. */
export function neutralizeFormula(text: string): string {
  return FORMULA_START.test(text) ? `'${text}` : text;
}

/**
 * One field: text with its control characters visible but the line breaks and tab a quoted field
 * keeps (format.ts visibleControls), formulas neutralized, quoted where it must be.
 */
export function csvField(value: unknown): string {
  if (value === null || value === undefined) return "";
  const text =
    typeof value === "number" || typeof value === "boolean"
      ? String(value)
      : neutralizeFormula(visibleControls(typeof value === "string" ? value : JSON.stringify(value), /[\t\r\n]/));
  return /[",\r\n]/.test(text) || text !== text.trim() ? `"${text.replace(/"/g, '""')}"` : text;
}

export function renderCsv(cells: readonly FlatCell[]): string {
  // the candidate set's column only in runs that ranked every layer's weights: other runs keep their columns
  const columns = cells.some((c) => c.candidates)
    ? [...CELL_COLUMNS.slice(0, 3), "candidates" as const, ...CELL_COLUMNS.slice(3)]
    : CELL_COLUMNS;
  const lines = [
    columns.join(","),
    ...cells.map((cell) => columns.map((c) => csvField(c === "candidates" ? (cell.candidates ?? "mlp") : cell[c])).join(",")),
  ];
  return lines.join("\r\n") + "\r\n";
}
