// Where the cursor is in a YAML config that is being typed, and so half written: which mapping it
// is in, whether a key or a value is being typed, and the text typed so far. A YAML parser needs
// a complete document; this reads the block structure (indentation, `- ` items, `key:`) of the
// lines up to the cursor, which is all that completion needs and which a half-typed line does not
// disturb.
import type { Position } from "./text";

export type YamlPath = (string | number)[];

export interface YamlCursor {
  /**
   * Where the typed text goes. A key: the path of the mapping it is a key of. A value: the path
   * of the value (the key's path, and an index inside a flow list `[a, b]` or for a `- ` item).
   */
  path: YamlPath;
  kind: "key" | "value";
  /** The text typed so far, without an opening quote. */
  prefix: string;
  /** 0-based characters on the cursor's line of what a completion replaces. */
  from: number;
  to: number;
}

interface Frame {
  /** The column where the node's content starts. */
  column: number;
  segment: string | number;
  kind: "key" | "item";
}

const KEY = /^((?:"[^"]*"|'[^']*'|[^\s#'"][^:#]*?))\s*:(?=\s|$)/;

function unquote(key: string): string {
  return /^(["']).*\1$/.test(key) ? key.slice(1, -1) : key;
}

/** The structure of one line: its `- ` items and the key after them, from `column` on. */
function lineParts(line: string): { items: number[]; column: number; key?: string; valueColumn?: number } {
  let column = line.length - line.trimStart().length;
  const items: number[] = [];
  while (line[column] === "-" && (column + 1 === line.length || line[column + 1] === " ")) {
    items.push(column);
    column += 1;
    while (line[column] === " ") column++;
  }
  const match = KEY.exec(line.slice(column));
  if (!match) return { items, column };
  let valueColumn = column + match[0].length;
  while (line[valueColumn] === " ") valueColumn++;
  return { items, column, key: unquote(match[1]!.trim()), valueColumn };
}

function isContentLine(line: string): boolean {
  const t = line.trim();
  return t !== "" && !t.startsWith("#") && t !== "---";
}

/** Pops the frames a line closes and pushes the ones it opens. */
function enter(frames: Frame[], parts: ReturnType<typeof lineParts>): void {
  for (const column of parts.items) {
    // A `- ` item closes deeper entries and the sibling item before it, not the key above it.
    let index = 0;
    while (frames.length > 0) {
      const last = frames[frames.length - 1]!;
      if (last.column > column || (last.column === column && last.kind === "item")) {
        frames.pop();
        if (last.column === column && last.kind === "item") {
          index = (last.segment as number) + 1;
          break;
        }
      } else break;
    }
    frames.push({ column, segment: index, kind: "item" });
  }
  if (parts.key !== undefined) {
    while (frames.length > 0 && frames[frames.length - 1]!.column >= parts.column) frames.pop();
    frames.push({ column: parts.column, segment: parts.key, kind: "key" });
  }
}

/** The cursor's place in `text`, a YAML mapping in block style (flow lists allowed as values). */
export function yamlCursor(text: string, at: Position): YamlCursor {
  const lines = text.split("\n").map((l) => (l.endsWith("\r") ? l.slice(0, -1) : l));
  const frames: Frame[] = [];
  for (let l = 0; l < at.line && l < lines.length; l++) {
    if (!isContentLine(lines[l]!)) continue;
    enter(frames, lineParts(lines[l]!));
  }
  const line = lines[at.line] ?? "";
  const before = line.slice(0, at.character);
  const parts = lineParts(before);

  // Typing a key: no `key:` yet on the line (a `- ` item may start it).
  if (parts.key === undefined) {
    enter(frames, parts);
    // A key starts at the line's content column, so deeper keys of the frame above close.
    while (frames.length > 0 && frames[frames.length - 1]!.kind === "key" && frames[frames.length - 1]!.column >= parts.column)
      frames.pop();
    const typed = before.slice(parts.column);
    const path = frames.map((f) => f.segment);
    const from = parts.column + (typed.startsWith('"') || typed.startsWith("'") ? 1 : 0);
    return {
      path,
      kind: parts.items.length > 0 && typed === "" ? "value" : "key",
      prefix: before.slice(from),
      from,
      to: wordEnd(line, at.character),
    };
  }

  enter(frames, parts);
  const path = frames.map((f) => f.segment);
  const value = before.slice(parts.valueColumn);
  // A flow list: the item being typed is the one after the last comma.
  if (value.startsWith("[")) {
    const items = value.slice(1).split(",");
    const last = items[items.length - 1]!;
    const from = before.length - last.trimStart().length;
    return {
      path: [...path, items.length - 1],
      kind: "value",
      prefix: stripQuote(last.trimStart()),
      from: from + quoteLength(last.trimStart()),
      to: flowItemEnd(line, at.character),
    };
  }
  const from = parts.valueColumn! + quoteLength(value);
  return { path, kind: "value", prefix: before.slice(from), from, to: valueEnd(line, at.character) };
}

function quoteLength(value: string): number {
  return value.startsWith('"') || value.startsWith("'") ? 1 : 0;
}

function stripQuote(value: string): string {
  return value.slice(quoteLength(value));
}

function wordEnd(line: string, from: number): number {
  let end = from;
  while (end < line.length && !/[\s:]/.test(line[end]!)) end++;
  return end;
}

/** The end of a value being replaced: the line's end, before a comment or a closing quote. */
function valueEnd(line: string, from: number): number {
  const rest = line.slice(from);
  const comment = rest.search(/\s#/);
  let end = comment < 0 ? line.length : from + comment;
  while (end > from && /["'\s]/.test(line[end - 1]!)) end--;
  return end;
}

function flowItemEnd(line: string, from: number): number {
  let end = from;
  while (end < line.length && !/[,\]]/.test(line[end]!)) end++;
  while (end > from && /["'\s]/.test(line[end - 1]!)) end--;
  return end;
}
