// Positions in a document as editors count them (0-based line and UTF-16 character, as VS Code and
// the Language Server Protocol do), and edits of its text. Problems count from 1 (file:line:column,
// as a terminal prints them); `problemRange` converts.
import type { Problem } from "../base/problems";

export interface Position {
  line: number;
  character: number;
}

export interface Range {
  start: Position;
  end: Position;
}

/** Replace `range` of `file` with `newText` (an insertion when the range is empty). */
export interface TextEdit {
  file: string;
  range: Range;
  newText: string;
}

export function position(line: number, character: number): Position {
  return { line, character };
}

export function range(startLine: number, startCharacter: number, endLine: number, endCharacter: number): Range {
  return { start: position(startLine, startCharacter), end: position(endLine, endCharacter) };
}

/** The 0-based range a problem marks (at least one character). */
export function problemRange(p: Problem): Range {
  const start = position(p.line - 1, Math.max(0, p.column - 1));
  const end = p.endLine !== undefined && p.endColumn !== undefined ? position(p.endLine - 1, Math.max(0, p.endColumn - 1)) : start;
  const after = end.line > start.line || (end.line === start.line && end.character > start.character);
  return after ? { start, end } : { start, end: position(start.line, start.character + 1) };
}

/** The offset of a position in a text. */
export function offsetAt(text: string, at: Position): number {
  let offset = 0;
  for (let line = 0; line < at.line; line++) {
    const next = text.indexOf("\n", offset);
    if (next < 0) return text.length;
    offset = next + 1;
  }
  const end = text.indexOf("\n", offset);
  const lineEnd = end < 0 ? text.length : end;
  return Math.min(offset + at.character, lineEnd);
}

/** The position of an offset in a text. */
export function positionAt(text: string, offset: number): Position {
  let line = 0;
  let lineStart = 0;
  for (let i = text.indexOf("\n"); i >= 0 && i < offset; i = text.indexOf("\n", i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return position(line, offset - lineStart);
}

/** An edit that removes a whole line, its line end included. */
export function deleteLine(file: string, lines: readonly string[], line: number): TextEdit {
  return line + 1 < lines.length
    ? { file, range: range(line, 0, line + 1, 0), newText: "" }
    : { file, range: range(line, 0, line, lines[line]!.length), newText: "" };
}
