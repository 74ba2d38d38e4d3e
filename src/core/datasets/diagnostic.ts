// Diagnostic datasets (`*.diag.jsonl`): one multiple-choice item a line, each exercising one
// ability (METHOD.md, phase 1). Checks every line (JSON, fields, types, ranges), the file as a
// whole (duplicate ids, duplicate and near-duplicate questions, ability names), its statistical
// health (diagnosticHealth.ts) and its overlap with the profile's benchmarks (ngrams.ts).
//
// Speed matters because an editor re-checks the file as the user types: lines are parsed with
// JSON.parse, and source positions (jsonc-parser) are computed only for lines that get a
// diagnostic. A clean 20,000-item file never builds a syntax tree.
import { promises as fs } from "node:fs";
import { findNodeAtLocation, parse, parseTree, printParseErrorCode, type JSONPath, type Node, type ParseError } from "jsonc-parser";
import { nearMissAbility, PAPER_ABILITIES } from "../abilities";
import { nearestWord } from "../config/nearest";
import { fileDiagnostic, type Diagnostic, type Severity } from "../diagnostics";
import { formatFieldPath } from "../yamlSource";
import { healthDiagnostics } from "./diagnosticHealth";
import {
  benchmarkOverlaps, buildBenchmarkIndex, CONTAMINATION_NGRAM, jaccard, normalizedWords, shingleSet, similarSets, U32Buffer,
  appendWordHashes, type BenchmarkNgramIndex, type BenchmarkText,
} from "./ngrams";

export interface DiagnosticItem {
  id: string;
  ability: string;
  context: string;
  question: string;
  choices: string[];
  /** 0-based index into `choices`. */
  answer: number;
  meta?: Record<string, unknown>;
  /** 1-based line of the item in its file. */
  line: number;
}

export const DIAGNOSTIC_FIELDS = ["id", "ability", "context", "question", "choices", "answer", "meta"] as const;
const REQUIRED_FIELDS = ["id", "ability", "context", "question", "choices", "answer"] as const;
type RequiredField = (typeof REQUIRED_FIELDS)[number];

export const MIN_CHOICES = 2;
/** One choice per letter A-Z, as prompts label them. */
export const MAX_CHOICES = 26;
/** Jaccard similarity of word 3-gram sets from which two questions count as near duplicates. */
export const NEAR_DUPLICATE_JACCARD = 0.9;
export const SHINGLE_WORDS = 3;

export interface DiagnosticCheckOptions {
  /** Benchmark documents to test for 13-gram overlap; ignored when `benchmarkIndex` is given. */
  benchmarkTexts?: readonly BenchmarkText[];
  /** The same, indexed once by `buildBenchmarkIndex` and reused across checks (an editor re-checking as the user types). */
  benchmarkIndex?: BenchmarkNgramIndex;
  /** Fewest items per ability before a warning (default MIN_ITEMS_PER_ABILITY). */
  minItems?: number;
  /** Ability names known besides the paper's (e.g. those the profile declares), for near-miss warnings. */
  abilities?: readonly string[];
}

export interface DiagnosticDatasetCheck {
  /** The items without errors, in file order. */
  items: DiagnosticItem[];
  diagnostics: Diagnostic[];
}

const FIELD_HINTS: Record<RequiredField, string> = {
  id: "a string naming the item, unique in the file",
  ability: 'the ability the item exercises, e.g. "Deductive Reasoning"',
  context: 'the passage the question is about; "" when there is none',
  question: "the question text",
  choices: `an array of ${MIN_CHOICES} to ${MAX_CHOICES} choice strings`,
  answer: "the 0-based index of the correct choice",
};

/** Reads and checks a diagnostic dataset from disk. */
export async function loadDiagnosticDataset(file: string, options: DiagnosticCheckOptions = {}): Promise<DiagnosticDatasetCheck> {
  let text: string;
  try {
    text = await fs.readFile(file, "utf8");
  } catch (e) {
    const reason = e instanceof Error ? e.message : String(e);
    return { items: [], diagnostics: [fileDiagnostic(file, `cannot read the diagnostic dataset: ${reason}`)] };
  }
  return checkDiagnosticDataset(file, text, options);
}

