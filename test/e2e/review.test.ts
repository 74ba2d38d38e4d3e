// End to end: the review mode in code-server, in Restricted Mode (a review runs nothing). On the
// tiny project's dataset of six items, Review Dataset opens the panel beside the data file; five
// items are reviewed by keyboard (accept, reject, correct to the first choice, accept, flag with a
// note); the review file then holds exactly those decisions, the gutter marks them and the status
// bar counts them; screenshots in the dark and the light theme. Then `bprof run` on the project's
// config leaves the rejected item out and uses the correction (results.json).
// Run: bash scripts/e2e-install.sh && npm run build && npm run package && node --import tsx --test test/e2e/review.test.ts
// Leaves test-results/e2e-review-dark.png and e2e-review-light.png.
import assert from "node:assert/strict";
import * as fsp from "node:fs/promises";
import * as path from "node:path";
import { test } from "node:test";
import { parseReviewFile } from "../../src/core/diagnostic/review/reviewFile";
import type { Results } from "../../src/core/results/schema";
import { bprof, runnerPath } from "../support/cli";
import { DIAGNOSTIC, makeProfileProject, QUANT } from "../support/profileProject";
import { openFile } from "./editing";
import { waitFor } from "./processes";
import { runCommand, screenshot, webviewFrame, withWorkbench } from "./workbench";

const ITEMS = [
  ...DIAGNOSTIC[QUANT]!,
  { context: "Sam reads 10 pages a day.", question: "How many pages does Sam read in a week?", choices: ["70", "17", "7"], answer: 0 },
  { context: "", question: "What is half of 50?", choices: ["20", "25", "30"], answer: 1 },
].map((item, i) => ({ id: `quantitative-${i}`, ability: QUANT, ...item }));

