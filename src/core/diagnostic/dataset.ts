// Diagnostic datasets (`*.diag.jsonl`): one multiple-choice item a line, each exercising one
// ability (the paper's phase 1). Checks every line (JSON; the item's fields, types and ranges:
// item.ts), the file as a whole (duplicate ids, duplicate and near-duplicate questions:
// nearDuplicates.ts; ability names), its statistical health (health.ts) and its overlap with the
// profile's benchmarks (contamination.ts).
//
// Speed matters because an editor re-checks the file as the user types. A checker keeps, for
// every distinct line text, what that line alone gives (its item, its problems, its word hashes,
// its shingles, its overlaps with the benchmarks): after an edit only the changed lines are
// parsed and hashed again, and the file-wide passes (duplicates, near duplicates, health) run
// over the kept facts. Source positions (jsonc-parser) are computed only for lines that get a
// problem.
import { findNodeAtLocation, parseTree, type JSONPath, type Node } from "jsonc-parser";
import { nearMissAbility, PAPER_ABILITIES } from "./paperAbilities";
import { diskFiles, type TextFiles } from "../base/fsutil";
import { fileProblem, notUtf8Problem, problemAt, type Problem, type ProblemCode, type ProblemData } from "../base/problems";
import { formatFieldPath } from "../base/yamlSource";
import { healthProblems, type MeasuredStability } from "./health";
import { isBlankLine, jsonlLines, parseJsonlLine, type JsonSyntaxError } from "./jsonl";
import {
  benchmarkOverlaps,
  buildBenchmarkIndex,
  CONTAMINATION_NGRAM,
  type BenchmarkNgramIndex,
  type BenchmarkText,
  type NgramOverlap,
} from "./contamination";
import { jaccard, joinSimilarSets, prefixKeys, shingleOrder, shingleSet, type ShingleOrder } from "./nearDuplicates";
import { appendWordHashes, normalizedWords, U32Buffer } from "./wordHashes";
import { isPlainObject, itemOf, placedItem, type DiagnosticItem, type DiagnosticItemFields } from "./item";
import { isAuthorsItem, reportAuthorsItem } from "./authorsFormat";

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
  /** Per ability, a run's measurement of its ranking's stability, which replaces the count's rule of thumb. */
  measured?: ReadonlyMap<string, MeasuredStability>;
  /** Ability names known besides the paper's (e.g. those the profile declares), for near-miss warnings. */
  abilities?: readonly string[];
}

export interface DiagnosticDatasetCheck {
  /** The items without errors, in file order. */
  items: DiagnosticItem[];
  problems: Problem[];
}

/** Reads and checks a diagnostic dataset (from disk, or from the editor's buffer through `files`). */
export async function loadDiagnosticDataset(
  file: string,
  options: DiagnosticCheckOptions = {},
  files: TextFiles = diskFiles,
): Promise<DiagnosticDatasetCheck> {
  let text: string;
  try {
    text = await files.read(file);
  } catch (e) {
    const reason = e instanceof Error ? e.message : String(e);
    return {
      items: [],
      problems: [
        notUtf8Problem(file, e, "the diagnostic dataset") ??
          fileProblem(file, "file.unreadable", `cannot read the diagnostic dataset: ${reason}`),
      ],
    };
  }
  return checkDiagnosticDataset(file, text, options);
}

/** Checks the text of a diagnostic dataset once (a saved file or an editor's unsaved buffer). */
export function checkDiagnosticDataset(file: string, text: string, options: DiagnosticCheckOptions = {}): DiagnosticDatasetCheck {
  return new DiagnosticDatasetChecker(file).check(text, options);
}

// ---------------------------------------------------------------------------------------------
// What one line says on its own, wherever it stands in the file.

/** A problem of one line, positioned within it (0-based columns); the line number comes later. */
interface LineProblem {
  code: ProblemCode;
  message: string;
  start: number;
  end: number;
  path: JSONPath;
  data?: ProblemData;
  /** Shown once per file however many lines have it (an unknown field in every item). */
  once?: boolean;
}

/** Word hashes of an item: its context, then its question, then its choices. */
interface ItemWords {
  words: Uint32Array;
  questionStart: number;
  choicesStart: number;
}

/** One buffer for every line's words, copied out once complete: a fresh buffer per line is 4 KB of garbage per item. */
const wordScratch = new U32Buffer();

