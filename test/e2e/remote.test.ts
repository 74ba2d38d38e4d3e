// End to end: "Benchmark Profiler: Validate Config" and "Profile" in code-server on a config
// whose target is a host over SSH (a real sshd on 127.0.0.1). The model's weights exist only at the config's
// `remote_path`, so the profile can only finish if the runner ran through the SSH target.
// Run: bash scripts/e2e-install.sh && npm run build && npm run package && node --import tsx --test test/e2e/remote.test.ts
// Leaves test-results/e2e-remote.png, e2e-remote-named-runner.png (Profile asks before the runner the
// config names) and e2e-remote-code-server.log.
import assert from "node:assert/strict";
import * as fsp from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { makeProfileProject } from "../support/profileProject";
import { startSshServer } from "../support/sshServer";
import { RUNNER } from "./install";
import { runCommand, screenshot, waitForNotification, withWorkbench } from "./workbench";

test("e2e: Profile runs on an SSH target from the command palette", { timeout: 300_000 }, async (t) => {
  const server = await startSshServer();
  t.after(() => server.stop());
  const project = await makeProfileProject();
  const remote = await fsp.mkdtemp(path.join(os.tmpdir(), "bprof-e2e-remote-"));
  t.after(() => Promise.all([project.root, remote].map((dir) => fsp.rm(dir, { recursive: true, force: true, maxRetries: 3 }))));
  await fsp.rename(path.join(project.root, "model", "model.safetensors"), path.join(remote, "model.safetensors"));
  for (const file of ["config.json", "tokenizer.json", "tokenizer_config.json"])
    await fsp.copyFile(path.join(project.root, "model", file), path.join(remote, file));
  const options = Object.entries(server.options)
    .map(([k, v]) => `      ${k}: ${JSON.stringify(v)}`)
    .join("\n");
  const config =
    (await fsp.readFile(project.configPath, "utf8")).replace(
      "    name: tiny-llama\n",
      `    name: tiny-llama\n    remote_path: ${JSON.stringify(remote)}\n`,
    ) +
    `target:\n  ssh:\n    host: 127.0.0.1\n    port: ${server.port}\n    identity_file: ${JSON.stringify(server.identityFile)}\n    runner: ${JSON.stringify(RUNNER)}\n` +
    `    workdir: ${JSON.stringify(path.join(remote, "runs"))}\n    options:\n${options}\n`;
  await fsp.writeFile(project.configPath, config);

  await withWorkbench(t, { name: "e2e-remote", workspace: project.root }, async ({ page, mark }) => {
    await runCommand(page, "Benchmark Profiler: Validate Config");
    const checked = await waitForNotification(page, "config OK", 60_000, { failOn: /error\(s\)|cannot reach|not found/ });
    assert.equal(checked, `profile.bprof.yaml: config OK; 127.0.0.1:${server.port} over SSH is ready (3 checks)`);
    mark("target checked");
    await runCommand(page, "Benchmark Profiler: Profile");
    // the config names its runner: a program of the config's, run only once the user says so
    const dialog = page.locator(".monaco-dialog-box");
    await dialog.waitFor({ state: "visible", timeout: 30_000 });
    const asked = await dialog.innerText();
    assert.match(
      asked,
      new RegExp(`names the runner to start on 127\\.0\\.0\\.1:${server.port}: .*bprof-runner \\(target\\.ssh\\.runner\\)`),
    );
    assert.match(asked, /not the runner Benchmark Profiler builds/);
    await screenshot(page, "e2e-remote-named-runner");
    await dialog.getByRole("button", { name: "Run It" }).click();
    await dialog.waitFor({ state: "hidden", timeout: 10_000 });
    mark("named runner allowed");
    const finished = await waitForNotification(page, "Profile finished", 120_000, {
      failOn: /^(Profile failed|No \*\.bprof\.yaml config)/,
    });
    mark(`notification "${finished}"`);
    const runId = /run (\d{8}-\d{6}-[0-9a-f]{4})/.exec(finished)?.[1];
    assert.ok(runId, finished);
    const onHost = await fsp.readdir(path.join(remote, "runs", runId, "models", "tiny-llama", "runner"));
    assert.ok(onHost.includes("baseline.jsonl"), `the runner wrote on the host: ${onHost.join(", ")}`);
    assert.ok((await fsp.stat(path.join(project.root, ".bprof", "runs", runId, "results.json"))).isFile());
    assert.match(await server.log(), /Accepted publickey for \S+ from 127\.0\.0\.1/);
  });
});
