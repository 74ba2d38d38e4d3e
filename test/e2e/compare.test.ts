// End to end: Compare Profiles… from the Runs view. The packaged extension in code-server profiles
// a tiny project of two models (two random Llamas of different seeds, real runner) on two
// benchmarks; from the finished run's context menu in the Runs view, Compare Profiles… asks for
// profile A and then the profile to compare it with, and the results view shows the difference
// heatmap of the two: drawn (chart.js under the view's CSP), one cell per ability and benchmark,
// with the same cells in its table of numbers and the rank correlation of each benchmark.
// Run: bash scripts/e2e-install.sh && npm run build && npm run package && node --import tsx --test test/e2e/compare.test.ts
// Leaves test-results/e2e-compare.png and e2e-compare-code-server.log.
import assert from "node:assert/strict";
import * as fsp from "node:fs/promises";
import * as path from "node:path";
import { test } from "node:test";
import type { Locator, Page } from "playwright-core";
import { BENCH_DOCS, CONFIG_YAML, makeProfileProject, QUANT, SPATIAL, TASK_YAML } from "../support/profileProject";
import { writeRandomLlama } from "../support/randomLlama";
import { waitFor } from "./processes";
import { runCommand, screenshot, waitForNotification, webviewFrame, withWorkbench } from "./workbench";

const MODEL_B = "tiny-llama-b";

/** The profile project with a second model (another seed) and a second benchmark (the same documents under another name). */
async function twoModelProject() {
  const config = CONFIG_YAML.replace("    name: tiny-llama\n", `    name: tiny-llama\n  - path: ./model-b\n    name: ${MODEL_B}\n`).replace(
    "  - task: ./tasks/tiny_yes.yaml\n",
    "  - task: ./tasks/tiny_yes.yaml\n  - task: ./tasks/tiny_again.yaml\n",
  );
  const project = await makeProfileProject({
    config,
    extraFiles: {
      "tasks/tiny_again.yaml": TASK_YAML.replace("task: tiny_yes", "task: tiny_again").replace("tiny_yes.jsonl", "tiny_again.jsonl"),
      "tasks/tiny_again.jsonl": BENCH_DOCS.map((d) => JSON.stringify(d)).join("\n") + "\n",
    },
  });
  writeRandomLlama(path.join(project.root, "model-b"), { seed: 1 });
  return project;
}

async function showRunsView(page: Page): Promise<void> {
  const header = page.locator('.pane-header[aria-label^="Runs"]');
  if (await header.isVisible().catch(() => false)) return;
  await page.locator('.activitybar .action-item a[aria-label^="Benchmark Profiler"]').first().click();
  await header.waitFor({ timeout: 10_000 });
}

/**
 * Compare Profiles… from the row's context menu. A click that lands while the menu is still
 * being laid out can leave it open (seen on a loaded machine): then it is opened and clicked again.
 */
async function compareFromContextMenu(page: Page, row: Locator): Promise<void> {
  const picker = page.locator(".quick-input-widget .quick-input-list");
  for (let attempt = 0; attempt < 3; attempt++) {
    await page.keyboard.press("Escape");
    await row.click({ button: "right" });
    const item = page.getByRole("menuitem", { name: "Compare Profiles…" });
    await item.waitFor({ timeout: 10_000 });
    await item.hover();
    await item.click();
    if (
      await picker.waitFor({ timeout: 5_000 }).then(
        () => true,
        () => false,
      )
    )
      return;
  }
  throw new Error("Compare Profiles… from the Runs view's context menu opened no picker");
}

/**
 * Picks the row of the open quick pick whose label (its aria-label: label, description, detail)
 * matches `label`, with the keyboard: the list re-lays itself out while it opens, so a click can
 * wait on a row that never holds still.
 */
async function pickRow(page: Page, label: RegExp): Promise<void> {
  const rows = page.locator(".quick-input-widget .quick-input-list .monaco-list-row");
  const index = await waitFor(
    async () => {
      const labels = await rows.evaluateAll((all) => all.map((r) => r.getAttribute("aria-label") ?? "")).catch(() => [] as string[]);
      const i = labels.findIndex((l) => label.test(l));
      return i >= 0 ? i : undefined;
    },
    15_000,
    () => `no quick pick row labelled ${String(label)}`,
  );
  await page.locator(".quick-input-widget .quick-input-box input").first().focus();
  for (let i = 0; i < index; i++) await page.keyboard.press("ArrowDown");
  await page.keyboard.press("Enter");
  // picked: the picker closes, or the next one opens without this profile
  await waitFor(
    async () => {
      if (!(await page.locator(".quick-input-widget").isVisible())) return true;
      const labels = await rows.evaluateAll((all) => all.map((r) => r.getAttribute("aria-label") ?? "")).catch(() => [] as string[]);
      return labels.some((l) => label.test(l)) ? undefined : true;
    },
    10_000,
    () => `the quick pick row labelled ${String(label)} was not picked`,
  );
}

