// A run of a config whose dataset has a review file, with the real runner on the tiny project: the
// rejected item is left out, the corrected answer is the one the importance loss is taken on (the
// run's job equals the job of a dataset edited by hand to the same effect), and results.json says
// how many items each ability used, which review file (by its text's SHA-256) chose them, and the
// labels' accuracy it measured; `review: accepted` keeps only the accepted items, and `ignore` all.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { loadProfile } from "../../src/core/config/load";
import { compiledJob, modelTokenizer } from "../../src/core/plan/compile";
import type { ProfileJob } from "../../src/core/plan/job";
import { placedItem } from "../../src/core/diagnostic/item";
import { emptyReview, itemHash, reviewFileText, withDecision, type ReviewFile } from "../../src/core/diagnostic/review/reviewFile";
import { runProfile } from "../../src/core/run/runProfile";
import type { Results } from "../../src/core/results/schema";
import { renderReport } from "../../src/core/report";
import { loadRun } from "../../src/core/report/load";
import { runnerPath } from "../support/cli";
import { DIAGNOSTIC, makeProfileProject, QUANT, SPATIAL } from "../support/profileProject";

const quant = DIAGNOSTIC[QUANT]!.map((item, i) => placedItem({ id: `quantitative-${i}`, ability: QUANT, ...item }, i + 1));

/** quantitative-0 accepted, -1 rejected, -2 corrected to its first choice, -3 left open. */
function review(): ReviewFile {
  let r = emptyReview();
  r = withDecision(r, { id: quant[0]!.id, hash: itemHash(quant[0]!), decision: "accept", reviewer: "ana" });
  r = withDecision(r, { id: quant[1]!.id, hash: itemHash(quant[1]!), decision: "reject", note: "two answers fit", reviewer: "ana" });
  return withDecision(r, { id: quant[2]!.id, hash: itemHash(quant[2]!), decision: "correct", answer: 0, reviewer: "ana" });
}

test("a run leaves the rejected item out, applies the correction and records the review", { timeout: 300_000 }, async (t) => {
  const reviewText = reviewFileText(review());
  const p = await makeProfileProject({ extraFiles: { "diag/quantitative.review.jsonl": reviewText } });
  t.after(() => fs.rm(p.root, { recursive: true, force: true }));
  const { profile, problems } = await loadProfile(p.configPath);
  assert.ok(profile, problems.map((x) => x.message).join("\n"));
  assert.deepEqual(
    profile.abilities.find((a) => a.name === QUANT)!.items.map((i) => [i.id, i.answer]),
    [
      ["quantitative-0", 0],
      ["quantitative-2", 0],
      ["quantitative-3", 0],
    ],
  );
  const outcome = await runProfile(profile, { runner: { path: runnerPath, sourcesDir: "", cacheDir: "" } });
  const results = JSON.parse(await fs.readFile(outcome.resultsFile, "utf8")) as Results;
  const abilities = results.models[0]!.profile!.abilities;
  const q = abilities.find((a) => a.name === QUANT)!;
  assert.equal(q.sequences, 3);
  assert.deepEqual(q.review, {
    use: "not_rejected",
    files: [
      { file: path.join(p.root, "diag", "quantitative.review.jsonl"), sha256: createHash("sha256").update(reviewText).digest("hex") },
    ],
    left_out: 1,
    corrected: 1,
    // judged: 0 accepted, 1 rejected, 2 corrected: 1 right of 3; Wilson 95%: 0.0615 to 0.7923
    label_accuracy: { right: 1, reviewed: 3, low: q.review!.label_accuracy.low, high: q.review!.label_accuracy.high, sample: false },
  });
  assert.ok(Math.abs(q.review!.label_accuracy.low! - 0.0615) < 1e-3 && Math.abs(q.review!.label_accuracy.high! - 0.7923) < 1e-3);
  assert.equal(abilities.find((a) => a.name === SPATIAL)!.review, undefined, "an ability without a review file records none");

  // the job the run used equals that of a dataset edited by hand: item 1 deleted, item 2's answer 0
  const edited = [quant[0]!, { ...quant[2]!, answer: 0 }, quant[3]!].map(({ line: _l, ...item }) => JSON.stringify(item)).join("\n") + "\n";
  const byHand = await makeProfileProject({ extraFiles: { "diag/quantitative.diag.jsonl": edited } });
  t.after(() => fs.rm(byHand.root, { recursive: true, force: true }));
  const handProfile = (await loadProfile(byHand.configPath)).profile!;
  const model = handProfile.models[0]!;
  const handJob = compiledJob(handProfile, model, await modelTokenizer(model), new Date()).job as ProfileJob;
  const ranJob = JSON.parse(await fs.readFile(path.join(outcome.runDir, "models", model.name, "job.json"), "utf8")) as typeof handJob;
  assert.deepEqual(
    ranJob.abilities.map((a) => a.sequences),
    handJob.abilities.map((a) => a.sequences),
  );

  const markdown = (await renderReport(await loadRun(outcome.runDir), { format: "md" })).text;
  assert.match(
    markdown,
    /Quantitative Reasoning \(3 items; labels 1 of 3 right \(33\.3%, 95% CI 6\.1-79\.2%, not a random sample\); 1 left out; 1 corrected\)/,
  );
});

test("`review: accepted` uses only accepted and corrected items; `ignore` uses the dataset as it is; accepted without a review file is an error", async (t) => {
  const p = await makeProfileProject({ extraFiles: { "diag/quantitative.review.jsonl": reviewFileText(review()) } });
  t.after(() => fs.rm(p.root, { recursive: true, force: true }));
  const config = await fs.readFile(p.configPath, "utf8");
  const withReview = (ability: string, use: string) => config.replace(new RegExp(`(name: ${ability}\\n)`), `$1    review: ${use}\n`);
  const ids = async (text: string, ability: string) => {
    const loaded = await loadProfile(p.configPath, { text });
    assert.ok(loaded.profile, loaded.problems.map((x) => x.message).join("\n"));
    return loaded.profile.abilities.find((a) => a.name === ability)!.items.map((i) => i.id);
  };
  assert.deepEqual(await ids(withReview(QUANT, "accepted"), QUANT), ["quantitative-0", "quantitative-2"]);
  assert.deepEqual(
    await ids(withReview(QUANT, "ignore"), QUANT),
    quant.map((i) => i.id),
  );
  const missing = await loadProfile(p.configPath, { text: withReview(SPATIAL, "accepted") });
  const problem = missing.problems.find((x) => x.code === "config.review-missing");
  assert.ok(problem, missing.problems.map((x) => x.message).join("\n"));
  assert.equal(problem.field, "abilities[1].review");
  assert.match(problem.message, /spatial\.diag\.jsonl has no review file \(spatial\.review\.jsonl\)/);
  const explicit = await loadProfile(p.configPath, { text: withReview(SPATIAL, "not_rejected") });
  const noEffect = explicit.problems.find((x) => x.code === "config.no-effect" && x.field === "abilities[1].review");
  assert.ok(noEffect, explicit.problems.map((x) => x.message).join("\n"));
  assert.match(noEffect.message, /has no effect on spatial\.diag\.jsonl: it has no review file yet/);
});
