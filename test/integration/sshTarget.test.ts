// `target: ssh` against a real OpenSSH server on 127.0.0.1: the job is copied to the host, the
// runner runs there and streams its progress back, its output comes back, and the results equal
// a local run's. The model's weights live only at `remote_path`; the config's folder holds just
// what prompts are made from. Then: a cancelled run leaves no runner behind on the host and
// resumes there; an unreachable host and a missing runner get messages that say what to do. With
// no runner named, bprof copies the runner's sources to the host and builds it there, once.
import assert from "node:assert/strict";
import { execa } from "execa";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { freePort } from "../support/ports";
import { bprof, cliPath, runnerPath } from "../support/cli";
import { CONFIG_YAML, makeProfileProject } from "../support/profileProject";
import { assertSameProfile } from "../support/runFolder";
import { startSshServer, type SshServer } from "../support/sshServer";

let server: SshServer;
let root: string;
/** The "host's" side: the model's weights and the runs' workdir, in a folder of their own. */
let remote: string;

before(async () => {
  remote = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-remote-"));
  // The host's caches (the runner it builds) in the host's folder, not in this user's home.
  server = await startSshServer({ env: { XDG_CACHE_HOME: path.join(remote, "cache") } });
  ({ root } = await makeProfileProject());
  await fs.rename(path.join(root, "model"), path.join(remote, "model"));
  // This machine keeps config.json and the tokenizer files only.
  await fs.mkdir(path.join(root, "model"));
  for (const file of ["config.json", "tokenizer.json", "tokenizer_config.json"]) {
    await fs.copyFile(path.join(remote, "model", file), path.join(root, "model", file));
  }
});
after(async () => {
  await server?.stop();
  await fs.rm(root, { recursive: true, force: true });
  await fs.rm(remote, { recursive: true, force: true });
});

function sshTarget(fields: Record<string, string | number>): string {
  const lines = Object.entries(fields).map(([k, v]) => `    ${k}: ${typeof v === "string" ? JSON.stringify(v) : v}`);
  const options = Object.entries(server.options).map(([k, v]) => `      ${k}: ${JSON.stringify(v)}`);
  return `target:\n  ssh:\n${lines.join("\n")}\n    options:\n${options.join("\n")}\n`;
}

/** The shared config with one thread (so two runs give identical bytes), the target and the remote model path. */
async function writeConfig(name: string, target: string, modelPath = path.join(remote, "model")): Promise<string> {
  const text =
    CONFIG_YAML.replace("    name: tiny-llama\n", `    name: tiny-llama\n    remote_path: ${JSON.stringify(modelPath)}\n`) +
    `threads: 1\n${target}`;
  const file = path.join(root, name);
  await fs.writeFile(file, text);
  return file;
}

async function onlyRun(outputDir: string): Promise<string> {
  const runs = await fs.readdir(path.join(outputDir, "runs"));
  assert.equal(runs.length, 1, `one run expected in ${outputDir}: ${runs.join(", ")}`);
  return path.join(outputDir, "runs", runs[0]!);
}

function targetFields(extra: Record<string, string | number> = {}): Record<string, string | number> {
  return {
    host: "127.0.0.1",
    port: server.port,
    identity_file: server.identityFile,
    runner: runnerPath,
    workdir: path.join(remote, "runs"),
    ...extra,
  };
}

