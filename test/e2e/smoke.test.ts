// End-to-end smoke test: the packaged extension in code-server, driven in Chromium, profiles the
// tiny project from the command palette with the real runner.
// Run: bash scripts/e2e-install.sh && node --import tsx --test test/e2e/smoke.test.ts
// Needs dist/benchmark-profiler.vsix (npm run build && npm run package) and
// native-runner/build/bprof-runner. Leaves test-results/e2e-smoke.png and e2e-smoke-code-server.log.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as fsp from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { makeTinyProject } from "../support/tinyProject";
import { runCommand, waitForNotification, withWorkbench } from "./workbench";

const PROFILE_TIMEOUT_MS = 120_000;

test("e2e smoke: Benchmark Profiler: Profile runs the tiny project in code-server", { timeout: 240_000 }, async (t) => {
  const workspace = await fsp.mkdtemp(path.join(os.tmpdir(), "bprof-e2e-smoke-"));
  t.after(() => fsp.rm(workspace, { recursive: true, force: true, maxRetries: 3 }));
  await makeTinyProject(workspace);

  await withWorkbench(t, { name: "e2e-smoke", workspace }, async ({ page, mark }) => {
    await runCommand(page, "Benchmark Profiler: Profile");
    const finished = await waitForNotification(page, "Profile finished", PROFILE_TIMEOUT_MS, {
      failOn: /^(Profile failed|No \*\.bprof\.yaml config)/,
    });
    mark(`notification "${finished}"`);
    assert.match(finished, /^Profile finished: run \S+, \d+ items scored/);

    const runsDir = path.join(workspace, ".bprof", "runs");
    const runs = fs.existsSync(runsDir) ? await fsp.readdir(runsDir) : [];
    assert.equal(runs.length, 1, `expected one run folder in ${runsDir}, found ${JSON.stringify(runs)}`);
    const results = path.join(runsDir, runs[0]!, "results.json");
    assert.ok(fs.existsSync(results), `${results} is missing`);
    assert.ok(finished.includes(runs[0]!), `the notification "${finished}" names run ${runs[0]}`);
    JSON.parse(await fsp.readFile(results, "utf8"));
  });
});
