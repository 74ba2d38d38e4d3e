// Ctrl-C during `bprof run` on this machine: bprof stops the runner at the next item (it does not
// die with it), says how to resume, and `bprof run --resume` finishes the run in the same folder.
// The same when the runner is killed from outside, or bprof itself is.
import assert from "node:assert/strict";
import { execa } from "execa";
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { bprof, cliPath, runnerPath } from "../support/cli";
import { makeProfileProject } from "../support/profileProject";

let root: string;
let config: string;

before(async () => {
  ({ root, configPath: config } = await makeProfileProject());
  // A longer benchmark, so the interrupt lands while the runner works through it.
  const docs = await fs.readFile(path.join(root, "tasks", "tiny_yes.jsonl"), "utf8");
  await fs.writeFile(path.join(root, "tasks", "tiny_yes.jsonl"), docs.repeat(400));
});
after(async () => fs.rm(root, { recursive: true, force: true }));

test("Ctrl-C stops the local runner cleanly; --resume finishes the run", { timeout: 120_000 }, async () => {
  const child = execa("node", [cliPath, "run", config], { reject: false, env: { BPROF_RUNNER: runnerPath } });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr += String(chunk);
    if (/^tiny-llama baseline \d+\/\d+$/m.test(stderr) && !child.killed) child.kill("SIGINT");
  });
  const cancelled = await child;
  assert.equal(cancelled.signal, undefined, `bprof died of ${cancelled.signal} instead of stopping the runner:\n${cancelled.stderr}`);
  assert.equal(cancelled.exitCode, 130, cancelled.stderr);
  assert.match(cancelled.stderr, /^stopping the run at the next item \(Ctrl-C again to quit now\)$/m);
  assert.match(cancelled.stderr, /^bprof: cancelled: the run was cancelled; start it again to resume$/m);
  const runDir = /^resume with: bprof run --resume (\S+)$/m.exec(cancelled.stderr)?.[1];
  assert.ok(runDir, cancelled.stderr);
  assert.equal(
    await fs.stat(path.join(runDir, "results.json")).then(
      () => true,
      () => false,
    ),
    false,
    "no results from a cancelled run",
  );

  const resumed = await bprof(["run", "--resume", runDir]);
  assert.equal(resumed.exitCode, 0, resumed.stderr);
  const results = JSON.parse(await fs.readFile(path.join(runDir, "results.json"), "utf8"));
  assert.equal(results.models[0].benchmarks[0].items, 3200);
});

/** The pids of a process's children (pgrep -P). */
async function childrenOf(pid: number): Promise<number[]> {
  const found = await execa("pgrep", ["-P", String(pid)], { reject: false });
  return found.stdout.split("\n").filter(Boolean).map(Number);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test(
  "a second bprof on a run folder that is being run is refused (target_busy); when bprof is killed, its runner stops and the run resumes",
  { timeout: 180_000 },
  async () => {
    const child = execa("node", [cliPath, "run", config], { reject: false, env: { BPROF_RUNNER: runnerPath } });
    let stderr = "";
    const started = new Promise<void>((resolve) =>
      child.stderr!.on("data", (chunk: Buffer) => {
        stderr += String(chunk);
        if (/^tiny-llama baseline \d+\/\d+$/m.test(stderr)) resolve();
      }),
    );
    await started;
    const runDir = path.join(root, ".bprof", "runs", (await fs.readdir(path.join(root, ".bprof", "runs"))).sort().at(-1)!);
    const busy = await bprof(["run", "--resume", runDir]);
    assert.equal(busy.exitCode, 1, busy.stderr);
    assert.match(busy.stderr, new RegExp(`^bprof: target_busy: run \\S+ is being run by process ${child.pid} on this machine`, "m"));

    const runners = await childrenOf(child.pid!);
    assert.equal(runners.length, 1, `bprof has one child, its runner: ${runners.join(", ")}`);
    child.kill("SIGKILL");
    await child;
    const deadline = Date.now() + 30_000;
    while (alive(runners[0]!) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(alive(runners[0]!), false, "the runner stops when bprof is gone");

    const resumed = await bprof(["run", "--resume", runDir]);
    assert.equal(resumed.exitCode, 0, resumed.stderr);
    assert.equal(JSON.parse(await fs.readFile(path.join(runDir, "results.json"), "utf8")).models[0].benchmarks[0].items, 3200);
  },
);

test(
  "a runner killed from outside (SIGKILL, as the out-of-memory killer does) says that a resume continues; the resume finishes",
  { timeout: 180_000 },
  async () => {
    const child = execa("node", [cliPath, "run", config], { reject: false, env: { BPROF_RUNNER: runnerPath } });
    let stderr = "";
    let killed = false;
    child.stderr!.on("data", (chunk: Buffer) => {
      stderr += String(chunk);
      if (!killed && /^tiny-llama baseline \d+\/\d+$/m.test(stderr)) {
        killed = true;
        void childrenOf(child.pid!).then((runners) => runners.forEach((pid) => process.kill(pid, "SIGKILL")));
      }
    });
    const ended = await child;
    assert.equal(ended.exitCode, 1, ended.stderr);
    assert.match(
      ended.stderr,
      /^bprof: killed: bprof-runner was killed by SIGKILL \(the system's out-of-memory killer, or someone\) without a final event; a resume continues where it stopped/m,
    );
    const runDir = /^resume with: bprof run --resume (\S+)$/m.exec(ended.stderr)?.[1];
    assert.ok(runDir, ended.stderr);
    const resumed = await bprof(["run", "--resume", runDir]);
    assert.equal(resumed.exitCode, 0, resumed.stderr);
    assert.equal(JSON.parse(await fs.readFile(path.join(runDir, "results.json"), "utf8")).models[0].benchmarks[0].items, 3200);
  },
);
