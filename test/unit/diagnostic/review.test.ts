// A dataset's review file: its lines, the item states it gives (an item edited since its review is
// open again), the stratified seeded sample, label accuracy and agreement recomputed by hand from
// the decisions, the items a run uses under each `review` setting, and the atomic rewrite.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import test from "node:test";
import { placedItem, type DiagnosticItem } from "../../../src/core/diagnostic/item";
import { reviewedItems } from "../../../src/core/diagnostic/review/forRun";
import {
  emptyReview,
  itemHash,
  parseReviewFile,
  reviewFileOf,
  reviewFileText,
  withDecision,
  writeReviewFile,
  type ReviewDecisionKind,
  type ReviewFile,
} from "../../../src/core/diagnostic/review/reviewFile";
import { sampleForReview, stratumQuotas } from "../../../src/core/diagnostic/review/sample";
import { itemReviews } from "../../../src/core/diagnostic/review/states";
import { reviewAgreement, reviewSummary } from "../../../src/core/analysis/labelAccuracy";
import { nextOpen, reviewCard, reviewProgress, reviewQueue } from "../../../src/core/language/reviewCard";
import { itemReviewHover } from "../../../src/core/language/hover";
import { reviewProgressText } from "../../../src/core/language/outline";

function items(ability: string, n: number, from = 0): DiagnosticItem[] {
  return Array.from({ length: n }, (_, i) =>
    placedItem(
      {
        id: `${ability}-${from + i}`,
        ability,
        context: "",
        question: `question ${from + i} of ${ability}?`,
        choices: ["yes", "no", "maybe"],
        answer: 0,
      },
      from + i + 1,
    ),
  );
}

function decide(
  review: ReviewFile,
  item: DiagnosticItem,
  decision: ReviewDecisionKind,
  extra: { answer?: number; reviewer?: string } = {},
): ReviewFile {
  return withDecision(review, { id: item.id, hash: itemHash(item), decision, ...extra });
}

test("the review file sits beside its dataset", () => {
  assert.equal(reviewFileOf("/d/quant.diag.jsonl"), "/d/quant.review.jsonl");
  assert.equal(reviewFileOf("/d/mine.jsonl"), "/d/mine.review.jsonl");
});

test("a decision is bound to the item's content: an edited question or answer is open again, an edited meta is not", () => {
  const [item] = items("Deductive Reasoning", 1);
  const review = decide(emptyReview(), item!, "accept");
  assert.equal(itemReviews([item!], review)[0]!.state, "accepted");
  const edited = placedItem({ ...item!, question: "another question?" }, 1);
  assert.equal(itemReviews([edited], review)[0]!.state, "changed");
  const reanswered = placedItem({ ...item!, answer: 1 }, 1);
  assert.equal(itemReviews([reanswered], review)[0]!.state, "changed");
  const withMeta = placedItem({ ...item!, meta: { source: "drafted" } }, 1);
  assert.equal(itemReviews([withMeta], review)[0]!.state, "accepted");
});

test("a review file reads back what it wrote; a bad line is a positioned problem and is skipped", () => {
  const its = items("Deductive Reasoning", 3);
  let review = decide(emptyReview(), its[0]!, "accept", { reviewer: "ana" });
  review = decide(review, its[1]!, "correct", { answer: 2 });
  review = decide(review, its[0]!, "reject"); // deciding again replaces the first decision
  review = { ...review, sample: { seed: 3, n: 2, ids: [its[0]!.id, its[1]!.id] } };
  const text = reviewFileText(review);
  assert.equal(text.split("\n").filter(Boolean).length, 3, text);
  const back = parseReviewFile("/d/x.review.jsonl", text);
  assert.deepEqual(back.problems, []);
  assert.deepEqual(back.review.sample, { seed: 3, n: 2, ids: [its[0]!.id, its[1]!.id] });
  assert.equal(back.review.decisions.get(its[0]!.id)!.decision, "reject");
  assert.equal(back.review.decisions.get(its[1]!.id)!.answer, 2);

  const broken = parseReviewFile(
    "/d/x.review.jsonl",
    `${text}{"id": "a", "hash": "h", "decision": "maybe"}\n{"id": "b", "hash": "h", "decision": "correct"}\nnot json\n`,
  );
  assert.deepEqual(
    broken.problems.map((p) => [p.line, p.code]),
    [
      [4, "review.invalid-record"],
      [5, "review.invalid-record"],
      [6, "review.invalid-record"],
    ],
  );
  assert.match(broken.problems[0]!.message, /`decision` of item a must be one of accept, reject, correct, flag/);
  assert.match(broken.problems[1]!.message, /corrected without `answer`/);
  assert.equal(broken.review.decisions.size, 2);
});

