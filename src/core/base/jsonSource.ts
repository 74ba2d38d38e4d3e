// A JSON file of a model folder (tokenizer_config.json, generation_config.json, config.json) read
// with source positions, so a problem in it is reported at its line and column like any other.
import { promises as fs } from "node:fs";
import { findNodeAtLocation, parse, parseTree, printParseErrorCode, type JSONPath, type Node, type ParseError } from "jsonc-parser";
import { problemAt, type Problem, type ProblemCode } from "./problems";
import type { AtOptions } from "./yamlSource";
import { tooDeepOffset, TOO_DEEP } from "./jsonNesting";

export interface JsonSource {
  file: string;
  value: unknown;
  /** A problem at the value (or key) of `path`, or at its closest existing ancestor. */
  at(path: JSONPath, code: ProblemCode, message: string, options?: AtOptions): Problem;
}

/** Reads and parses `file`; undefined (with a problem) when it cannot be read or is not JSON. */
export async function readJsonSource(file: string): Promise<{ source?: JsonSource; problems: Problem[] }> {
  let text: string;
  try {
    text = await fs.readFile(file, "utf8");
  } catch {
    return { problems: [problemAt({ file, line: 1, column: 1 }, "file.unreadable", `cannot read ${file}`)] };
  }
  return parseJsonSource(text, file);
}

export function parseJsonSource(text: string, file: string): { source?: JsonSource; problems: Problem[] } {
  // before jsonc-parser, which recurses once per level
  const deep = tooDeepOffset(text);
  if (deep !== undefined) return { problems: [problemAt({ file, ...positionAt(text, deep) }, "json.too-deep", `the file is ${TOO_DEEP}`)] };
  const errors: ParseError[] = [];
  const value: unknown = parse(text, errors, { allowTrailingComma: false, disallowComments: true });
  const position = (offset: number) => positionAt(text, offset);
  if (errors.length > 0) {
    const e = errors[0]!;
    const { line, column } = position(e.offset);
    return { problems: [problemAt({ file, line, column }, "json.syntax", `not valid JSON: ${printParseErrorCode(e.error)}`)] };
  }
  const tree = parseTree(text);
  const at = (path: JSONPath, code: ProblemCode, message: string, options: AtOptions = {}): Problem => {
    let node: Node | undefined;
    for (let depth = path.length; depth >= 0 && !node; depth--) node = tree ? findNodeAtLocation(tree, path.slice(0, depth)) : undefined;
    const target = options.on === "key" && node?.parent?.type === "property" ? (node.parent.children?.[0] ?? node) : node;
    const start = target?.offset ?? 0;
    const end = start + (target?.length ?? 0);
    const a = position(start);
    const b = position(end);
    const field = path
      .map((p) => (typeof p === "number" ? `[${p}]` : `.${p}`))
      .join("")
      .replace(/^\./, "");
    return problemAt(
      { file, line: a.line, column: a.column, endLine: b.line, endColumn: b.column, ...(field ? { field } : {}) },
      code,
      message,
      options.data,
    );
  };
  return { source: { file, value, at }, problems: [] };
}

/** 1-based line and column of a character offset. */
export function positionAt(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text[i] === "\n") {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

/** The segments of a JSON Pointer (an Ajv error's instancePath), list indexes as numbers. */
export function jsonPointerPath(pointer: string): (string | number)[] {
  if (pointer === "") return [];
  return pointer
    .slice(1)
    .split("/")
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}
