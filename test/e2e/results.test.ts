// End to end: the results webview draws the AIS heatmap of the latest run. The packaged extension
// in code-server profiles a tiny project with abilities (real runner), then "Benchmark Profiler:
// Show Latest Results" opens the webview, whose strict CSP (nonce'd script, no eval) must let
// chart.js draw every heatmap.
// Run: bash scripts/e2e-install.sh && npm run build && npm run package && node --import tsx --test test/e2e/results.test.ts
// Leaves test-results/e2e-results.png and e2e-results-code-server.log.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as fsp from "node:fs/promises";
import * as path from "node:path";
import { test } from "node:test";
import { makeProfileProject } from "../support/profileProject";
import {
  REPO_ROOT,
  loadInstall,
  openWorkbench,
  runCommand,
  screenshot,
  startCodeServer,
  waitFor,
  waitForNotification,
  webviewFrame,
  withCleanup,
} from "./harness";

const VSIX = path.join(REPO_ROOT, "dist", "benchmark-profiler.vsix");
const RUNNER = path.join(REPO_ROOT, "native-runner", "build", "bprof-runner");

test("e2e: Show Latest Results draws the AIS heatmaps in the results webview", { timeout: 300_000 }, async (t) => {
  const started = Date.now();
  const mark = (what: string) => t.diagnostic(`${what} after ${((Date.now() - started) / 1000).toFixed(1)} s`);
  loadInstall();
  assert.ok(fs.existsSync(VSIX), `${VSIX} is missing: run \`npm run build && npm run package\` first`);
  assert.ok(fs.existsSync(RUNNER), `${RUNNER} is missing: build the native runner first (npm run setup)`);

  await withCleanup(async (defer) => {
    const project = await makeProfileProject();
    defer(() => fsp.rm(project.root, { recursive: true, force: true, maxRetries: 3 }));
    const server = await startCodeServer({
      vsix: VSIX,
      workspace: project.root,
      settings: { "benchmarkProfiler.runnerPath": RUNNER },
      logName: "e2e-results-code-server",
      timeoutMs: 60_000,
    });
    defer(() => server.stop());
    const { page, close } = await openWorkbench(server.url, project.root, { timeoutMs: 60_000 });
    defer(close);
    mark("workbench ready");
    const problems: string[] = [];
    page.on("console", (m) => {
      // Only the webview's own messages: the workbench logs unrelated errors of its own.
      if (m.type() === "error" && /Content Security Policy|Chart|heatmap|results\.js/i.test(m.text())) problems.push(m.text());
    });

    try {
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
      assert.match(text, /AIS \(acc\) at k = 0\.01 \(n = \d+ of [\d,]+ parameters\)/);
      assert.deepEqual(problems, []);
    } catch (e) {
      const shot = await screenshot(page, "e2e-results-failure").catch(() => "(no screenshot)");
      throw new Error(`${e instanceof Error ? e.message : String(e)}\nscreenshot: ${shot}\nlog: ${server.logPath}\n${server.logTail(30)}`);
    }
    await screenshot(page, "e2e-results");
  });
});
