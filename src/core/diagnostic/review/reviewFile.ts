// A diagnostic dataset's review: the sidecar file `<name>.review.jsonl` beside `<name>.diag.jsonl`,
// one JSON object a line. People's decisions never go into the dataset itself, so a review can be
// redone, shared or thrown away without touching the items, and a second reviewer's file sits
// beside the first (`<name>.<reviewer>.review.jsonl`, any name ending in .review.jsonl).
//
//   {"sample": {"seed": 1, "n": 200, "ids": ["quant-1-0007", ...]}, "time": "..."}   at most one, first
//   {"id": "quant-1-0007", "hash": "9c1e...", "decision": "accept", "reviewer": "ana", "time": "..."}
//   {"id": "quant-1-0012", "hash": "...", "decision": "correct", "answer": 2, "note": "...", ...}
//
// `hash` is of the item's content as it was reviewed (itemHash): an item edited since is open
// again. One line per item: deciding again replaces the line.
import { createHash } from "node:crypto";
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { formatProblem, problemAt, type Problem } from "../../base/problems";
import { isFile, writeFileAtomic, type TextFiles } from "../../base/fsutil";
import { isBlankLine, jsonlLines, parseJsonlLine } from "../jsonl";
import { isPlainObject, type DiagnosticItemFields } from "../item";

export const REVIEW_DECISIONS = ["accept", "reject", "correct", "flag"] as const;
/** accept: the item and its answer are right; reject: leave it out; correct: the right answer is another choice; flag: undecided, with a note. */
export type ReviewDecisionKind = (typeof REVIEW_DECISIONS)[number];

export interface ReviewDecision {
  id: string;
  hash: string;
  decision: ReviewDecisionKind;
  /** The right choice (0-based), for `correct`. */
  answer?: number;
  note?: string;
  reviewer?: string;
  /** ISO 8601. */
  time?: string;
  /** 1-based line in the review file (0 for a decision not yet written). */
  line: number;
}

/** A random sample of the dataset to review (review/sample.ts): label accuracy is estimated on it. */
export interface ReviewSample {
  seed: number;
  n: number;
  ids: string[];
  time?: string;
}

export interface ReviewFile {
  sample?: ReviewSample;
  /** By item id, in the order they were first decided. */
  decisions: Map<string, ReviewDecision>;
}

export interface ParsedReviewFile {
  review: ReviewFile;
  problems: Problem[];
}

/** The review file of a dataset: `x.diag.jsonl` -> `x.review.jsonl` (any other name: `<name>.review.jsonl`). */
export function reviewFileOf(dataset: string): string {
  const base = dataset.endsWith(".diag.jsonl") ? dataset.slice(0, -".diag.jsonl".length) : dataset.replace(/\.jsonl$/, "");
  return `${base}.review.jsonl`;
}

export function isReviewFile(file: string): boolean {
  return path.basename(file).endsWith(".review.jsonl");
}

/**
 * What a decision is bound to: the item's ability, context, question, choices and answer (not its
 * id, which keys the decision, nor `meta`, which is extra data). 16 hex digits of SHA-256.
 */
export function itemHash(item: Pick<DiagnosticItemFields, "ability" | "context" | "question" | "choices" | "answer">): string {
  const content = JSON.stringify([item.ability, item.context, item.question, item.choices, item.answer]);
  return createHash("sha256").update(content).digest("hex").slice(0, 16);
}

