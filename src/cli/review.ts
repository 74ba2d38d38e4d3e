// `bprof review`: a diagnostic dataset's review, headless. `sample` draws the random sample a
// label-accuracy estimate is made on (into the review file, whose decisions stay); `stats` prints
// the labels' accuracy per ability and overall; `agree` compares two reviewers.
import * as path from "node:path";
import { errorsOf, formatProblem } from "../core/base/problems";
import { loadDiagnosticDataset } from "../core/diagnostic/dataset";
import type { DiagnosticItem } from "../core/diagnostic/item";
import {
  emptyReview,
  readWholeReview,
  reviewFileOf,
  ReviewFileError,
  writeReviewFile,
  type ReviewDecision,
  type ReviewFile,
} from "../core/diagnostic/review/reviewFile";
import { sampleForReview } from "../core/diagnostic/review/sample";
import { reviewAgreement, reviewSummary, type LabelAccuracy } from "../core/analysis/labelAccuracy";
import { formatFixed } from "../core/report/format";

export const REVIEW_USAGE = `  review sample <data.diag.jsonl> --n N [--seed S]
                                 draw N items to review at random, each ability its share (seed
                                 default 1), into the dataset's review file <name>.review.jsonl
  review stats <data.diag.jsonl> [--review FILE]
                                 the labels' accuracy, per ability and overall: the share of the
                                 reviewed labels found right, with a 95% Wilson interval (on the
                                 sample where the review has one), and what is left to review
  review agree <data.diag.jsonl> <a.review.jsonl> <b.review.jsonl>
                                 two reviewers' agreement: Cohen's kappa per ability and overall,
                                 and each item they judged differently, with both decisions
`;

export interface ReviewArgs {
  n?: string;
  seed?: string;
  review?: string;
}

class ReviewInputError extends Error {}