test("the sample is stratified by ability (largest remainders), seeded, and in file order", () => {
  assert.deepEqual(stratumQuotas([100, 50, 50], 10), [5, 3, 2]); // 5, 2.5, 2.5: the first remainder wins the tie
  assert.deepEqual(stratumQuotas([3, 1000], 500), [1, 499]);
  assert.deepEqual(stratumQuotas([2, 2], 10), [2, 2]);
  const all = [...items("Deductive Reasoning", 120), ...items("Spatial Reasoning", 60), ...items("Temporal Reasoning", 20)];
  const s = sampleForReview(all, 50, 7);
  const count = (ability: string) => s.ids.filter((id) => id.startsWith(ability)).length;
  assert.deepEqual([count("Deductive"), count("Spatial"), count("Temporal")], [30, 15, 5]);
  assert.deepEqual(sampleForReview(all, 50, 7), s, "the same seed draws the same sample");
  assert.notDeepEqual(sampleForReview(all, 50, 8).ids, s.ids);
  const order = all.map((i) => i.id);
  assert.deepEqual(
    [...s.ids].sort((a, b) => order.indexOf(a) - order.indexOf(b)),
    s.ids,
  );
  assert.equal(sampleForReview(all, 1000, 1).ids.length, 200, "a sample larger than the dataset is all of it");
});

test("label accuracy per ability and overall, by hand: right = accepted, of accepted + rejected + corrected; flags and open items do not count", () => {
  const deductive = items("Deductive Reasoning", 10);
  const spatial = items("Spatial Reasoning", 6);
  let review = emptyReview();
  for (const item of deductive.slice(0, 7)) review = decide(review, item, "accept");
  review = decide(review, deductive[7]!, "reject");
  review = decide(review, deductive[8]!, "correct", { answer: 1 });
  review = decide(review, deductive[9]!, "flag");
  for (const item of spatial.slice(0, 3)) review = decide(review, item, "accept");
  review = decide(review, spatial[3]!, "reject");
  const summary = reviewSummary([...deductive, ...spatial], review);
  const [d, s] = summary.abilities;
  assert.deepEqual([d!.accuracy.k, d!.accuracy.n, d!.counts.flagged], [7, 9, 1]);
  assert.deepEqual([s!.accuracy.k, s!.accuracy.n, s!.counts.open], [3, 4, 2]);
  assert.deepEqual([summary.overall.accuracy.k, summary.overall.accuracy.n], [10, 13]);
  assert.equal(summary.sample, undefined);

  // with a sample, only its items count
  const sampled = { ...review, sample: { seed: 1, n: 4, ids: [deductive[0]!.id, deductive[7]!.id, spatial[0]!.id, spatial[5]!.id] } };
  const onSample = reviewSummary([...deductive, ...spatial], sampled);
  assert.deepEqual(
    [onSample.overall.items, onSample.overall.accuracy.k, onSample.overall.accuracy.n, onSample.overall.counts.open],
    [4, 2, 3, 1],
  );
});

test("two reviewers: kappa over the items both judged, two corrections to different answers disagree", () => {
  const its = items("Deductive Reasoning", 6);
  const judge = (decisions: [ReviewDecisionKind, number?][]) =>
    decisions.reduce((r, [d, answer], i) => decide(r, its[i]!, d, answer !== undefined ? { answer } : {}), emptyReview());
  const a = judge([["accept"], ["accept"], ["reject"], ["correct", 1], ["accept"], ["flag"]]);
  const b = judge([["accept"], ["reject"], ["reject"], ["correct", 2], ["accept"], ["accept"]]);
  const agreement = reviewAgreement(its, a, b);
  // five judged by both (the flag is not a judgement): alike 3 of 5; A accept 3, reject 1, correct:1 1; B accept 2, reject 2, correct:2 1
  // chance = 0.6 * 0.4 + 0.2 * 0.4 = 0.32; kappa = (0.6 - 0.32) / 0.68
  assert.equal(agreement.overall.n, 5);
  assert.ok(Math.abs(agreement.overall.kappa! - 0.28 / 0.68) < 1e-12, String(agreement.overall.kappa));
  assert.deepEqual(
    agreement.disagreements.map((d) => [d.item.id, d.a.decision, d.b.decision]),
    [
      [its[1]!.id, "accept", "reject"],
      [its[3]!.id, "correct", "correct"],
    ],
  );
});

