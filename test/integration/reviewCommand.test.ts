// `bprof review` through the built CLI on a generated dataset: `sample` writes a stratified sample
// into the review file beside the dataset (and refuses to replace it by another); `stats` prints
// per ability the counts and the accuracy with its Wilson bounds, recomputed here from the
// decisions; `agree` prints Cohen's kappa and the items two reviewers judged differently; bad
// input is one positioned line and exit code 2.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { wilsonProportion } from "../../src/core/analysis/agreement";
import { findGenerator, generateItems, toJsonl } from "../../src/core/diagnostic/generators/index";
import type { DiagnosticItemFields } from "../../src/core/diagnostic/item";
import {
  emptyReview,
  itemHash,
  parseReviewFile,
  reviewFileText,
  withDecision,
  type ReviewDecisionKind,
} from "../../src/core/diagnostic/review/reviewFile";
import { bprof } from "../support/cli";

function itemsOf(slug: string, n: number): DiagnosticItemFields[] {
  const found = findGenerator(slug);
  if ("error" in found) throw new Error(found.error);
  return generateItems(found.generator, { n, seed: 1 });
}

async function project(t: { after(fn: () => Promise<void>): void }) {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-review-cli-"));
  t.after(() => fs.rm(dir, { recursive: true, force: true }));
  const items = [...itemsOf("deductive", 40), ...itemsOf("spatial", 20)];
  const dataset = path.join(dir, "mixed.diag.jsonl");
  await fs.writeFile(dataset, toJsonl(items));
  return { dir, dataset, items, reviewFile: path.join(dir, "mixed.review.jsonl") };
}

test("review sample draws each ability's share into the review file, and keeps its decisions", async (t) => {
  const { dataset, items, reviewFile } = await project(t);
  await fs.writeFile(
    reviewFile,
    reviewFileText(withDecision(emptyReview(), { id: items[0]!.id, hash: itemHash(items[0]!), decision: "accept" })),
  );
  const r = await bprof(["review", "sample", dataset, "--n", "15", "--seed", "4"]);
  assert.equal(r.exitCode, 0, r.stderr);
  assert.match(
    r.stdout,
    /^15 of 60 items to review \(seed 4\) -> .*mixed\.review\.jsonl\n {2}Deductive Reasoning: 10\n {2}Spatial Reasoning: 5$/,
  );
  const { review, problems } = parseReviewFile(reviewFile, await fs.readFile(reviewFile, "utf8"));
  assert.deepEqual(problems, []);
  assert.equal(review.sample?.ids.length, 15);
  assert.equal(review.decisions.size, 1, "the decision made before the sample stays");
  // the same sample again is no change; another is refused
  assert.equal((await bprof(["review", "sample", dataset, "--n", "15", "--seed", "4"])).exitCode, 0);
  const again = await bprof(["review", "sample", dataset, "--n", "15", "--seed", "5"]);
  assert.equal(again.exitCode, 2);
  assert.match(again.stderr, /mixed\.review\.jsonl has a sample already \(15 items, seed 4\)/);
});