class LineFacts {
  readonly problems: LineProblem[] = [];
  /** The line's non-empty string id, checked for repeats even when the item has errors. */
  id?: string;
  item?: DiagnosticItemFields;
  private tree?: Node | null;
  private itemWords?: ItemWords;
  private duplicateKey?: number;
  private shingles?: Uint32Array;
  private questionShingles?: Uint32Array;
  private prefixFor?: { order: ShingleOrder; keys: Float64Array };
  private overlapsFor?: { index: BenchmarkNgramIndex; overlaps: NgramOverlap[] };
  private placed?: DiagnosticItem;

  constructor(readonly text: string) {}

  /** The item at `line` (the same object while the line does not move). */
  itemAt(line: number): DiagnosticItem {
    if (this.placed?.line !== line) this.placed = placedItem(this.item!, line);
    return this.placed;
  }

  /** The 0-based [start, end) of the value (or key) at `path`, or of the whole line. */
  place(path: JSONPath, on: "value" | "key" = "value"): [number, number] {
    if (this.tree === undefined) this.tree = parseTree(this.text) ?? null;
    const root = this.tree ?? undefined;
    const node = (root && findNodeAtLocation(root, path)) ?? root;
    const target = on === "key" && node?.parent?.type === "property" ? node.parent.children![0]! : node;
    return target ? [target.offset, target.offset + target.length] : [0, this.text.length];
  }

  report(
    path: JSONPath,
    code: ProblemCode,
    message: string,
    options: { on?: "value" | "key"; data?: ProblemData; once?: boolean } = {},
  ): void {
    const [start, end] = this.place(path, options.on);
    this.problems.push({
      code,
      message,
      start,
      end,
      path,
      ...(options.data ? { data: options.data } : {}),
      ...(options.once ? { once: true } : {}),
    });
  }

  words(): ItemWords {
    if (!this.itemWords) {
      const item = this.item!;
      const buffer = wordScratch;
      buffer.clear();
      appendWordHashes(item.context, buffer);
      const questionStart = buffer.length;
      appendWordHashes(item.question, buffer);
      const choicesStart = buffer.length;
      for (const c of item.choices) appendWordHashes(c, buffer);
      this.itemWords = { words: buffer.values.slice(0, buffer.length), questionStart, choicesStart };
    }
    return this.itemWords;
  }

  /** A hash of the context's and question's words, apart: equal for duplicates (and, rarely, for others). */
  textKey(): number {
    if (this.duplicateKey === undefined) {
      const w = this.words();
      this.duplicateKey = rangeKey(w.words, 0, w.choicesStart, w.questionStart);
    }
    return this.duplicateKey;
  }

  /** The prefix of `textShingles` under `order`, for the near-duplicate join. */
  prefix(order: ShingleOrder): Float64Array {
    if (this.prefixFor?.order !== order) this.prefixFor = { order, keys: prefixKeys(this.textShingles(), order, NEAR_DUPLICATE_JACCARD) };
    return this.prefixFor.keys;
  }

  /** Shingles of the context and question together: what near duplicates are judged on. */
  textShingles(): Uint32Array {
    const w = this.words();
    return (this.shingles ??= shingleSet(w.words, 0, w.choicesStart, SHINGLE_WORDS));
  }

  questionOnlyShingles(): Uint32Array {
    const w = this.words();
    return (this.questionShingles ??= shingleSet(w.words, w.questionStart, w.choicesStart, SHINGLE_WORDS));
  }

  overlaps(index: BenchmarkNgramIndex): NgramOverlap[] {
    if (this.overlapsFor?.index !== index) {
      const w = this.words();
      const item = this.item!;
      const wordsOf = () => [item.context, item.question, ...item.choices].flatMap(normalizedWords);
      const overlaps = benchmarkOverlaps(index, w.words, wordsOf);
      this.overlapsFor = { index, overlaps };
    }
    return this.overlapsFor.overlaps;
  }
}

/** The item on one line of a dataset, when the line holds a valid one. */
export function diagnosticItemOfLine(raw: string, line: number): DiagnosticItem | undefined {
  const item = isBlankLine(raw) ? undefined : factsOf(raw).item;
  return item ? placedItem(item, line) : undefined;
}