test("e2e: Compare Profiles… from the Runs view opens the difference heatmap of two models", { timeout: 400_000 }, async (t) => {
  const project = await twoModelProject();
  t.after(() => fsp.rm(project.root, { recursive: true, force: true, maxRetries: 3 }));

  await withWorkbench(
    t,
    { name: "e2e-compare", workspace: project.root, settings: { "benchmarkProfiler.openResultsWhenDone": false } },
    async ({ page, mark }) => {
      const problems: string[] = [];
      page.on("console", (m) => {
        if (m.type() === "error" && /Content Security Policy|Chart|heatmap|results\.js/i.test(m.text())) problems.push(m.text());
      });
      await runCommand(page, "Benchmark Profiler: Profile");
      await waitForNotification(page, "Profile finished", 240_000, { failOn: /^(Profile failed|No \*\.bprof\.yaml config)/ });
      mark("profile finished");

      await showRunsView(page);
      const runRow = page.locator('.pane:has(.pane-header[aria-label^="Runs"]) .monaco-list-row', { hasText: /^\s*finished/ }).first();
      await runRow.waitFor({ timeout: 15_000 });
      await compareFromContextMenu(page, runRow);
      // Two models of one run: A is picked from the run's profiles, then the one to compare it with.
      await pickRow(page, /^tiny-llama, /);
      await pickRow(page, new RegExp(`^${MODEL_B}, `));
      mark("profiles picked");

      const frame = await webviewFrame(page, "table.numbers.comparison", 30_000);
      const inked = await waitFor(
        async () => {
          const count = await frame.evaluate(() => {
            const c = document.querySelector<HTMLCanvasElement>("#heatmap canvas");
            if (!c || c.width === 0) return 0;
            const data = c.getContext("2d")!.getImageData(0, 0, c.width, c.height).data;
            let n = 0;
            for (let i = 3; i < data.length; i += 4) if (data[i]! > 0) n++;
            return n;
          });
          return count > 1000 ? count : undefined;
        },
        15_000,
        () => "a drawn difference heatmap",
      );
      mark(`difference heatmap drawn (${inked} pixels)`);
      const shown = await frame.evaluate(() => ({
        title: document.querySelector("h2")?.textContent,
        rows: Array.from(document.querySelectorAll("table.numbers.comparison tbody tr")).map((tr) => tr.querySelector("th")?.textContent),
        cells: Array.from(document.querySelectorAll("table.numbers.comparison tbody td")).map((td) => td.textContent ?? ""),
        agreement: Array.from(document.querySelectorAll("table.agreement tbody tr")).map((tr) => tr.querySelector("th")?.textContent),
        meta: document.querySelector("p.muted")?.textContent ?? "",
      }));
      assert.equal(shown.title, "Two profiles compared");
      assert.deepEqual(shown.rows, [QUANT, SPATIAL]);
      // One cell per ability and benchmark: 2 x 2.
      assert.equal(shown.cells.length, 4, JSON.stringify(shown.cells));
      for (const cell of shown.cells) assert.match(cell, /^(n\/a|−?-?\d+\.\d{3}\*?( ⇄)?( \[-?\d+\.\d{3}, -?\d+\.\d{3}\])?)$/);
      assert.deepEqual(shown.agreement, ["tiny_yes", "tiny_again"]);
      assert.match(shown.meta, new RegExp(`A: tiny-llama \\(run .*\\) · B: ${MODEL_B} \\(run .*\\) · k = 0\\.01`));
      await frame.locator("details").evaluate((d) => ((d as HTMLDetailsElement).open = true));
      await screenshot(page, "e2e-compare-heatmap");
      assert.equal(await page.locator(".tabs-container .tab", { hasText: /^Compare tiny-llama − tiny-llama-b/ }).count(), 1);
      assert.deepEqual(problems, []);
    },
  );
});
