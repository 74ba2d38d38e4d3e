// JSON Lines, one value a line, with positions as editors show them. The one reader of the
// format: the diagnostic checker parses line by line (keeping what each line gives across
// edits), readJsonl a whole file; both split and parse here, so a line number or a column means
// the same in either.
import { promises as fs } from "node:fs";
import { parse, printParseErrorCode, type ParseError } from "jsonc-parser";
import { problemAt, type Problem } from "../base/problems";
import { tooDeepOffset, TOO_DEEP } from "../base/jsonNesting";

export interface JsonlRecord {
  /** 1-based line of the value in its file. */
  line: number;
  value: unknown;
}

/** Why and where (0-based [start, end) within the line) a line is not JSON, or is JSON nested too deep to read. */
export interface JsonSyntaxError {
  reason: string;
  start: number;
  end: number;
  /** The line nests past MAX_JSON_NESTING (base/jsonNesting.ts): refused before it is parsed. */
  tooDeep?: true;
}

/** The lines of a JSONL text as editors number them: no byte order mark, "\r\n" or "\n" endings. */
export function jsonlLines(text: string): string[] {
  const lines = (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text).split("\n");
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    if (l.endsWith("\r")) lines[i] = l.slice(0, -1);
  }
  return lines;
}

/** A line with nothing but whitespace, which JSON Lines readers skip. */
export function isBlankLine(line: string): boolean {
  return line.length === 0 || line.trim() === "";
}

/** The value on one line, or where and why it does not parse. */
export function parseJsonlLine(raw: string): { value: unknown } | { error: JsonSyntaxError } {
  // before anything parses it: placing a problem (jsonc-parser) recurses once per level
  const deep = tooDeepOffset(raw);
  if (deep !== undefined) return { error: { reason: TOO_DEEP, start: deep, end: deep + 1, tooDeep: true } };
  try {
    return { value: JSON.parse(raw) };
  } catch (e) {
    return { error: jsonSyntaxError(raw, e) };
  }
}

const JSON_ERRORS: Record<string, string> = {
  InvalidSymbol: "unexpected character (strings need double quotes)",
  InvalidNumberFormat: "invalid number",
  PropertyNameExpected: "expected a field name in double quotes (no trailing comma)",
  ValueExpected: "expected a value (no trailing comma)",
  ColonExpected: "expected ':'",
  CommaExpected: "expected ','",
  CloseBraceExpected: "expected '}' (an item must be complete on one line)",
  CloseBracketExpected: "expected ']'",
  EndOfFileExpected: "unexpected text after the item (one item per line)",
  InvalidCommentToken: "comments are not allowed in JSON",
  UnexpectedEndOfComment: "unterminated comment",
  UnexpectedEndOfString: "unterminated string (an item must be complete on one line)",
  UnexpectedEndOfNumber: "incomplete number",
  InvalidUnicode: "invalid \\u escape",
  InvalidEscapeCharacter: "invalid escape (write \\\\ for a backslash)",
  InvalidCharacter: "control character in a string (write \\n or \\t)",
};

/** Where and why JSON.parse refused a line, as jsonc-parser's strict mode pinpoints it. */
function jsonSyntaxError(raw: string, error: unknown): JsonSyntaxError {
  const errors: ParseError[] = [];
  parse(raw, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
  const first = errors[0];
  const v8 = error instanceof Error ? error.message : String(error);
  const start = first ? first.offset : Number(/position (\d+)/.exec(v8)?.[1] ?? 0);
  const reason = first ? (JSON_ERRORS[printParseErrorCode(first.error)] ?? printParseErrorCode(first.error)) : v8;
  return { reason, start, end: start + Math.max(1, first?.length ?? 1) };
}

/** Parses one JSON value per non-blank line of a file; each bad line becomes a problem at its line and column. */
export async function readJsonl(file: string): Promise<{ records: JsonlRecord[]; problems: Problem[] }> {
  const text = await fs.readFile(file, "utf8");
  const records: JsonlRecord[] = [];
  const problems: Problem[] = [];
  jsonlLines(text).forEach((raw, index) => {
    const line = index + 1;
    if (isBlankLine(raw)) return;
    const parsed = parseJsonlLine(raw);
    if ("value" in parsed) records.push({ line, value: parsed.value });
    else {
      const { tooDeep, reason, start } = parsed.error;
      problems.push(
        problemAt(
          { file, line, column: start + 1 },
          tooDeep ? "json.too-deep" : "json.syntax",
          `${tooDeep ? "" : "invalid JSON: "}${reason}`,
        ),
      );
    }
  });
  return { records, problems };
}
