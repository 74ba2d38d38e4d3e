// End to end: the results view of the latest run. The packaged extension in code-server profiles a
// tiny project with abilities (real runner), and the finished run opens the results view by itself
// (benchmarkProfiler.openResultsWhenDone); the view, whose strict CSP (nonce'd script, no eval, web components of @vscode-elements) must let
// chart.js draw the heatmap; switching k draws the other k's figure, and the table of numbers holds
// the same cells. Showing the results again reveals the same panel.
// Run: bash scripts/e2e-install.sh && npm run build && npm run package && node --import tsx --test test/e2e/results.test.ts
// Leaves test-results/e2e-results.png and e2e-results-code-server.log.
import assert from "node:assert/strict";
import * as fsp from "node:fs/promises";
import { test } from "node:test";
import type { Frame } from "playwright-core";
import { makeProfileProject, QUANT, SPATIAL } from "../support/profileProject";
import { waitFor } from "./processes";
import { runCommand, waitForNotification, webviewFrame, withWorkbench } from "./workbench";

/** The drawn canvases of the view: their size and how many pixels are inked. */
function inked(frame: Frame) {
  return frame.evaluate(() =>
    Array.from(document.querySelectorAll("canvas")).map((c) => {
      const data = c.getContext("2d")!.getImageData(0, 0, c.width, c.height).data;
      let count = 0;
      for (let i = 3; i < data.length; i += 4) if (data[i]! > 0) count++;
      return { width: c.width, height: c.height, inked: count };
    }),
  );
}

test("e2e: Show Latest Results draws the AIS heatmap; switching k draws the other k's", { timeout: 300_000 }, async (t) => {
  const project = await makeProfileProject();
  t.after(() => fsp.rm(project.root, { recursive: true, force: true, maxRetries: 3 }));

  await withWorkbench(t, { name: "e2e-results", workspace: project.root }, async ({ page, mark }) => {
    const problems: string[] = [];
    page.on("console", (m) => {
      // Only the webview's own messages: the workbench logs unrelated errors of its own.
      if (m.type() === "error" && /Content Security Policy|Chart|heatmap|results\.js/i.test(m.text())) problems.push(m.text());
    });

    await runCommand(page, "Benchmark Profiler: Profile");
    await waitForNotification(page, "Profile finished", 120_000, { failOn: /^(Profile failed|No \*\.bprof\.yaml config)/ });
    mark("profile finished");
    // The finished run opens its results by itself (benchmarkProfiler.openResultsWhenDone, on by default).
    const frame = await webviewFrame(page, "canvas", 30_000);
    const drawn = await waitFor(
      async () => {
        const canvases = await inked(frame);
        return canvases.length === 1 && canvases[0]!.inked > 1000 ? canvases : undefined;
      },
      15_000,
      () => "a drawn heatmap in the results view",
    );
    mark(`heatmap ${JSON.stringify(drawn)}`);
    // The figure fits its panel: its row names and colour bar are in view without scrolling.
    const fit = await frame.evaluate(() => {
      const canvas = document.querySelector("#heatmap canvas")!;
      return { shown: canvas.getBoundingClientRect().width, room: canvas.parentElement!.clientWidth };
    });
    assert.ok(fit.shown <= fit.room + 1, `the heatmap (${fit.shown} px) fits its panel (${fit.room} px)`);
    const text = await frame.evaluate(() => document.body.innerText);
    assert.match(text, /^Run \d{8}-\d{6}-[0-9a-f]{4}$/m);
    const table = async () => (await frame.locator("table.numbers").textContent()) ?? "";
    assert.match(await table(), new RegExp(`${QUANT}[\\s\\S]*${SPATIAL}`));
    assert.equal(
      await frame.evaluate(() => (document.getElementById("k") as HTMLElement & { value: string }).value),
      "0.01",
      "the largest k first",
    );

    await frame.locator("#k").click();
    await frame.getByRole("option", { name: "0.001", exact: true }).click();
    await waitFor(
      async () =>
        (await frame.evaluate(() => (document.getElementById("k") as HTMLElement & { value: string }).value)) === "0.001" || undefined,
      10_000,
      () => "k never switched",
    );
    await waitFor(
      async () => (await inked(frame))[0]!.inked > 1000 || undefined,
      15_000,
      () => "the heatmap of k = 0.001 was not drawn",
    );

    await runCommand(page, "Benchmark Profiler: Show Latest Results");
    assert.equal(
      await page.locator(".tabs-container .tab", { hasText: /^Results / }).count(),
      1,
      "the open panel is revealed, not opened twice",
    );
    assert.deepEqual(problems, []);
  });
});
