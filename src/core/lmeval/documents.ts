// The documents of a benchmark split, from the local files an lm-eval task names:
// `dataset_path: json` (JSON Lines, or one JSON document with `field`), `csv` or `parquet`.
import { parse as parseCsv } from "csv-parse/sync";
import { findNodeAtLocation, parseTree } from "jsonc-parser";
import { tableFromIPC } from "apache-arrow";
import { asyncBufferFromFile, parquetReadObjects } from "hyparquet";
import { promises as fs } from "node:fs";
import { diskFiles, type TextFiles } from "../base/fsutil";
import { positionAt } from "../base/jsonSource";
import { tooDeepOffset, TOO_DEEP } from "../base/jsonNesting";

export type DatasetKind = "json" | "csv" | "parquet" | "arrow";
export const DATASET_KINDS: readonly DatasetKind[] = ["json", "csv", "parquet", "arrow"];

export type Doc = Record<string, unknown>;

/** A document's own id, what the user knows it by: its `id` field when that is a non-empty string or a number; undefined otherwise. */
export function documentId(doc: Readonly<Record<string, unknown>>): string | undefined {
  const id = doc["id"];
  if (typeof id === "number" && Number.isFinite(id)) return String(id);
  return typeof id === "string" && id.trim() !== "" ? id : undefined;
}

export interface Documents {
  docs: Doc[];
  /** 1-based source line where each document starts (JSON Lines, CSV, a JSON list); not for Parquet. */
  lines?: number[];
}

/** Thrown for a file that cannot be read as the task says; `line` (and `column`) when known; `code`: a JSON text nested too deep. */
export class DocumentError extends Error {
  constructor(
    message: string,
    readonly line = 1,
    readonly column = 1,
    readonly code: "task.document" | "json.too-deep" = "task.document",
  ) {
    super(message);
  }
}

/** Throws the DocumentError of a JSON text that nests past MAX_JSON_NESTING, at its first bracket past it. */
function refuseTooDeep(text: string, what: string, firstLine = 1): void {
  const offset = tooDeepOffset(text);
  if (offset === undefined) return;
  const { line, column } = positionAt(text, offset);
  throw new DocumentError(`${what} is ${TOO_DEEP}`, firstLine + line - 1, column, "json.too-deep");
}

/**
 * For `field`: the documents are the one list of objects in a JSON object, whatever its key (BIG-Bench
 * Hard's files keep them under `examples`, beside a `canary` string). For data files a config names
 * directly, where there is no task key to say which.
 */
export const THE_ONE_LIST = Symbol("the JSON object's one list of documents");

/** The format of a data file, from its name: .json and .jsonl are json; undefined for others. */
export function datasetKindOf(file: string): DatasetKind | undefined {
  const extension = /\.(jsonl|json|csv|parquet|arrow)$/i.exec(file)?.[1]?.toLowerCase();
  return extension === "jsonl" ? "json" : (extension as DatasetKind | undefined);
}

/** The documents of a data file; DocumentError where they cannot be read, NotUtf8Error for bytes that are not UTF-8. */
export async function loadDocuments(
  kind: DatasetKind,
  file: string,
  field?: string | typeof THE_ONE_LIST,
  files: TextFiles = diskFiles,
): Promise<Documents> {
  switch (kind) {
    case "json":
      return jsonDocuments(await files.read(file), field);
    case "csv":
      return csvDocuments(await files.read(file));
    case "parquet":
      return { docs: (await parquetReadObjects({ file: await asyncBufferFromFile(file) })) as Doc[] };
    case "arrow":
      return { docs: arrowDocuments(await fs.readFile(file)) };
  }
}

/**
 * The rows of an Arrow IPC file (the stream format the `datasets` library caches its splits in),
 * as plain JSON values: structs as objects, lists as arrays, 64-bit integers as numbers.
 */
function arrowDocuments(bytes: Uint8Array): Doc[] {
  let table: ReturnType<typeof tableFromIPC>;
  try {
    table = tableFromIPC(bytes);
  } catch (e) {
    throw new DocumentError(`not an Arrow file: ${(e as Error).message}`);
  }
  const plain = (_key: string, value: unknown) => (typeof value === "bigint" ? Number(value) : value);
  return table.toArray().map((row) => JSON.parse(JSON.stringify(row, plain)) as Doc);
}

