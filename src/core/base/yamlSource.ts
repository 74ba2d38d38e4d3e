// YAML parsed with source positions, shared by every YAML file the user writes (profiling
// configs, lm-eval tasks): problems point at the key or value they are about.
import { isMap, isScalar, isSeq, LineCounter, parseDocument, visit, type Document, type Node, type ScalarTag, type YAMLError } from "yaml";
import { problemAt, type Problem, type ProblemCode, type ProblemData, type ProblemPlace } from "./problems";

export type FieldPath = readonly (string | number)[];

export interface YamlSource {
  file: string;
  /** The plain value; undefined when the text has YAML errors. */
  value: unknown;
  /** YAML syntax errors and warnings. */
  problems: Problem[];
  /** A problem located at the field `path` (or its closest existing ancestor). */
  at(path: FieldPath, code: ProblemCode, message: string, options?: AtOptions): Problem;
  /** Where the field `path` (or its closest existing ancestor) is: its value, or its key. */
  place(path: FieldPath, on?: "key" | "value"): ProblemPlace;
  /** The path of the innermost field whose entry (key through value) spans the 0-based `offset`. */
  pathAt(offset: number): (string | number)[];
}

export interface AtOptions {
  /** Mark the key instead of the value (an unknown key, a key without effect). */
  on?: "key" | "value";
  data?: ProblemData;
}

export function formatFieldPath(path: FieldPath): string {
  return path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? p : `.${p}`)).join("");
}

/**
 * lm-eval's `!function module.name` tag is read as `{ "!function": "module.name" }`, so a loader
 * can refuse it by key instead of meeting an unresolved tag.
 */
export const functionTag: ScalarTag = {
  tag: "!function",
  resolve: (value: string) => ({ [FUNCTION_TAG]: value }),
};
export const FUNCTION_TAG = "!function";

export function parseYamlSource(text: string, file: string): YamlSource {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true, customTags: [functionTag] });

  const placeOf = (range: [number, number], field?: FieldPath): ProblemPlace => {
    const a = lineCounter.linePos(range[0]);
    const b = lineCounter.linePos(Math.max(range[0], range[1]));
    return {
      file,
      line: a.line,
      column: a.col,
      endLine: b.line,
      endColumn: b.col,
      ...(field && field.length > 0 ? { field: formatFieldPath(field) } : {}),
    };
  };
  const problemIn = (range: [number, number], code: ProblemCode, message: string, field?: FieldPath, data?: ProblemData): Problem =>
    problemAt(placeOf(range, field), code, message, data);

  // A syntax error still names the field it sits in, so a one-line message says where to look.
  // An unterminated quote or bracket is reported by the parser where the text ends; the place
  // to fix is where the value opens.
  const yamlProblem = (e: YAMLError, code: "yaml.syntax" | "yaml.warning") => {
    const field = fieldAt(doc.contents, e.pos[0]);
    const range: [number, number] = e.code === "MISSING_CHAR" && field.length > 0 ? rangeOf(doc, field, "value") : e.pos;
    return problemIn(range, code, `YAML: ${firstLine(e.message)}`, field);
  };
  const problems = [...doc.errors.map((e) => yamlProblem(e, "yaml.syntax")), ...doc.warnings.map((e) => yamlProblem(e, "yaml.warning"))];
  let value: unknown;
  if (doc.errors.length === 0) {
    try {
      value = doc.toJS();
    } catch (e) {
      // The parser refuses aliases that would expand past its limit (a "billion laughs" file).
      const alias = firstAliasRange(doc);
      problems.push(
        problemIn(
          alias,
          "yaml.syntax",
          `YAML: ${firstLine(e instanceof Error ? e.message : String(e))}; write the values out instead of repeating aliases`,
          fieldAt(doc.contents, alias[0]),
        ),
      );
    }
  }
  return {
    file,
    value,
    problems,
    at: (path, code, message, options = {}) => problemIn(rangeOf(doc, path, options.on ?? "value"), code, message, path, options.data),
    place: (path, on = "value") => placeOf(rangeOf(doc, path, on), path),
    pathAt: (offset) => fieldAt(doc.contents, offset),
  };
}

/** Where the document's first alias (`*name`) is; the document's start when it has none. */
function firstAliasRange(doc: Document): [number, number] {
  let range: [number, number] = [0, 0];
  visit(doc, {
    Alias(_, node) {
      if (node.range) range = [node.range[0], node.range[1]];
      return visit.BREAK;
    },
  });
  return range;
}

/** Path of the innermost key whose entry (key through value) spans `offset`. */
function fieldAt(node: unknown, offset: number, path: (string | number)[] = []): (string | number)[] {
  if (isMap(node)) {
    for (const pair of node.items) {
      const key = isScalar(pair.key) ? pair.key : undefined;
      const value = pair.value as Node | null;
      const start = key?.range?.[0];
      const end = value?.range?.[2] ?? key?.range?.[2];
      if (key && start !== undefined && end !== undefined && offset >= start && offset <= end) {
        return fieldAt(value, offset, [...path, String(key.value)]);
      }
    }
  } else if (isSeq(node)) {
    for (const [i, item] of node.items.entries()) {
      const range = (item as Node | null)?.range;
      if (range && offset >= range[0] && offset <= range[2]) return fieldAt(item, offset, [...path, i]);
    }
  }
  return path;
}

function firstLine(message: string): string {
  return message.split("\n")[0]!.trim();
}

/** Offsets [start, end) of the node at `path`, or of its closest existing ancestor. */
function rangeOf(doc: Document, path: FieldPath, on: "key" | "value"): [number, number] {
  for (let depth = path.length; depth >= 0; depth--) {
    const prefix = path.slice(0, depth);
    if (on === "key" && depth === path.length && depth > 0) {
      const parent = depth > 1 ? doc.getIn(prefix.slice(0, -1), true) : doc.contents;
      const key = keyNode(parent as Node | null, prefix[depth - 1]!);
      if (key?.range) return [key.range[0], key.range[1]];
    }
    const node = (depth === 0 ? doc.contents : doc.getIn(prefix, true)) as Node | null | undefined;
    if (node?.range) return [node.range[0], node.range[1]];
  }
  return [0, 0];
}

function keyNode(parent: Node | null, key: string | number): Node | undefined {
  if (!isMap(parent)) return undefined;
  const pair = parent.items.find((p) => isScalar(p.key) && p.key.value === key);
  return pair && isScalar(pair.key) ? pair.key : undefined;
}

/**
 * A part of a YAML file seen as a source of its own: `value` is the node at `prefix`, and `at`
 * takes paths relative to it, so a reader of that part (an lm-eval task defined inline in a
 * config) reports positions in the enclosing file with the whole field path.
 */
export function scopedSource(source: YamlSource, prefix: FieldPath, value: unknown): YamlSource {
  return {
    file: source.file,
    value,
    problems: [],
    at: (path, code, message, options) => source.at([...prefix, ...path], code, message, options),
    place: (path, on) => source.place([...prefix, ...path], on),
    pathAt: (offset) => source.pathAt(offset).slice(prefix.length),
  };
}