test("a profile runs over SSH on the host's copy of the model and gives the local run's results", { timeout: 120_000 }, async () => {
  const config = await writeConfig("ssh.bprof.yaml", sshTarget(targetFields()) + "output: .bprof-ssh\n");
  const result = await bprof(["run", config]);
  assert.equal(result.exitCode, 0, `bprof run over SSH failed:\n${result.stderr}\n${result.stdout}`);
  assert.match(result.stderr, new RegExp(`^target: 127\\.0\\.0\\.1:${server.port} over SSH$`, "m"));
  assert.match(result.stderr, /^tiny-llama importance · Quantitative Reasoning \d+\/\d+$/m, "progress streams back over the connection");
  assert.match(result.stderr, /^tiny-llama variant Spatial Reasoning · top · k 0\.01, n \d+$/m);
  assert.match(await server.log(), /Accepted publickey for \S+ from 127\.0\.0\.1/, "the run logged in through this sshd");

  const runDir = await onlyRun(path.join(root, ".bprof-ssh"));
  const runId = path.basename(runDir);
  const job = JSON.parse(await fs.readFile(path.join(runDir, "models", "tiny-llama", "job.json"), "utf8"));
  assert.equal(job.model.path, path.join(remote, "model"), "the job names the model where the host has it");
  const hostDir = path.join(remote, "runs", runId, "models", "tiny-llama");
  const onHost = (await fs.readdir(path.join(hostDir, "runner"))).sort();
  const copiedBack = (await fs.readdir(path.join(runDir, "models", "tiny-llama", "runner"))).sort();
  assert.ok(onHost.includes("baseline.jsonl"), `the runner wrote its output on the host: ${onHost.join(", ")}`);
  assert.deepEqual(copiedBack, onHost, "the runner's output came back whole");

  // The same config on this machine, with the weights where the runner can read them here.
  const local = await writeConfig("local.bprof.yaml", "output: .bprof-local\n");
  await fs.copyFile(path.join(remote, "model", "model.safetensors"), path.join(root, "model", "model.safetensors"));
  try {
    const localResult = await bprof(["run", local]);
    assert.equal(localResult.exitCode, 0, localResult.stderr);
  } finally {
    await fs.rm(path.join(root, "model", "model.safetensors"));
  }
  const localRun = await onlyRun(path.join(root, ".bprof-local"));
  const profileOf = async (dir: string) => JSON.parse(await fs.readFile(path.join(dir, "results.json"), "utf8")).models[0].profile;
  const [overSsh, here] = [await profileOf(runDir), await profileOf(localRun)];
  const targetOf = async (dir: string) => JSON.parse(await fs.readFile(path.join(dir, "results.json"), "utf8")).target;
  assert.equal(await targetOf(runDir), `127.0.0.1:${server.port} over SSH`);
  assert.equal(await targetOf(localRun), "this machine");
  assert.ok(overSsh.variants.length > 0);
  assertSameProfile(overSsh, here, "AIS, intervals, flips and overlap equal the local run's");
});