test("e2e review: five items reviewed by keyboard in Restricted Mode; the run uses the review", { timeout: 240_000 }, async (t) => {
  const p = await makeProfileProject({
    extraFiles: { "diag/quantitative.diag.jsonl": ITEMS.map((i) => JSON.stringify(i)).join("\n") + "\n" },
  });
  t.after(() => fsp.rm(p.root, { recursive: true, force: true, maxRetries: 3 }));
  const reviewFile = path.join(p.root, "diag", "quantitative.review.jsonl");
  const settings = { "benchmarkProfiler.reviewer": "e2e-reviewer" };

  await withWorkbench(t, { name: "e2e-review", workspace: p.root, trusted: false, settings }, async ({ page, mark }) => {
    await openFile(page, "quantitative.diag.jsonl");
    await runCommand(page, "Benchmark Profiler: Review Dataset");
    const frame = await webviewFrame(page, ".review-head", 30_000);
    assert.match(await frame.locator(".review-head").innerText(), /^1 of 6/);
    await frame.locator("#root").click();
    mark("review panel open");

    let shown = "";
    const position = async (n: number) =>
      waitFor(
        async () => {
          shown = await frame.locator(".review-head").innerText();
          return /^(\d+) of 6/.exec(shown)?.[1] === String(n) ? true : undefined;
        },
        10_000,
        () => `the panel did not move on to item ${n}: ${shown}`,
      );
    await page.keyboard.press("a");
    await position(2);
    await page.keyboard.press("r");
    await position(3);
    await page.keyboard.press("1"); // the first choice is the right one, not the marked third
    await position(4);
    await page.keyboard.press("a");
    await position(5);
    await page.keyboard.press("f");
    const note = page.locator(".quick-input-widget .quick-input-box input").first();
    await note.waitFor({ state: "visible", timeout: 10_000 });
    await note.fill("is 25 half of 50 or of 51?");
    await note.press("Enter");
    await position(6);
    mark("five decisions");

    const decisions = await waitFor(
      async () => {
        const text = await fsp.readFile(reviewFile, "utf8").catch(() => "");
        const parsed = parseReviewFile(reviewFile, text);
        return parsed.review.decisions.size === 5 ? parsed : undefined;
      },
      10_000,
      () => "the review file never held five decisions",
    );
    assert.deepEqual(decisions.problems, []);
    assert.deepEqual(
      [...decisions.review.decisions.values()].map((d) => [d.id, d.decision, d.answer ?? null, d.note ?? null, d.reviewer]),
      [
        ["quantitative-0", "accept", null, null, "e2e-reviewer"],
        ["quantitative-1", "reject", null, null, "e2e-reviewer"],
        ["quantitative-2", "correct", 0, null, "e2e-reviewer"],
        ["quantitative-3", "accept", null, null, "e2e-reviewer"],
        ["quantitative-4", "flag", null, "is 25 half of 50 or of 51?", "e2e-reviewer"],
      ],
    );
    const dataset = await fsp.readFile(path.join(p.root, "diag", "quantitative.diag.jsonl"), "utf8");
    assert.equal(dataset, ITEMS.map((i) => JSON.stringify(i)).join("\n") + "\n", "the dataset itself is not changed");

    // the gutter: one mark per decided line, each of its state's icon
    const marks = await waitFor(
      async () => {
        const styles = await page
          .locator(".editor-group-container .monaco-editor .cgmr")
          .evaluateAll((nodes) => nodes.map((n) => getComputedStyle(n).backgroundImage));
        return styles.length >= 5 ? styles : undefined;
      },
      10_000,
      () => "the gutter does not mark the five decided lines",
    );
    for (const [state, count] of [
      ["accepted", 2],
      ["rejected", 1],
      ["corrected", 1],
      ["flagged", 1],
    ] as const)
      assert.equal(marks.filter((m) => m.includes(`review-${state}.svg`)).length, count, `${state} marks: ${marks.join(" | ")}`);
    const status = page.locator(".statusbar-item", { hasText: "reviewed" }).first();
    assert.match(await status.innerText(), /5\/6 reviewed/);
    assert.match(
      await frame.locator(".review-progress").innerText(),
      /5 of 6 reviewed · 2 accepted, 1 rejected, 1 corrected, 1 flagged · labels 2 of 4 right/,
    );
    // both themes, picked as a user picks one
    const useTheme = async (theme: string, workbenchClass: string) => {
      await runCommand(page, "Preferences: Color Theme");
      const input = page.locator(".quick-input-widget .quick-input-box input").first();
      await input.waitFor({ state: "visible", timeout: 10_000 });
      await input.fill(theme);
      await page.locator(".quick-input-widget .quick-input-list .monaco-list-row", { hasText: theme }).first().waitFor({ timeout: 10_000 });
      await input.press("Enter");
      await waitFor(
        async () => ((await page.locator(`.monaco-workbench.${workbenchClass}`).count()) > 0 ? true : undefined),
        20_000,
        () => `the workbench never took the theme ${theme}`,
      );
    };
    await useTheme("Dark Modern", "vs-dark");
    await screenshot(page, "e2e-review-dark");
    await useTheme("Light Modern", "vs");
    await screenshot(page, "e2e-review-light");
    mark("screenshots");
  });

  // the run: item 1 left out, item 2 with the first choice as its answer
  const run = await bprof(["run", p.configPath, "--runner", runnerPath], { cwd: p.root, timeout: 180_000 });
  assert.equal(run.exitCode, 0, run.stderr);
  const runs = path.join(p.root, ".bprof", "runs");
  const [runId] = await fsp.readdir(runs);
  const results = JSON.parse(await fsp.readFile(path.join(runs, runId!, "results.json"), "utf8")) as Results;
  const quant = results.models[0]!.profile!.abilities.find((a) => a.name === QUANT)!;
  assert.equal(quant.sequences, 5);
  assert.equal(quant.review?.left_out, 1);
  assert.equal(quant.review?.corrected, 1);
  assert.deepEqual([quant.review?.label_accuracy.right, quant.review?.label_accuracy.reviewed], [2, 4]);
});