function factsOf(text: string): LineFacts {
  const facts = new LineFacts(text);
  const parsed = parseJsonlLine(text);
  if ("error" in parsed) {
    facts.problems.push(jsonSyntaxProblem(parsed.error));
    return facts;
  }
  const value = parsed.value;
  if (isPlainObject(value) && typeof value.id === "string" && value.id.trim() !== "") facts.id = value.id;
  // the paper's released code writes its items another way: said so, with what they convert to
  if (isPlainObject(value) && isAuthorsItem(value)) {
    reportAuthorsItem(value, (path, code, message, options) => facts.report(path, code, message, options));
    return facts;
  }
  const item = itemOf(value, facts);
  if (item) facts.item = item;
  return facts;
}

// ---------------------------------------------------------------------------------------------
// The file as a whole.

/**
 * Checks one dataset file again and again (an editor's buffer as the user types): each check
 * reuses the facts of every line whose text was in the previous check. Lines before and after the
 * edited region are matched by position (no hashing of their text); lines inside it by text, so
 * moved lines keep their facts too.
 */
export class DiagnosticDatasetChecker {
  private lines: string[] = [];
  private facts: (LineFacts | undefined)[] = [];
  /** The near-duplicate join's order, kept while the file stays close to the one it was counted on. */
  private order?: { order: ShingleOrder; linesChanged: number };

  constructor(readonly file: string) {}

  check(text: string, options: DiagnosticCheckOptions = {}): DiagnosticDatasetCheck {
    const lines = jsonlLines(text);
    const facts = this.reuse(lines);
    const fileCheck = new FileCheck(this.file, facts, options, (sets) => this.orderFor(sets));
    this.lines = lines;
    this.facts = facts;
    return fileCheck.run();
  }

  private reuse(lines: readonly string[]): (LineFacts | undefined)[] {
    const [old, oldFacts] = [this.lines, this.facts];
    let head = 0;
    while (head < lines.length && head < old.length && lines[head] === old[head]) head++;
    let tail = 0;
    while (tail < lines.length - head && tail < old.length - head && lines[lines.length - 1 - tail] === old[old.length - 1 - tail]) tail++;
    // Hashing every line's text costs more than a first check saves by it: only an edit has old lines to find.
    const byText = old.length - tail > head ? new Map<string, LineFacts>() : undefined;
    for (let i = head; i < old.length - tail; i++) if (oldFacts[i]) byText!.set(old[i]!, oldFacts[i]!);
    const facts: (LineFacts | undefined)[] = new Array(lines.length);
    for (let i = 0; i < lines.length; i++) {
      const raw = lines[i]!;
      if (i < head) facts[i] = oldFacts[i];
      else if (i >= lines.length - tail) facts[i] = oldFacts[old.length - (lines.length - i)];
      else if (!isBlankLine(raw)) {
        let f = byText?.get(raw);
        if (!f) {
          f = factsOf(raw);
          byText?.set(raw, f);
        }
        facts[i] = f;
      }
    }
    if (this.order) this.order.linesChanged += lines.length - head - tail;
    return facts;
  }

  /** The kept order, or a new one counted on `sets` once a tenth of the lines has changed. */
  private orderFor(sets: () => readonly Uint32Array[]): ShingleOrder {
    if (!this.order || this.order.linesChanged * 10 > this.lines.length) this.order = { order: shingleOrder(sets()), linesChanged: 0 };
    return this.order.order;
  }
}

/** One check of a file's lines, with their facts. */
class FileCheck {
  private readonly problems: Problem[] = [];
  /** Warnings shown once per file, with how many more lines have them. */
  private readonly repeated = new Map<string, { problem: Problem; more: number }>();
  /** The items without errors, and the facts of each one's line. */
  private readonly items: DiagnosticItem[] = [];
  private readonly itemFacts: LineFacts[] = [];

  constructor(
    private readonly file: string,
    private readonly lineFacts: readonly (LineFacts | undefined)[],
    private readonly options: DiagnosticCheckOptions,
    private readonly orderFor: (sets: () => readonly Uint32Array[]) => ShingleOrder = (sets) => shingleOrder(sets()),
  ) {}