/** Checks the text of a diagnostic dataset (a saved file or an editor's unsaved buffer). */
export function checkDiagnosticDataset(file: string, text: string, options: DiagnosticCheckOptions = {}): DiagnosticDatasetCheck {
  const source = new JsonLines(file, text);
  const items: DiagnosticItem[] = [];
  const idLines = new Map<string, number>();
  let nonBlank = 0;
  for (let index = 0; index < source.lines.length; index++) {
    const raw = source.lines[index]!;
    if (isBlank(raw)) continue;
    nonBlank++;
    const line = index + 1;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (e) {
      source.add(jsonSyntaxDiagnostic(file, line, raw, e));
      continue;
    }
    duplicateIdCheck(value, line, idLines, source);
    const item = itemOf(value, line, source);
    if (item) items.push(item);
  }
  if (nonBlank === 0) source.add({ ...fileDiagnostic(file, "the dataset has no items: write one JSON object per line"), severity: "warning" });

  abilityNameDiagnostics(items, source, options.abilities ?? []);
  textDiagnostics(items, source, options);
  const at = (item: { line: number }, field: string, message: string) => source.at(item.line, [field], "warning", message);
  for (const d of healthDiagnostics(file, items, at, options.minItems === undefined ? {} : { minItems: options.minItems })) source.add(d);
  return { items, diagnostics: source.sortedDiagnostics() };
}

function isBlank(line: string): boolean {
  return line.length === 0 || line.trim() === "";
}

// ---------------------------------------------------------------------------------------------
// Source positions, computed lazily per line.

/** Lines of a JSONL text and the diagnostics found in them, located on demand. */
class JsonLines {
  readonly lines: string[];
  private readonly trees = new Map<number, Node | undefined>();
  private readonly diagnostics: Diagnostic[] = [];
  /** Warnings that would repeat on many lines (one unknown field in every item) are shown once. */
  private readonly repeated = new Map<string, { diagnostic: Diagnostic; more: number }>();

  constructor(readonly file: string, text: string) {
    // A byte order mark is not part of the first line as editors show it; "\r\n" ends lines too.
    this.lines = (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text).split("\n");
    for (let i = 0; i < this.lines.length; i++) {
      const l = this.lines[i]!;
      if (l.endsWith("\r")) this.lines[i] = l.slice(0, -1);
    }
  }

  add(d: Diagnostic): void {
    this.diagnostics.push(d);
  }

  /** A diagnostic at the value (or key) at `path` in `line`, or at the whole item when `path` is absent. */
  at(line: number, path: JSONPath, severity: Severity, message: string, on: "value" | "key" = "value"): Diagnostic {
    const root = this.treeOf(line);
    const node = (root && findNodeAtLocation(root, path)) ?? root;
    const target = on === "key" && node?.parent?.type === "property" ? node.parent.children![0]! : node;
    const [offset, length] = target ? [target.offset, target.length] : [0, this.lines[line - 1]!.length];
    return {
      file: this.file, line, column: offset + 1, endLine: line, endColumn: offset + length + 1, severity, message,
      ...(path.length > 0 ? { field: formatFieldPath(path) } : {}),
    };
  }

  report(line: number, path: JSONPath, severity: Severity, message: string, on: "value" | "key" = "value"): void {
    this.add(this.at(line, path, severity, message, on));
  }

  /** Reports a warning once, on its first line, however many lines would repeat it. */
  reportOnce(line: number, path: JSONPath, message: string, on: "value" | "key" = "value"): void {
    const seen = this.repeated.get(message);
    if (seen) seen.more++;
    else this.repeated.set(message, { diagnostic: this.at(line, path, "warning", message, on), more: 0 });
  }

  sortedDiagnostics(): Diagnostic[] {
    const once = [...this.repeated.values()].map(({ diagnostic, more }) =>
      more === 0 ? diagnostic : { ...diagnostic, message: `${diagnostic.message} (also on ${more} more line${more === 1 ? "" : "s"})` },
    );
    return [...this.diagnostics, ...once].sort((a, b) => a.line - b.line || a.column - b.column);
  }