/** Hugging Face's json loader: one JSON document (an array, or an object with `field`), else JSON Lines. */
function jsonDocuments(text: string, given?: string | typeof THE_ONE_LIST): Documents {
  const whole = tryParse(text);
  const field = given === THE_ONE_LIST ? theOneListKey(whole) : given;
  if (whole !== undefined && !(field === undefined && isPlainObject(whole))) {
    // before its documents are placed (jsonc-parser, which recurses once per level) and rendered
    refuseTooDeep(text, "the JSON file");
    const selected = field === undefined ? whole : isPlainObject(whole) ? whole[field] : undefined;
    if (!Array.isArray(selected)) {
      throw new DocumentError(
        field === undefined ? "the JSON file is not a list of documents" : `the JSON file has no list under \`${field}\``,
      );
    }
    return { docs: selected.map((d, i) => asDoc(d, `document ${i}`)), lines: listLines(text, field) };
  }
  if (field !== undefined) throw new DocumentError(`\`field: ${field}\` needs a single JSON document, but the file is JSON Lines`);
  const docs: Doc[] = [];
  const lines: number[] = [];
  text.split("\n").forEach((raw, i) => {
    if (raw.trim() === "") return;
    refuseTooDeep(raw, `line ${i + 1}`, i + 1);
    const value = tryParse(raw);
    if (value === undefined) throw new DocumentError("invalid JSON", i + 1);
    docs.push(asDoc(value, `line ${i + 1}`, i + 1));
    lines.push(i + 1);
  });
  return { docs, lines };
}

/** The key of a JSON object's only value that is a list of objects; undefined unless there is exactly one. */
function theOneListKey(value: unknown): string | undefined {
  if (!isPlainObject(value)) return undefined;
  const lists = Object.entries(value).filter(([, v]) => Array.isArray(v) && v.length > 0 && v.every(isPlainObject));
  return lists.length === 1 ? lists[0]![0] : undefined;
}

/** The line where each element of the document list starts (the whole file, or its `field`). */
function listLines(text: string, field: string | undefined): number[] {
  const root = parseTree(text);
  const list = root && (field === undefined ? root : findNodeAtLocation(root, [field]));
  const lineStarts = [0];
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) lineStarts.push(i + 1);
  const lineOf = (offset: number) => {
    let [lo, hi] = [0, lineStarts.length - 1];
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lineStarts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
  return (list?.children ?? []).map((node) => lineOf(node.offset));
}

/**
 * A CSV file with a header row, as Hugging Face's csv loader reads it. Each document's line is
 * where its record starts: a quoted field may span lines, and csv-parse counts lines where a
 * record ends, so the start is found from the byte offset where the record before it ended.
 */
function csvDocuments(text: string): Documents {
  let rows: { record: string[]; info: { bytes: number } }[];
  try {
    rows = parseCsv(text, { bom: true, skip_empty_lines: true, info: true }) as unknown as typeof rows;
  } catch (e) {
    const line = (e as { lines?: number }).lines;
    throw new DocumentError(`invalid CSV: ${(e as Error).message}`, line ?? 1);
  }
  const [header, ...records] = rows;
  if (!header) return { docs: [], lines: [] };
  const bytes = Buffer.from(text);
  const lineAt = recordStartLines(bytes);
  return {
    docs: records.map(({ record }) => Object.fromEntries(header.record.map((name, i) => [name, record[i]]))),
    lines: records.map((_, i) => lineAt(rows[i]!.info.bytes)),
  };
}

/** For offsets that only grow, the 1-based line of the first non-empty line at or after each one. */
function recordStartLines(bytes: Buffer): (offset: number) => number {
  const NEWLINE = 0x0a;
  const RETURN = 0x0d;
  let [at, line] = [0, 1];
  return (offset) => {
    for (; at < offset && at < bytes.length; at++) if (bytes[at] === NEWLINE) line++;
    // skip_empty_lines: blank lines between records hold no record.
    for (;;) {
      if (bytes[at] === NEWLINE) at += 1;
      else if (bytes[at] === RETURN && bytes[at + 1] === NEWLINE) at += 2;
      else return line;
      line++;
    }
  };
}

function tryParse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function asDoc(value: unknown, where: string, line = 1): Doc {
  if (!isPlainObject(value)) throw new DocumentError(`${where} is not a JSON object`, line);
  return value;
}