/** Runs `bprof review <action> ...`; returns the exit code (0 ok, 2 bad input). */
export async function reviewCommand(positionals: readonly string[], args: ReviewArgs): Promise<number> {
  const [action, dataset, ...rest] = positionals;
  try {
    if (action === "sample" && dataset && rest.length === 0) return await sample(dataset, args);
    if (action === "stats" && dataset && rest.length === 0) return await stats(dataset, args.review);
    if (action === "agree" && dataset && rest.length === 2) return await agree(dataset, rest[0]!, rest[1]!);
    throw new ReviewInputError(
      action === undefined || !["sample", "stats", "agree"].includes(action)
        ? `review needs an action, sample, stats or agree${action ? `; got \`${action}\`` : ""}`
        : action === "agree"
          ? "review agree needs the dataset and two review files"
          : `review ${action} needs one dataset (*.diag.jsonl)`,
    );
  } catch (e) {
    if (!(e instanceof ReviewInputError)) throw e;
    process.stderr.write(`bprof review: ${e.message}\n`);
    return 2;
  }
}

async function sample(dataset: string, args: ReviewArgs): Promise<number> {
  const n = wholeNumber(args.n, "--n", 1);
  if (n === undefined)
    throw new ReviewInputError("review sample needs --n, the number of items to review (the paper checked 200 per ability)");
  const seed = wholeNumber(args.seed, "--seed", 0) ?? 1;
  const items = await datasetItems(dataset);
  const file = reviewFileOf(path.resolve(dataset));
  const review = await readReview(file, true);
  const drawn = sampleForReview(items, n, seed);
  if (review.sample && !(review.sample.seed === drawn.seed && sameIds(review.sample.ids, drawn.ids)))
    throw new ReviewInputError(
      `${path.basename(file)} has a sample already (${review.sample.ids.length} items, seed ${review.sample.seed}): its accuracy is measured on it; delete its "sample" line to draw another`,
    );
  await writeReviewFile(file, { ...review, sample: { ...drawn, time: review.sample?.time ?? new Date().toISOString() } });
  const perAbility = countBy(items.filter((i) => new Set(drawn.ids).has(i.id)).map((i) => i.ability));
  process.stdout.write(
    `${drawn.ids.length} of ${items.length} items to review (seed ${seed}) -> ${file}\n` +
      [...perAbility].map(([ability, count]) => `  ${ability}: ${count}\n`).join(""),
  );
  return 0;
}

async function stats(dataset: string, reviewFile?: string): Promise<number> {
  const items = await datasetItems(dataset);
  const file = path.resolve(reviewFile ?? reviewFileOf(path.resolve(dataset)));
  const review = await readReview(file, false);
  const summary = reviewSummary(items, review);
  const scope = summary.sample
    ? `a random sample of ${summary.sample.n} items (seed ${summary.sample.seed})`
    : `every reviewed item (no random sample: the figure holds for the items reviewed, not the dataset)`;
  const rows = [...summary.abilities, ...(summary.abilities.length > 1 ? [summary.overall] : [])];
  const lines = [
    `${path.basename(dataset)}: ${path.basename(file)}, on ${scope}`,
    ...table(
      ["ability", "in scope", "reviewed", "right", "accuracy", "95% CI", "rejected", "corrected", "open", "flagged", "changed"],
      rows.map(statsRow),
    ),
    ...(summary.unknownIds.length > 0
      ? [
          `${summary.unknownIds.length} decisions are for ids the dataset has not (deleted or renamed since): ${summary.unknownIds.slice(0, 5).join(", ")}${summary.unknownIds.length > 5 ? ", ..." : ""}`,
        ]
      : []),
  ];
  process.stdout.write(lines.join("\n") + "\n");
  return 0;
}

function statsRow(a: LabelAccuracy): string[] {
  const p = a.accuracy;
  return [
    a.ability,
    String(a.items),
    String(p.n),
    String(p.k),
    p.rate === null ? "-" : `${formatFixed(p.rate * 100, 1)}%`,
    p.low === null ? "-" : `${formatFixed(p.low * 100, 1)}-${formatFixed(p.high! * 100, 1)}%`,
    String(a.counts.rejected),
    String(a.counts.corrected),
    String(a.counts.open),
    String(a.counts.flagged),
    String(a.counts.changed),
  ];
}

async function agree(dataset: string, fileA: string, fileB: string): Promise<number> {
  const items = await datasetItems(dataset);
  const a = await readReview(path.resolve(fileA), false);
  const b = await readReview(path.resolve(fileB), false);
  const agreement = reviewAgreement(items, a, b);
  const kappa = (k: { kappa: number | null; observed: number | null; expected: number | null }) =>
    k.kappa === null
      ? k.observed === null
        ? ["-", "-", "-"]
        : [`${formatFixed(k.observed * 100, 1)}%`, `${formatFixed(k.expected! * 100, 1)}%`, "- (one decision throughout)"]
      : [`${formatFixed(k.observed! * 100, 1)}%`, `${formatFixed(k.expected! * 100, 1)}%`, formatFixed(k.kappa, 3)];
  const rows = [
    ...agreement.abilities.map((k) => [k.ability, String(k.n), ...kappa(k)]),
    ...(agreement.abilities.length > 1 ? [["all", String(agreement.overall.n), ...kappa(agreement.overall)]] : []),
  ];
  const lines = [
    `${path.basename(fileA)} (A) and ${path.basename(fileB)} (B) on ${path.basename(dataset)}: items both judged (accept, reject, correct to a choice)`,
    ...table(["ability", "both judged", "agreed", "by chance", "Cohen's kappa"], rows),
    agreement.disagreements.length === 0 ? "no item judged differently" : `${agreement.disagreements.length} judged differently:`,
    ...agreement.disagreements.map(
      (d) => `  ${path.basename(dataset)}:${d.item.line} ${d.item.id}: A ${decisionText(d.a, d.item)}; B ${decisionText(d.b, d.item)}`,
    ),
  ];
  process.stdout.write(lines.join("\n") + "\n");
  return 0;
}

function decisionText(d: ReviewDecision, item: DiagnosticItem): string {
  const who = d.reviewer ? ` (${d.reviewer})` : "";
  const what =
    d.decision === "correct" ? `correct to ${String.fromCharCode(65 + d.answer!)} "${item.choices[d.answer!] ?? "?"}"` : d.decision;
  return `${what}${d.note ? `: ${JSON.stringify(d.note)}` : ""}${who}`;
}

/** The dataset's items; a dataset with errors is refused (a review of a broken file measures nothing). */
async function datasetItems(dataset: string): Promise<DiagnosticItem[]> {
  const file = path.resolve(dataset);
  const { items, problems } = await loadDiagnosticDataset(file);
  const errors = errorsOf(problems);
  if (errors.length > 0)
    throw new ReviewInputError(`${errors.map(formatProblem).join("\n")}\n${path.basename(file)} has errors: fix them first`);
  return items;
}

/** A review file, whole; a missing one is empty where `mayBeAbsent`. */
async function readReview(file: string, mayBeAbsent: boolean): Promise<ReviewFile> {
  let review: ReviewFile | undefined;
  try {
    review = await readWholeReview(file);
  } catch (e) {
    if (e instanceof ReviewFileError) throw new ReviewInputError(e.message);
    throw e;
  }
  if (review) return review;
  if (mayBeAbsent) return emptyReview();
  throw new ReviewInputError(`no review file ${file}: review the dataset in the editor (Benchmark Profiler: Review Dataset) first`);
}

function wholeNumber(text: string | undefined, flag: string, min: number): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(value) || value < min)
    throw new ReviewInputError(`${flag} must be a whole number of at least ${min}, got \`${text}\``);
  return value;
}

function sameIds(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((id, i) => id === b[i]);
}

function countBy(values: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return counts;
}

/** Rows padded into columns, the first left-aligned, the others right-aligned. */
function table(header: string[], rows: string[][]): string[] {
  const all = [header, ...rows];
  const widths = header.map((_, c) => Math.max(...all.map((r) => r[c]!.length)));
  return all.map((r) =>
    r
      .map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!)))
      .join("  ")
      .trimEnd(),
  );
}