test("a run uses not_rejected by default, accepted when asked: corrections applied, rejections left out", () => {
  const its = items("Deductive Reasoning", 5);
  let review = decide(emptyReview(), its[0]!, "accept");
  review = decide(review, its[1]!, "reject");
  review = decide(review, its[2]!, "correct", { answer: 2 });
  review = decide(review, its[3]!, "flag");
  const notRejected = reviewedItems(its, review, "not_rejected", "/d/x.review.jsonl");
  assert.deepEqual(
    notRejected.items.map((i) => [i.id, i.answer]),
    [
      [its[0]!.id, 0],
      [its[2]!.id, 2],
      [its[3]!.id, 0],
      [its[4]!.id, 0],
    ],
  );
  assert.deepEqual([notRejected.leftOut, notRejected.corrected], [1, 1]);
  assert.equal(its[2]!.answer, 0, "the dataset's item is not changed");
  const accepted = reviewedItems(its, review, "accepted", "/d/x.review.jsonl");
  assert.deepEqual(
    accepted.items.map((i) => i.id),
    [its[0]!.id, its[2]!.id],
  );
  const wrong = reviewedItems(its, decide(emptyReview(), its[0]!, "correct", { answer: 5 }), "not_rejected", "/d/x.review.jsonl");
  assert.equal(wrong.problems[0]!.code, "review.answer-out-of-range");
  assert.match(wrong.problems[0]!.message, /corrects item .* to answer 5, but it has 3 choices/);
});

test("writing a review replaces the file whole and leaves no temporary", async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-review-"));
  const file = path.join(dir, "x.review.jsonl");
  const [item] = items("Deductive Reasoning", 1);
  await writeReviewFile(file, decide(emptyReview(), item!, "accept"));
  await writeReviewFile(file, decide(emptyReview(), item!, "reject"));
  assert.deepEqual(await fs.readdir(dir), ["x.review.jsonl"]);
  const back = parseReviewFile(file, await fs.readFile(file, "utf8"));
  assert.equal(back.review.decisions.get(item!.id)!.decision, "reject");
  await fs.rm(dir, { recursive: true });
});

test("the review mode's moves go round to the next open item; the card shows the marked and the corrected choice", () => {
  const its = items("Deductive Reasoning", 4);
  let review = decide(emptyReview(), its[1]!, "accept");
  review = decide(review, its[2]!, "correct", { answer: 1 });
  const queue = reviewQueue(itemReviews(its, review));
  assert.equal(nextOpen(queue, 0, 1), 3);
  assert.equal(nextOpen(queue, 3, 1), 0, "past the end, from the start");
  assert.equal(nextOpen(queue, 0, -1), 3);
  const card = reviewCard(queue, 2, reviewProgress(queue));
  assert.deepEqual(
    card.choices.map((c) => [c.letter, c.marked, c.corrected]),
    [
      ["A", true, false],
      ["B", false, true],
      ["C", false, false],
    ],
  );
  assert.equal(card.prompt, "question 2 of Deductive Reasoning?\nAnswer: yes");
  assert.deepEqual([card.progress.done, card.progress.total, card.progress.accuracy?.right, card.progress.accuracy?.judged], [2, 4, 1, 2]);
  assert.equal(nextOpen(reviewQueue(itemReviews(its.slice(1, 3), review)), 0, 1), undefined, "none open");
});

test("an item's hover says its decision and the labels' accuracy so far; the Profiles view its ability's progress", () => {
  const its = [...items("Deductive Reasoning", 3), ...items("Spatial Reasoning", 2)];
  let review = decide(emptyReview(), its[0]!, "accept", { reviewer: "ana" });
  review = decide(review, its[1]!, "correct", { answer: 2, reviewer: "ana" });
  review = decide(review, its[3]!, "accept");
  const hover = itemReviewHover("/d/mixed.diag.jsonl", its[1]!, review, its);
  assert.match(hover, /^\*\*Review\*\* \(mixed\\\.review\\\.jsonl\): corrected \(the right answer is C\) by ana/);
  assert.match(hover, /- Deductive Reasoning: 1 of 2 \(50\.0%, 95% CI 9\.5-90\.5%\)/);
  assert.match(hover, /- all abilities: 2 of 3 \(66\.7%/);
  assert.match(itemReviewHover("/d/mixed.diag.jsonl", its[2]!, review, its), /: not reviewed yet/);
  const deductive = reviewSummary(its, review).abilities[0]!;
  assert.equal(reviewProgressText(deductive), "2/3 reviewed, 50.0% right");
});