  run(): DiagnosticDatasetCheck {
    this.lineProblems();
    if (!this.lineFacts.some(Boolean)) {
      this.problems.push(fileProblem(this.file, "diag.empty-dataset", "the dataset has no items: write one JSON object per line"));
    }
    this.abilityNames();
    const duplicateOf = this.exactDuplicates();
    this.nearDuplicates(duplicateOf);
    this.overlaps();
    const at = (item: { line: number }, field: string, code: ProblemCode, message: string, data?: ProblemData) =>
      this.at(item.line, this.lineFacts[item.line - 1]!, [field], code, message, data ? { data } : {});
    this.problems.push(
      ...healthProblems(this.file, this.items, at, {
        ...(this.options.minItems === undefined ? {} : { minItems: this.options.minItems }),
        ...(this.options.measured ? { measured: this.options.measured } : {}),
      }),
    );
    const once = [...this.repeated.values()].map(({ problem, more }) =>
      more === 0 ? problem : { ...problem, message: `${problem.message} (also on ${more} more line${more === 1 ? "" : "s"})` },
    );
    return { items: this.items, problems: [...this.problems, ...once].sort((a, b) => a.line - b.line || a.column - b.column) };
  }

  private at(
    line: number,
    facts: LineFacts,
    path: JSONPath,
    code: ProblemCode,
    message: string,
    options: { on?: "value" | "key"; data?: ProblemData } = {},
  ): Problem {
    const [start, end] = facts.place(path, options.on);
    return this.problemOnLine(line, { code, message, start, end, path, ...(options.data ? { data: options.data } : {}) });
  }

  private problemOnLine(line: number, p: LineProblem): Problem {
    const place = {
      file: this.file,
      line,
      column: p.start + 1,
      endLine: line,
      endColumn: Math.max(p.end, p.start + 1) + 1,
      ...(p.path.length > 0 ? { field: formatFieldPath(p.path) } : {}),
    };
    return problemAt(place, p.code, p.message, p.data);
  }

  private reportOnce(problem: Problem): void {
    const seen = this.repeated.get(problem.message);
    if (seen) seen.more++;
    else this.repeated.set(problem.message, { problem, more: 0 });
  }

  /** Each line's own problems, the items, and ids used twice. */
  private lineProblems(): void {
    const idLines = new Map<string, number>();
    this.lineFacts.forEach((facts, index) => {
      if (!facts) return;
      const line = index + 1;
      for (const p of facts.problems) {
        const problem = this.problemOnLine(line, p);
        if (p.once) this.reportOnce(problem);
        else this.problems.push(problem);
      }
      if (facts.id !== undefined) {
        const first = idLines.get(facts.id);
        if (first === undefined) idLines.set(facts.id, line);
        else {
          this.problems.push(
            this.at(
              line,
              facts,
              ["id"],
              "diag.duplicate-id",
              `duplicate id \`${facts.id}\` (first used on line ${first}): give every item its own id`,
              { data: { otherLine: first } },
            ),
          );
        }
      }
      if (facts.item) {
        this.items.push(facts.itemAt(line));
        this.itemFacts.push(facts);
      }
    });
  }

  private abilityNames(): void {
    const known = [...PAPER_ABILITIES, ...(this.options.abilities ?? [])];
    const suggestionFor = new Map<string, string | undefined>();
    this.items.forEach((item, i) => {
      if (!suggestionFor.has(item.ability)) suggestionFor.set(item.ability, nearMissAbility(item.ability, known));
      const suggestion = suggestionFor.get(item.ability);
      if (suggestion === undefined) return;
      this.reportOnce(
        this.at(
          item.line,
          this.itemFacts[i]!,
          ["ability"],
          "diag.unknown-ability",
          `ability \`${item.ability}\` is not a known ability: did you mean \`${suggestion}\`? (a new ability is fine; a misspelt one is profiled separately)`,
          { data: { suggestion } },
        ),
      );
    });
  }

  /**
   * Items whose context and question equal an earlier item's once case, spacing and punctuation are
   * normalised away; returns, per item, the index of the earlier one (or -1).
   */
  private exactDuplicates(): Int32Array {
    const duplicateOf = new Int32Array(this.items.length).fill(-1);
    const firstWithKey = new Map<number, number>();
    this.itemFacts.forEach((facts, i) => {
      const w = facts.words();
      if (w.choicesStart === 0) return; // no words at all: nothing to compare
      const key = facts.textKey();
      const j = firstWithKey.get(key);
      if (j === undefined) {
        firstWithKey.set(key, i);
        return;
      }
      const o = this.itemFacts[j]!.words();
      const same = w.questionStart === o.questionStart && sameWords(w.words, 0, w.choicesStart, o.words, 0, o.choicesStart);
      if (!same) return; // two texts with one 53-bit key: vanishingly rare, and never a false report
      duplicateOf[i] = j;
      const other = this.items[j]!.line;
      this.problems.push(
        this.at(
          this.items[i]!.line,
          facts,
          ["question"],
          "diag.duplicate",
          `duplicate question: the same context and question as line ${other} (ignoring case, spacing and punctuation); remove one of them`,
          { data: { otherLine: other } },
        ),
      );
    });
    return duplicateOf;
  }

