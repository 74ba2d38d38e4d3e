// YAML parsed with source positions, shared by every YAML file the user writes (profiling
// configs, lm-eval tasks): diagnostics point at the key or value they are about.
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node, type ScalarTag, type YAMLError } from "yaml";
import type { Diagnostic, Severity } from "./diagnostics";

export type FieldPath = readonly (string | number)[];

export interface YamlSource {
  file: string;
  /** The plain value; undefined when the text has YAML errors. */
  value: unknown;
  /** YAML syntax errors and warnings. */
  diagnostics: Diagnostic[];
  /** A diagnostic located at the field `path` (or its closest existing ancestor). */
  at(path: FieldPath, severity: Severity, message: string, on?: "key" | "value"): Diagnostic;
}

export function formatFieldPath(path: FieldPath): string {
  return path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? p : `.${p}`)).join("");
}

/**
 * lm-eval's `!function module.name` tag is read as `{ "!function": "module.name" }`, so a loader
 * can refuse it by key instead of meeting an unresolved tag.
 */
const functionTag: ScalarTag = {
  tag: "!function",
  resolve: (value: string) => ({ [FUNCTION_TAG]: value }),
};
export const FUNCTION_TAG = "!function";

export function parseYamlSource(text: string, file: string): YamlSource {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true, customTags: [functionTag] });

  const diagnosticAt = (range: [number, number], severity: Severity, message: string, field?: FieldPath): Diagnostic => {
    const a = lineCounter.linePos(range[0]);
    const b = lineCounter.linePos(Math.max(range[0], range[1]));
    return {
      file, line: a.line, column: a.col, endLine: b.line, endColumn: b.col, severity, message,
      ...(field && field.length > 0 ? { field: formatFieldPath(field) } : {}),
    };
  };

  // A syntax error still names the field it sits in, so a one-line message says where to look.
  // An unterminated quote or bracket is reported by the parser where the text ends; the place
  // to fix is where the value opens.
  const yamlDiagnostic = (e: YAMLError, severity: Severity) => {
    const field = fieldAt(doc.contents, e.pos[0]);
    const range: [number, number] = e.code === "MISSING_CHAR" && field.length > 0 ? rangeOf(doc, field, "value") : e.pos;
    return diagnosticAt(range, severity, `YAML: ${firstLine(e.message)}`, field);
  };
  const diagnostics = [...doc.errors.map((e) => yamlDiagnostic(e, "error")), ...doc.warnings.map((e) => yamlDiagnostic(e, "warning"))];
  return {
    file,
    value: doc.errors.length > 0 ? undefined : doc.toJS(),
    diagnostics,
    at: (path, severity, message, on = "value") => diagnosticAt(rangeOf(doc, path, on), severity, message, path),
  };
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
    diagnostics: [],
    at: (path, severity, message, on) => source.at([...prefix, ...path], severity, message, on),
  };
}