test("Ctrl-C stops the runner on the host; --resume continues there", { timeout: 180_000 }, async () => {
  // A longer benchmark, so the cancel lands while the runner works through it.
  const docs = (await fs.readFile(path.join(root, "tasks", "tiny_yes.jsonl"), "utf8")).repeat(400);
  await fs.writeFile(path.join(root, "tasks", "long.jsonl"), docs);
  await fs.writeFile(
    path.join(root, "tasks", "long.yaml"),
    (await fs.readFile(path.join(root, "tasks", "tiny_yes.yaml"), "utf8"))
      .replace("task: tiny_yes", "task: long")
      .replace("tiny_yes.jsonl", "long.jsonl"),
  );
  const config = await writeConfig("slow.bprof.yaml", sshTarget(targetFields()) + "output: .bprof-slow\n");
  await fs.writeFile(config, (await fs.readFile(config, "utf8")).replace("./tasks/tiny_yes.yaml", "./tasks/long.yaml"));

  const child = execa("node", [cliPath, "run", config], { reject: false, env: { BPROF_RUNNER: runnerPath } });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr += String(chunk);
    if (/^tiny-llama baseline \d+\/\d+$/m.test(stderr) && !child.killed) child.kill("SIGINT");
  });
  const cancelled = await child;
  assert.equal(cancelled.signal, undefined, `bprof was killed (${cancelled.signal}) instead of stopping the run:\n${cancelled.stderr}`);
  assert.equal(cancelled.exitCode, 130, `cancelled run:\n${cancelled.stderr}`);
  assert.match(cancelled.stderr, /bprof: cancelled: the run was cancelled on 127\.0\.0\.1:\d+; start it again to resume/);
  const runDir = await onlyRun(path.join(root, ".bprof-slow"));
  assert.match(cancelled.stderr, new RegExp(`resume with: bprof run --resume ${runDir.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));

  const hostDir = path.join(remote, "runs", path.basename(runDir), "models", "tiny-llama");
  const pid = Number((await fs.readFile(path.join(hostDir, "runner.pid"), "utf8")).trim());
  assert.throws(() => process.kill(pid, 0), /ESRCH/, `the runner (pid ${pid}) is gone from the host`);

  // A runner of this run that still runs on the host (as after a dropped connection): resume waits for it.
  const stale = execa("bash", ["-c", "sleep 60; true", "runner", "--job", "job.json", "--out", "runner"], { reject: false });
  await fs.writeFile(path.join(hostDir, "runner.pid"), `${stale.pid}\n`);
  const busy = await bprof(["run", "--resume", runDir]);
  stale.kill("SIGKILL");
  await stale;
  assert.equal(busy.exitCode, 1, busy.stderr);
  assert.match(
    busy.stderr,
    new RegExp(`bprof: target_busy: a bprof-runner of this run still runs on 127\\.0\\.0\\.1:\\d+ \\(pid ${stale.pid}, `),
  );

  const resumed = await bprof(["run", "--resume", runDir]);
  assert.equal(resumed.exitCode, 0, `resume over SSH failed:\n${resumed.stderr}`);
  assert.ok(JSON.parse(await fs.readFile(path.join(runDir, "results.json"), "utf8")).models[0].profile.variants.length > 0);
});

test("an unreachable host and a runner missing on the host are errors that say what to check", { timeout: 60_000 }, async () => {
  const closedPort = await freePort();
  const unreachable = await writeConfig("down.bprof.yaml", sshTarget(targetFields({ port: closedPort })) + "output: .bprof-down\n");
  const down = await bprof(["run", unreachable]);
  assert.equal(down.exitCode, 1, down.stderr);
  assert.match(
    down.stderr,
    new RegExp(`bprof: target_unreachable: cannot reach 127\\.0\\.0\\.1:${closedPort} over SSH: .*Connection refused.*Check target\\.ssh`),
  );
  assert.match(down.stderr, /resume with: bprof run --resume /);

  const missing = await writeConfig(
    "norunner.bprof.yaml",
    sshTarget(targetFields({ runner: "/nonexistent/bprof-runner" })) + "output: .bprof-norunner\n",
  );
  const noRunner = await bprof(["run", missing]);
  assert.equal(noRunner.exitCode, 1, noRunner.stderr);
  assert.match(
    noRunner.stderr,
    /bprof: runner_not_found: bprof-runner not found on 127\.0\.0\.1:\d+ at `\/nonexistent\/bprof-runner`: target\.ssh\.runner names none: fix it, or leave it out/,
  );
});

test("bprof validate asks the SSH target: host, runner, model folder; and says what is wrong", { timeout: 60_000 }, async () => {
  const good = await writeConfig("check.bprof.yaml", sshTarget(targetFields()));
  const ok = await bprof(["validate", good]);
  assert.equal(ok.exitCode, 0, ok.stderr);
  assert.match(ok.stdout, new RegExp(`^target: 127\\.0\\.0\\.1:${server.port} over SSH$`, "m"));
  assert.match(ok.stdout, /^ {2}ok: reached 127\.0\.0\.1:\d+ over SSH$/m);
  // the runner the config names is looked for, not run: a config may come with a repository
  assert.match(
    ok.stdout,
    /^ {2}ok: bprof-runner at `\S+bprof-runner` on 127\.0\.0\.1:\d+ is an executable file \(not run before the run itself\)$/m,
  );
  assert.match(ok.stdout, /^ {2}ok: model `tiny-llama`: \S+model on 127\.0\.0\.1:\d+ \(config\.json, 1 safetensors file\)$/m);

  const wrongPath = await writeConfig("check-path.bprof.yaml", sshTarget(targetFields()), path.join(remote, "nowhere"));
  const bad = await bprof(["validate", wrongPath]);
  assert.equal(bad.exitCode, 1, bad.stdout);
  assert.match(
    bad.stderr,
    /^ {2}error: model `tiny-llama`: \S+nowhere on 127\.0\.0\.1:\d+ has no config\.json \(or does not exist\); set models\[\]\.remote_path/m,
  );
  const offline = await bprof(["validate", "--no-target", wrongPath]);
  assert.equal(offline.exitCode, 0, "--no-target checks this machine only");
  assert.doesNotMatch(offline.stdout, /target:/);

  // a runner inside the clone, on a host where the user's keys work: validate never starts it
  const marker = path.join(root, "runner-was-started");
  const planted = path.join(root, "tools", "runner.sh");
  await fs.mkdir(path.dirname(planted), { recursive: true });
  await fs.writeFile(planted, `#!/bin/sh\ntouch ${JSON.stringify(marker)}\necho "bprof-runner 0.1.0 (protocol 1)"\n`, { mode: 0o755 });
  const repository = await writeConfig("check-planted.bprof.yaml", sshTarget(targetFields({ runner: planted })));
  for (const flags of [[], ["--no-task-python"]]) {
    const checked = await bprof(["validate", ...flags, repository]);
    assert.equal(checked.exitCode, 0, checked.stderr);
    assert.match(checked.stdout, /runner\.sh` on 127\.0\.0\.1:\d+ is an executable file \(not run before the run itself\)/);
    await assert.rejects(fs.access(marker), "validate did not start the runner the config names");
  }

  const down = await writeConfig("check-down.bprof.yaml", sshTarget(targetFields({ port: await freePort() })));
  const unreachable = await bprof(["validate", down]);
  assert.equal(unreachable.exitCode, 1);
  assert.match(unreachable.stderr, /^ {2}error: cannot reach 127\.0\.0\.1:\d+ over SSH: .*Connection refused/m);
});

test(
  "with no runner named, bprof builds one on the host from the bundled sources, once, and runs it there",
  { timeout: 600_000 },
  async () => {
    const fields = targetFields();
    delete fields.runner;
    const config = await writeConfig("build.bprof.yaml", sshTarget(fields) + "output: .bprof-build\n");
    const cache = path.join(remote, "cache", "bprof", "runner");

    // a host that never built the runner: no estimate of the build's length (no guess from its cores)
    const before = await bprof(["validate", config]);
    assert.equal(before.exitCode, 0, before.stderr);
    assert.match(before.stdout, /^ {2}ok: bprof-runner is built on 127\.0\.0\.1:\d+ on the first run, against libtorch \S+$/m);

    const first = await bprof(["run", config], { timeout: 540_000 });
    assert.equal(first.exitCode, 0, `${first.stderr}\n${first.stdout}`);
    assert.match(first.stderr, /^tiny-llama: building bprof-runner on 127\.0\.0\.1:\d+ from the bundled sources, once for this version$/m);
    assert.match(first.stderr, /^bprof-runner compile \d+\/\d+, /m, "the build's progress streams back");
    const sources = await fs.readdir(path.join(cache, "sources"));
    assert.equal(sources.length, 1, "one version's sources on the host");
    assert.deepEqual((await fs.readdir(path.join(cache, "sources", sources[0]!))).sort(), ["CMakeLists.txt", "build-runner.sh", "src"]);
    const builds = (await fs.readdir(cache)).filter((d) => /^[0-9a-f]{16}$/.test(d));
    assert.equal(builds.length, 1, `one build in ${cache}`);
    const built = path.join(cache, builds[0]!, "bprof-runner");
    assert.match((await execa(built, ["--version"])).stdout, /^bprof-runner \d+\.\d+\.\d+ \(protocol 1/);
    const runDir = await onlyRun(path.join(root, ".bprof-build"));
    assert.ok(JSON.parse(await fs.readFile(path.join(runDir, "results.json"), "utf8")).models[0].profile.variants.length > 0);

    const after = await bprof(["validate", config]);
    assert.match(after.stdout, /^ {2}ok: bprof-runner \d+\.\d+\.\d+ \(protocol 1, /m);
    assert.ok(after.stdout.includes(`at \`${built}\` on 127.0.0.1`), after.stdout);
    const second = await bprof(["run", config]);
    assert.equal(second.exitCode, 0, second.stderr);
    assert.doesNotMatch(second.stderr, /building bprof-runner/, "the second run finds the runner built");
  },
);