test("review stats: the counts and the Wilson interval per ability and overall, as the decisions give them", async (t) => {
  const { dataset, items, reviewFile } = await project(t);
  const decide = (decisions: [number, ReviewDecisionKind, number?][]) =>
    decisions.reduce(
      (r, [i, decision, answer]) =>
        withDecision(r, { id: items[i]!.id, hash: itemHash(items[i]!), decision, ...(answer !== undefined ? { answer } : {}) }),
      emptyReview(),
    );
  // deductive (items 0-39): 8 accepted, 1 rejected, 1 corrected, 1 flagged; spatial (40-59): 4 accepted, 1 rejected
  const review = decide([
    ...Array.from({ length: 8 }, (_, i) => [i, "accept"] as [number, ReviewDecisionKind]),
    [8, "reject"],
    [9, "correct", (items[9]!.answer + 1) % items[9]!.choices.length],
    [10, "flag"],
    ...Array.from({ length: 4 }, (_, i) => [40 + i, "accept"] as [number, ReviewDecisionKind]),
    [44, "reject"],
  ]);
  await fs.writeFile(reviewFile, reviewFileText(review));
  const r = await bprof(["review", "stats", dataset]);
  assert.equal(r.exitCode, 0, r.stderr);
  const pct = (k: number, n: number) => {
    const w = wilsonProportion(k, n);
    return `${(w.rate! * 100).toFixed(1)}%  ${(w.low! * 100).toFixed(1)}-${(w.high! * 100).toFixed(1)}%`;
  };
  const rows = r.stdout.split("\n").map((l) => l.replace(/\s+/g, " ").trim());
  assert.match(rows[0]!, /^mixed\.diag\.jsonl: mixed\.review\.jsonl, on every reviewed item \(no random sample/);
  assert.ok(rows.includes(`Deductive Reasoning 40 10 8 ${pct(8, 10).replace(/\s+/g, " ")} 1 1 29 1 0`), r.stdout);
  assert.ok(rows.includes(`Spatial Reasoning 20 5 4 ${pct(4, 5).replace(/\s+/g, " ")} 1 0 15 0 0`), r.stdout);
  assert.ok(rows.includes(`all 60 15 12 ${pct(12, 15).replace(/\s+/g, " ")} 2 1 44 1 0`), r.stdout);
});

test("review agree: kappa over the items both judged, and each disagreement with both decisions", async (t) => {
  const { dir, dataset, items } = await project(t);
  const judge = (decisions: ReviewDecisionKind[], reviewer: string) =>
    decisions.reduce(
      (r, decision, i) => withDecision(r, { id: items[i]!.id, hash: itemHash(items[i]!), decision, reviewer }),
      emptyReview(),
    );
  const a = path.join(dir, "mixed.ana.review.jsonl");
  const b = path.join(dir, "mixed.ben.review.jsonl");
  await fs.writeFile(a, reviewFileText(judge(["accept", "accept", "accept", "reject", "accept", "reject"], "ana")));
  await fs.writeFile(b, reviewFileText(judge(["accept", "accept", "reject", "reject", "accept", "accept"], "ben")));
  const r = await bprof(["review", "agree", dataset, a, b]);
  assert.equal(r.exitCode, 0, r.stderr);
  // 6 items, 4 alike; A accepts 4/6, B 4/6: chance (4/6)^2 + (2/6)^2 = 5/9; kappa = (2/3 - 5/9) / (4/9) = 0.25
  const row = r.stdout.split("\n").find((l) => l.startsWith("Deductive Reasoning"))!;
  assert.deepEqual(row.trim().split(/\s{2,}/), ["Deductive Reasoning", "6", "66.7%", "55.6%", "0.250"]);
  assert.match(
    r.stdout,
    /2 judged differently:\n {2}mixed\.diag\.jsonl:3 \S+: A accept \(ana\); B reject \(ben\)\n {2}mixed\.diag\.jsonl:6 \S+: A reject \(ana\); B accept \(ben\)$/,
  );
});

test("review's bad input: one line each, exit code 2", async (t) => {
  const { dataset, reviewFile } = await project(t);
  const cases: [string[], RegExp][] = [
    [["review"], /^bprof review: review needs an action, sample, stats or agree$/],
    [["review", "sample", dataset], /^bprof review: review sample needs --n/],
    [["review", "sample", dataset, "--n", "0"], /--n must be a whole number of at least 1, got `0`/],
    [["review", "stats", dataset], /no review file .*mixed\.review\.jsonl: review the dataset in the editor/],
  ];
  for (const [args, expected] of cases) {
    const r = await bprof(args);
    assert.equal(r.exitCode, 2, args.join(" "));
    assert.match(r.stderr, expected, args.join(" "));
    assert.doesNotMatch(r.stderr, /\n\s+at /, "no stack trace");
  }
  await fs.writeFile(reviewFile, '{"id": "x", "hash": "h", "decision": "accept"}\n{"id": "y"}\n');
  const broken = await bprof(["review", "stats", dataset]);
  assert.equal(broken.exitCode, 2);
  assert.match(
    broken.stderr,
    /mixed\.review\.jsonl:2:1: error: mixed\.review\.jsonl line 2: `hash` of item y must be a string \[review\.invalid-record\]/,
  );
});
