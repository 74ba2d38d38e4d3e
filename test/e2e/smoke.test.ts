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
import {
  REPO_ROOT,
  loadInstall,
  openWorkbench,
  runCommand,
  screenshot,
  startCodeServer,
  waitForNotification,
  withCleanup,
} from "./harness";

const VSIX = path.join(REPO_ROOT, "dist", "benchmark-profiler.vsix");
const RUNNER = path.join(REPO_ROOT, "native-runner", "build", "bprof-runner");
const PROFILE_TIMEOUT_MS = 120_000;

test("e2e smoke: Benchmark Profiler: Profile runs the tiny project in code-server", { timeout: 240_000 }, async (t) => {
  const started = Date.now();
  const mark = (what: string) => t.diagnostic(`${what} after ${((Date.now() - started) / 1000).toFixed(1)} s`);
  loadInstall(); // fails with "run `bash scripts/e2e-install.sh` first" when .vscode-test lacks code-server
  assert.ok(fs.existsSync(VSIX), `${VSIX} is missing: run \`npm run build && npm run package\` first`);
  assert.ok(fs.existsSync(RUNNER), `${RUNNER} is missing: build the native runner first (npm run setup)`);

  await withCleanup(async (defer) => {
    const workspace = await fsp.mkdtemp(path.join(os.tmpdir(), "bprof-e2e-smoke-"));
    defer(() => fsp.rm(workspace, { recursive: true, force: true, maxRetries: 3 }));
    await makeTinyProject(workspace);

    const server = await startCodeServer({
      vsix: VSIX,
      workspace,
      settings: { "benchmarkProfiler.runnerPath": RUNNER },
      logName: "e2e-smoke-code-server",
      timeoutMs: 60_000,
    });
    defer(() => server.stop());
    mark(`code-server up at ${server.url}`);
    const { page, close } = await openWorkbench(server.url, workspace, { timeoutMs: 60_000 });
    defer(close);
    mark("workbench ready");

    let finished: string;
    try {
      await runCommand(page, "Benchmark Profiler: Profile");
      finished = await waitForNotification(page, "Profile finished", PROFILE_TIMEOUT_MS, {
        failOn: /^(Profile failed|No \*\.bprof\.yaml config)/,
      });
    } catch (e) {
      const shot = await screenshot(page, "e2e-smoke-failure").catch(() => "(no screenshot)");
      const message = e instanceof Error ? e.message : String(e);
      throw new Error(`${message}\nscreenshot: ${shot}\nlog: ${server.logPath}\ncode-server's last log lines:\n${server.logTail(30)}`);
    }
    mark(`notification "${finished}"`);
    assert.match(finished, /^Profile finished: run \S+, \d+ items scored/);

    const runsDir = path.join(workspace, ".bprof", "runs");
    const runs = fs.existsSync(runsDir) ? await fsp.readdir(runsDir) : [];
    assert.equal(runs.length, 1, `expected one run folder in ${runsDir}, found ${JSON.stringify(runs)}`);
    const results = path.join(runsDir, runs[0]!, "results.json");
    assert.ok(fs.existsSync(results), `${results} is missing`);
    assert.ok(finished.includes(runs[0]!), `the notification "${finished}" names run ${runs[0]}`);
    JSON.parse(await fsp.readFile(results, "utf8"));

    await screenshot(page, "e2e-smoke");
  });
});