  private nearDuplicates(duplicateOf: Int32Array): void {
    const sets = this.itemFacts.map((facts, i) => (duplicateOf[i] !== -1 ? EMPTY : facts.textShingles()));
    // Several questions about one shared passage are legitimate (reading comprehension): when the
    // contexts are identical, the questions themselves must be near duplicates.
    const accept = (i: number, j: number): boolean => {
      const [a, b] = [this.itemFacts[i]!, this.itemFacts[j]!];
      const [wa, wb] = [a.words(), b.words()];
      return (
        !sameWords(wa.words, 0, wa.questionStart, wb.words, 0, wb.questionStart) ||
        jaccard(a.questionOnlyShingles(), b.questionOnlyShingles()) >= NEAR_DUPLICATE_JACCARD
      );
    };
    const order = this.orderFor(() => sets);
    for (const { index, earlier, similarity } of joinSimilarSets(sets, NEAR_DUPLICATE_JACCARD, accept, (i) =>
      this.itemFacts[i]!.prefix(order),
    )) {
      const percent = Math.floor(similarity * 100);
      const other = this.items[earlier]!.line;
      this.problems.push(
        this.at(
          this.items[index]!.line,
          this.itemFacts[index]!,
          ["question"],
          "diag.near-duplicate",
          `near-duplicate question: its context and question share ${percent}% of their word ${SHINGLE_WORDS}-grams with line ${other} ` +
            `(Jaccard similarity; ${NEAR_DUPLICATE_JACCARD * 100}% or more counts); rewrite or remove one of them`,
          { data: { otherLine: other } },
        ),
      );
    }
  }

  /** GPT-3's contamination test: any shared 13-gram with a benchmark document flags the item. */
  private overlaps(): void {
    const index =
      this.options.benchmarkIndex ??
      (this.options.benchmarkTexts && this.options.benchmarkTexts.length > 0
        ? buildBenchmarkIndex(this.options.benchmarkTexts)
        : undefined);
    if (!index) return;
    this.itemFacts.forEach((facts, i) => {
      const item = this.items[i]!;
      for (const o of facts.overlaps(index)) {
        const fieldWords = [item.context, item.question, ...item.choices].map(normalizedWords);
        const more = o.count > 1 ? ` and ${o.count - 1} more ${index.n}-gram${o.count === 2 ? "" : "s"}` : "";
        this.problems.push(
          this.at(
            item.line,
            facts,
            fieldPathOfWord(fieldWords, o.start),
            "diag.contamination",
            `possible contamination: shares the ${index.n}-word sequence "${o.ngram}"${more} with benchmark \`${o.benchmark}\` (document ${o.docIndex}) ` +
              `(GPT-3's ${CONTAMINATION_NGRAM}-gram overlap test); an item copied from a benchmark measures recall of that benchmark: rewrite or remove it`,
          ),
        );
      }
    });
  }
}

const EMPTY = new Uint32Array(0);

function sameWords(a: Uint32Array, aFrom: number, aTo: number, b: Uint32Array, bFrom: number, bTo: number): boolean {
  if (aTo - aFrom !== bTo - bFrom) return false;
  for (let k = 0; k < aTo - aFrom; k++) if (a[aFrom + k] !== b[bFrom + k]) return false;
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

/** The field (context, question or choices[k]) holding the `word`-th word of an item's text. */
function fieldPathOfWord(fieldWords: readonly string[][], word: number): JSONPath {
  let start = 0;
  for (let f = 0; f < fieldWords.length; f++) {
    start += fieldWords[f]!.length;
    if (word < start) return f === 0 ? ["context"] : f === 1 ? ["question"] : ["choices", f - 2];
  }
  return ["context"];
}

/** A line JSON.parse refused (or that nests too deep to parse), positioned within the line. */
function jsonSyntaxProblem(error: JsonSyntaxError): LineProblem {
  return {
    code: error.tooDeep ? "json.too-deep" : "diag.syntax",
    message: error.tooDeep
      ? `the line is ${error.reason}; an item is one JSON object of strings, a list of strings and a number`
      : `invalid JSON: ${error.reason}; each line must be one complete JSON object`,
    start: error.start,
    end: error.end,
    path: [],
  };
}
