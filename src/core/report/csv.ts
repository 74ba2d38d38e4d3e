// CSV report (RFC 4180): a header, then one line per cell (see cells.ts); CRLF line ends, fields
// quoted when they hold a comma, a quote, a line break or surrounding spaces, quotes doubled.
// Numbers are written in full precision (the shortest text that reads back to the same double);
// null is an empty field; booleans are true/false.
import { CELL_COLUMNS, type FlatCell } from "./cells";

export function csvField(value: unknown): string {
  if (value === null || value === undefined) return "";
  const text = typeof value === "string" ? value : typeof value === "number" || typeof value === "boolean" ? String(value) : JSON.stringify(value);
  return /[",\r\n]/.test(text) || text !== text.trim() ? `"${text.replace(/"/g, '""')}"` : text;
}

export function renderCsv(cells: readonly FlatCell[]): string {
  const lines = [CELL_COLUMNS.join(","), ...cells.map((cell) => CELL_COLUMNS.map((c) => csvField(cell[c])).join(","))];
  return lines.join("\r\n") + "\r\n";
}