  private treeOf(line: number): Node | undefined {
    if (!this.trees.has(line)) this.trees.set(line, parseTree(this.lines[line - 1] ?? ""));
    return this.trees.get(line);
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
function jsonSyntaxDiagnostic(file: string, line: number, raw: string, error: unknown): Diagnostic {
  const errors: ParseError[] = [];
  parse(raw, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
  const first = errors[0];
  const v8 = error instanceof Error ? error.message : String(error);
  const offset = first ? first.offset : Number(/position (\d+)/.exec(v8)?.[1] ?? 0);
  const reason = first ? (JSON_ERRORS[printParseErrorCode(first.error)] ?? printParseErrorCode(first.error)) : v8;
  return {
    file, line, column: offset + 1, endLine: line, endColumn: offset + Math.max(1, first?.length ?? 1) + 1, severity: "error",
    message: `invalid JSON: ${reason}; each line must be one complete JSON object`,
  };
}

// ---------------------------------------------------------------------------------------------
// One line.

function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  const t = typeof value;
  return t === "object" ? "an object" : t === "string" ? "a string" : t === "number" ? "a number" : t === "boolean" ? "a boolean" : t;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The item on a parsed line, or undefined when the line has errors (each reported). */
function itemOf(value: unknown, line: number, source: JsonLines): DiagnosticItem | undefined {
  if (!isPlainObject(value)) {
    source.report(line, [], "error", `each line must be a JSON object {"id", "ability", "context", "question", "choices", "answer"}; found ${typeName(value)}`);
    return undefined;
  }
  for (const key in value) if (!(DIAGNOSTIC_FIELDS as readonly string[]).includes(key)) unknownFieldWarning(key, line, source);
  let ok = true;
  const fail = (path: JSONPath, message: string): void => {
    source.report(line, path, "error", message);
    ok = false;
  };
  for (const field of REQUIRED_FIELDS) if (!(field in value)) fail([], `missing field \`${field}\`: add ${FIELD_HINTS[field]}`);

  for (const field of ["id", "ability"] as const) {
    const v = value[field];
    if (v === undefined) continue;
    if (typeof v !== "string") fail([field], `\`${field}\` must be a string${typeof v === "number" ? ` (write "${v}")` : ""}; found ${typeName(v)}`);
    else if (v.trim() === "") fail([field], `\`${field}\` is empty: write ${FIELD_HINTS[field]}`);
  }
  for (const field of ["context", "question"] as const) {
    const v = value[field];
    if (v !== undefined && typeof v !== "string") fail([field], `\`${field}\` must be a string (${FIELD_HINTS[field]}); found ${typeName(v)}`);
  }
  const choicesOk = value.choices === undefined || checkChoices(value.choices, fail);
  if (value.answer !== undefined) checkAnswer(value.answer, choicesOk && Array.isArray(value.choices) ? value.choices.length : undefined, fail);
  if (value.meta !== undefined && !isPlainObject(value.meta)) fail(["meta"], `\`meta\` must be an object of extra data; found ${typeName(value.meta)}`);
  if (!ok || value.choices === undefined || value.answer === undefined) return undefined;
  const item = value as unknown as DiagnosticItem;
  return {
    id: item.id, ability: item.ability, context: item.context, question: item.question, choices: item.choices, answer: item.answer,
    ...(item.meta !== undefined ? { meta: item.meta } : {}),
    line,
  };
}

function unknownFieldWarning(key: string, line: number, source: JsonLines): void {
  const suggestion = nearestWord(key, DIAGNOSTIC_FIELDS);
  const hint = suggestion ? `did you mean \`${suggestion}\`? Extra data belongs under \`meta\`` : "put extra data under `meta`";
  source.reportOnce(line, [key], `unknown field \`${key}\`: ${hint}`, "key");
}

/** Reports what is wrong with `choices`; true when they are usable. */
function checkChoices(choices: unknown, fail: (path: JSONPath, message: string) => void): boolean {
  if (!Array.isArray(choices)) {
    fail(["choices"], `\`choices\` must be ${FIELD_HINTS.choices}; found ${typeName(choices)}`);
    return false;
  }
  let ok = true;
  if (choices.length < MIN_CHOICES || choices.length > MAX_CHOICES) {
    fail(["choices"], `\`choices\` has ${choices.length} choice${choices.length === 1 ? "" : "s"}; give between ${MIN_CHOICES} and ${MAX_CHOICES}`);
    ok = false;
  }
  const firstIndexOf = new Map<string, number>();
  for (let i = 0; i < choices.length; i++) {
    const c: unknown = choices[i];
    const problem = typeof c !== "string" ? `choice ${i} must be a string; found ${typeName(c)}` : choiceProblem(c, i, firstIndexOf);
    if (problem === undefined) continue;
    fail(["choices", i], problem);
    ok = false;
  }
  return ok;
}

/** What is wrong with choice `i` (empty, or a repeat of an earlier one), or undefined. */
function choiceProblem(choice: string, i: number, firstIndexOf: Map<string, number>): string | undefined {
  const folded = choice.trim().toLowerCase();
  if (folded === "") return `choice ${i} is empty: write its text`;
  const first = firstIndexOf.get(folded);
  if (first === undefined) firstIndexOf.set(folded, i);
  else return `choice ${i} repeats choice ${first} (ignoring case and surrounding spaces): make every choice different`;
  return undefined;
}

function checkAnswer(answer: unknown, choiceCount: number | undefined, fail: (path: JSONPath, message: string) => void): void {
  if (typeof answer !== "number" || !Number.isInteger(answer)) {
    const hint = typeof answer === "string" ? " (a number, not the choice's text or letter)" : "";
    fail(["answer"], `\`answer\` must be an integer index into \`choices\`, 0 for the first${hint}; found ${typeName(answer)} ${JSON.stringify(answer)}`);
    return;
  }
  if (choiceCount === undefined) return;
  if (answer < 0 || answer >= choiceCount) {
    fail(["answer"], `\`answer\` ${answer} is out of range: with ${choiceCount} choices it must be 0 to ${choiceCount - 1} (0-based)`);
  }
}

// ---------------------------------------------------------------------------------------------
// The file as a whole.

/** Ids must be unique among all lines that have one, whatever else is wrong with them. */
function duplicateIdCheck(value: unknown, line: number, idLines: Map<string, number>, source: JsonLines): void {
  if (!isPlainObject(value) || typeof value.id !== "string" || value.id.trim() === "") return;
  const first = idLines.get(value.id);
  if (first === undefined) idLines.set(value.id, line);
  else source.report(line, ["id"], "error", `duplicate id \`${value.id}\` (first used on line ${first}): give every item its own id`);
}

function abilityNameDiagnostics(items: readonly DiagnosticItem[], source: JsonLines, extra: readonly string[]): void {
  const known = [...PAPER_ABILITIES, ...extra];
  const suggestionFor = new Map<string, string | undefined>();
  for (const item of items) {
    if (!suggestionFor.has(item.ability)) suggestionFor.set(item.ability, nearMissAbility(item.ability, known));
    const suggestion = suggestionFor.get(item.ability);
    if (suggestion === undefined) continue;
    source.reportOnce(
      item.line, ["ability"],
      `ability \`${item.ability}\` is not a known ability: did you mean \`${suggestion}\`? (a new ability is fine; a misspelt one is profiled separately)`,
    );
  }
}

/** Word hashes of every item, laid out item by item: context, question, then choices. */
interface ItemWords {
  words: Uint32Array;
  /** Per item: first context word, first question word, first choice word, end. */
  contextStart: Int32Array;
  questionStart: Int32Array;
  choicesStart: Int32Array;
  end: Int32Array;
}

function itemWordsOf(items: readonly DiagnosticItem[]): ItemWords {
  const buffer = new U32Buffer();
  const [contextStart, questionStart, choicesStart, end] = [0, 0, 0, 0].map(() => new Int32Array(items.length)) as [Int32Array, Int32Array, Int32Array, Int32Array];
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    contextStart[i] = buffer.length;
    appendWordHashes(item.context, buffer);
    questionStart[i] = buffer.length;
    appendWordHashes(item.question, buffer);
    choicesStart[i] = buffer.length;
    for (const c of item.choices) appendWordHashes(c, buffer);
    end[i] = buffer.length;
  }
  return { words: buffer.values, contextStart, questionStart, choicesStart, end };
}

function textDiagnostics(items: readonly DiagnosticItem[], source: JsonLines, options: DiagnosticCheckOptions): void {
  const w = itemWordsOf(items);
  const duplicateOf = exactDuplicates(items, w, source);
  nearDuplicates(items, w, duplicateOf, source);
  const index = options.benchmarkIndex ?? (options.benchmarkTexts && options.benchmarkTexts.length > 0 ? buildBenchmarkIndex(options.benchmarkTexts) : undefined);
  if (index) overlapDiagnostics(items, w, index, source);
}

function sameWords(words: Uint32Array, aFrom: number, aTo: number, bFrom: number, bTo: number): boolean {
  if (aTo - aFrom !== bTo - bFrom) return false;
  for (let k = 0; k < aTo - aFrom; k++) if (words[aFrom + k] !== words[bFrom + k]) return false;
  return true;
}

/** Hash of a word range, as a 53-bit number usable as a Map key. */
function rangeKey(words: Uint32Array, from: number, to: number, split: number): number {
  let [a, b] = [split, ~split];
  for (let k = from; k < to; k++) {
    a = (Math.imul(a, 0x01000193) + words[k]!) | 0;
    b = (Math.imul(b ^ words[k]!, 0x5bd1e995) + 0x6b43a9b5) | 0;
  }
  return (a >>> 0) * 2097152 + (b >>> 11);
}

/**
 * Items whose context and question equal an earlier item's once case, spacing and punctuation are
 * normalised away; returns, per item, the index of the earlier one (or -1).
 */
function exactDuplicates(items: readonly DiagnosticItem[], w: ItemWords, source: JsonLines): Int32Array {
  const duplicateOf = new Int32Array(items.length).fill(-1);
  const firstWithKey = new Map<number, number>();
  for (let i = 0; i < items.length; i++) {
    const [from, split, to] = [w.contextStart[i]!, w.questionStart[i]!, w.choicesStart[i]!];
    if (to === from) continue; // no words at all: nothing to compare
    const key = rangeKey(w.words, from, to, split - from);
    const j = firstWithKey.get(key);
    if (j === undefined) {
      firstWithKey.set(key, i);
      continue;
    }
    const same =
      sameWords(w.words, from, split, w.contextStart[j]!, w.questionStart[j]!) &&
      sameWords(w.words, split, to, w.questionStart[j]!, w.choicesStart[j]!);
    if (!same) continue; // two texts with one 53-bit key: vanishingly rare, and never a false report
    duplicateOf[i] = j;
    source.report(items[i]!.line, ["question"], "warning",
      `duplicate question: the same context and question as line ${items[j]!.line} (ignoring case, spacing and punctuation); remove one of them`);
  }
  return duplicateOf;
}

function nearDuplicates(items: readonly DiagnosticItem[], w: ItemWords, duplicateOf: Int32Array, source: JsonLines): void {
  // Several questions about one shared passage are legitimate (reading comprehension): when the
  // contexts are identical, the questions themselves must be near duplicates.
  const questionSet = (i: number) => shingleSet(w.words, w.questionStart[i]!, w.choicesStart[i]!, SHINGLE_WORDS);
  const accept = (i: number, j: number): boolean =>
    !sameWords(w.words, w.contextStart[i]!, w.questionStart[i]!, w.contextStart[j]!, w.questionStart[j]!) ||
    jaccard(questionSet(i), questionSet(j)) >= NEAR_DUPLICATE_JACCARD;
  const skip = (i: number) => duplicateOf[i] !== -1;
  const pairs = similarSets(w.words, w.contextStart, w.choicesStart, SHINGLE_WORDS, NEAR_DUPLICATE_JACCARD, skip, accept);
  for (const { index, earlier, similarity } of pairs) {
    const percent = Math.floor(similarity * 100);
    source.report(items[index]!.line, ["question"], "warning",
      `near-duplicate question: its context and question share ${percent}% of their word ${SHINGLE_WORDS}-grams with line ${items[earlier]!.line} ` +
      `(Jaccard similarity; ${NEAR_DUPLICATE_JACCARD * 100}% or more counts); rewrite or remove one of them`);
  }
}

/** GPT-3's contamination test: any shared 13-gram with a benchmark document flags the item. */
function overlapDiagnostics(items: readonly DiagnosticItem[], w: ItemWords, index: BenchmarkNgramIndex, source: JsonLines): void {
  const fieldWords = (i: number): string[][] => {
    const item = items[i]!;
    return [item.context, item.question, ...item.choices].map(normalizedWords);
  };
  for (const o of benchmarkOverlaps(index, w.words, w.contextStart, w.end, (i) => fieldWords(i).flat())) {
    const more = o.count > 1 ? ` and ${o.count - 1} more ${index.n}-gram${o.count === 2 ? "" : "s"}` : "";
    source.report(items[o.range]!.line, fieldPathOfWord(fieldWords(o.range), o.start), "warning",
      `possible contamination: shares the ${index.n}-word sequence "${o.ngram}"${more} with benchmark \`${o.benchmark}\` (document ${o.docIndex}) ` +
      `(GPT-3's ${CONTAMINATION_NGRAM}-gram overlap test); an item copied from a benchmark measures recall of that benchmark: rewrite or remove it`);
  }
}

/** The field (context, question or choices[k]) holding the `word`-th word of an item's text. */
function fieldPathOfWord(fieldWords: readonly string[][], word: number): JSONPath {
  let start = 0;
  for (let f = 0; f < fieldWords.length; f++) {
    start += fieldWords[f]!.length;
    if (word < start) return f === 0 ? ["context"] : f === 1 ? ["question"] : ["choices", f - 2];
  }
  return ["context"];
}