/** SHA-256 of a review file's text, as results.json records it. */
export function reviewTextHash(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

export function emptyReview(): ReviewFile {
  return { decisions: new Map() };
}

/** Reads a review file's text; a line that is not a decision or a sample is a problem at that line, and is skipped. */
export function parseReviewFile(file: string, text: string): ParsedReviewFile {
  const review = emptyReview();
  const problems: Problem[] = [];
  const bad = (line: number, message: string) =>
    problems.push(problemAt({ file, line, column: 1 }, "review.invalid-record", `${path.basename(file)} line ${line}: ${message}`));
  jsonlLines(text).forEach((raw, i) => {
    const line = i + 1;
    if (isBlankLine(raw)) return;
    const parsed = parseJsonlLine(raw);
    if ("error" in parsed) return bad(line, `not JSON (${parsed.error.reason})`);
    const value = parsed.value;
    if (!isPlainObject(value)) return bad(line, "each line must be a JSON object: a decision or the sample");
    if ("sample" in value) {
      const sample = sampleOf(value.sample);
      if (typeof sample === "string") return bad(line, sample);
      if (review.sample) return bad(line, "a second `sample`: a review file has one");
      review.sample = { ...sample, ...(typeof value.time === "string" ? { time: value.time } : {}) };
      return;
    }
    const decision = decisionOf(value, line);
    if (typeof decision === "string") return bad(line, decision);
    // a later line for the same item is a later decision (an append by another tool): it wins
    review.decisions.delete(decision.id);
    review.decisions.set(decision.id, decision);
  });
  return { review, problems };
}

function sampleOf(value: unknown): Omit<ReviewSample, "time"> | string {
  if (!isPlainObject(value)) return "`sample` must be an object {seed, n, ids}";
  const { seed, n, ids } = value;
  if (typeof seed !== "number" || !Number.isInteger(seed)) return "`sample.seed` must be an integer";
  if (!Array.isArray(ids) || !ids.every((id) => typeof id === "string")) return "`sample.ids` must be an array of item ids";
  return { seed, n: typeof n === "number" && Number.isInteger(n) ? n : ids.length, ids: ids as string[] };
}

function decisionOf(value: Record<string, unknown>, line: number): ReviewDecision | string {
  const { id, hash, decision, answer, note, reviewer, time } = value;
  if (typeof id !== "string" || id === "") return "`id` must be the item's id (a string)";
  if (typeof hash !== "string" || hash === "") return `\`hash\` of item ${id} must be a string`;
  if (typeof decision !== "string" || !(REVIEW_DECISIONS as readonly string[]).includes(decision))
    return `\`decision\` of item ${id} must be one of ${REVIEW_DECISIONS.join(", ")}; found ${JSON.stringify(decision)}`;
  if (decision === "correct" && (typeof answer !== "number" || !Number.isInteger(answer) || answer < 0))
    return `item ${id} is corrected without \`answer\`, the 0-based index of the right choice`;
  for (const [key, v] of Object.entries({ note, reviewer, time }))
    if (v !== undefined && typeof v !== "string") return `\`${key}\` of item ${id} must be a string`;
  return {
    id,
    hash,
    decision: decision as ReviewDecisionKind,
    ...(decision === "correct" ? { answer: answer as number } : {}),
    ...(typeof note === "string" && note !== "" ? { note } : {}),
    ...(typeof reviewer === "string" ? { reviewer } : {}),
    ...(typeof time === "string" ? { time } : {}),
    line,
  };
}

/** The review as its file's text: the sample first, then one line per decision. */
export function reviewFileText(review: ReviewFile): string {
  const lines: string[] = [];
  if (review.sample) {
    const { time, ...sample } = review.sample;
    lines.push(JSON.stringify({ sample, ...(time ? { time } : {}) }));
  }
  for (const d of review.decisions.values()) {
    const { line: _line, ...fields } = d;
    lines.push(JSON.stringify(fields));
  }
  return lines.map((l) => l + "\n").join("");
}

/** Writes the review whole (a temporary beside it, then a rename): a crash mid-write leaves the old file. */
export async function writeReviewFile(file: string, review: ReviewFile): Promise<void> {
  await writeFileAtomic(file, reviewFileText(review));
}

/** The review with `decision` recorded for its item (replacing an earlier one), as a new object. */
export function withDecision(review: ReviewFile, decision: Omit<ReviewDecision, "line">): ReviewFile {
  const decisions = new Map(review.decisions);
  decisions.delete(decision.id);
  decisions.set(decision.id, { ...decision, line: 0 });
  return { ...review, decisions };
}

/** The review without a decision for `id` (undo). */
export function withoutDecision(review: ReviewFile, id: string): ReviewFile {
  const decisions = new Map(review.decisions);
  decisions.delete(id);
  return { ...review, decisions };
}

export interface LoadedReview extends ParsedReviewFile {
  file: string;
  /** SHA-256 of the file's text (reviewTextHash). */
  sha256: string;
}

/** The review file of a dataset, read and parsed; undefined when there is none. An unreadable one is a problem. */
export async function loadReviewOf(dataset: string, files: TextFiles): Promise<LoadedReview | undefined> {
  const file = reviewFileOf(dataset);
  if (!(await isFile(file))) return undefined;
  let text: string;
  try {
    text = await files.read(file);
  } catch (e) {
    const problem = problemAt(
      { file, line: 1, column: 1 },
      "review.invalid-record",
      `cannot read the review file: ${(e as Error).message}`,
    );
    return { file, sha256: "", review: emptyReview(), problems: [problem] };
  }
  return { file, sha256: reviewTextHash(text), ...parseReviewFile(file, text) };
}

/** A review file with lines that do not read: rewriting it (a new decision) would drop them. */
export class ReviewFileError extends Error {}

/**
 * A review file as it is on disk, to record a decision in and write back; undefined when there is
 * none yet. One with a line that does not read is refused (ReviewFileError, each line's problem):
 * writing the review would drop that line.
 */
export async function readWholeReview(file: string): Promise<ReviewFile | undefined> {
  let text: string;
  try {
    text = await fs.readFile(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new ReviewFileError(`cannot read ${file}: ${(e as Error).message}`);
  }
  const { review, problems } = parseReviewFile(file, text);
  if (problems.length > 0)
    throw new ReviewFileError(
      `${problems.map(formatProblem).join("\n")}\nfix or remove ${problems.length === 1 ? "that line" : `those ${problems.length} lines`} of ${path.basename(file)} first: writing the review would drop them`,
    );
  return review;
}
