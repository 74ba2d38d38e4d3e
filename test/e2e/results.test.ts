// End to end: the results webview draws the AIS heatmap of the latest run. The packaged extension
// in code-server profiles a tiny project with abilities (real runner), then "Benchmark Profiler:
// Show Latest Results" opens the webview, whose strict CSP (nonce'd script, no eval) must let
// chart.js draw every heatmap.
// Run: bash scripts/e2e-install.sh && npm run build && npm run package && node --import tsx --test test/e2e/results.test.ts
// Leaves test-results/e2e-results.png and e2e-results-code-server.log.
import assert from "node:assert/strict";
import * as fsp from "node:fs/promises";
import { test } from "node:test";
import { makeProfileProject } from "../support/profileProject";
import { runCommand, waitFor, waitForNotification, webviewFrame, withWorkbench } from "./harness";

test("e2e: Show Latest Results draws the AIS heatmaps in the results webview", { timeout: 300_000 }, async (t) => {
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
    await runCommand(page, "Benchmark Profiler: Show Latest Results");
    const frame = await webviewFrame(page, "canvas", 30_000);
    const drawn = await waitFor(async () => {
      const canvases = await frame.evaluate(() => Array.from(document.querySelectorAll("canvas")).map((c) => {
        const data = c.getContext("2d")!.getImageData(0, 0, c.width, c.height).data;
        let inked = 0;
        for (let i = 3; i < data.length; i += 4) if (data[i]! > 0) inked++;
        return { width: c.width, height: c.height, inked };
      }));
      return canvases.length === 2 && canvases.every((c) => c.inked > 1000) ? canvases : undefined;
    }, 15_000, () => "two drawn heatmaps in the results webview");
    mark(`heatmaps ${JSON.stringify(drawn)}`);
    const text = await frame.evaluate(() => document.body.innerText);
    assert.match(text, /^Run \d{8}-\d{6}-[0-9a-f]{4}$/m);
    assert.match(text, /AIS \(acc\) at k = 0\.01 \(n = \d+ of [\d,]+ parameters, paper importance\)/);
    assert.deepEqual(problems, []);
  });
});
