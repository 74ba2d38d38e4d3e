// `target: slurm` against real Slurm daemons on this machine (test/support/slurmCluster.ts): a
// profile submitted with sbatch from this machine and from a login node over SSH (a real sshd),
// its progress read from the job's event file as it grows, results equal to a local run's. Then
// the ways a job ends early: Ctrl-C cancels the job (scancel) and --resume submits again; a run
// whose client died follows its job, still queued, on --resume instead of submitting another;
// sbatch's refusal names the config fields to check. And a submit host that cannot build the
// runner (no libtorch there): the job builds it on its node, then runs it.
import assert from "node:assert/strict";
import { execa } from "execa";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { loadProfile } from "../../src/core/config/load";
import { runProfile } from "../../src/core/run/runProfile";
import { bprof, cliPath, repoRoot, runnerPath } from "../support/cli";
import { CONFIG_YAML, makeProfileProject } from "../support/profileProject";
import { assertSameProfile } from "../support/runFolder";
import { startSlurmCluster, type SlurmCluster } from "../support/slurmCluster";
import { loginNodeYaml, startSshServer, type SshServer } from "../support/sshServer";

let cluster: SlurmCluster;
let login: SshServer;
let root: string;

before(
  async () => {
    cluster = await startSlurmCluster();
    // The login node's sessions know the cluster, as /etc/slurm/slurm.conf would tell them.
    login = await startSshServer({ env: cluster.env });
    ({ root } = await makeProfileProject());
  },
  { timeout: 120_000 },
);
after(async () => {
  await login?.stop();
  await cluster?.stop();
  await fs.rm(root, { recursive: true, force: true });
});

/** The shared config, one runner thread, and a Slurm target polled twice a second. */
async function writeConfig(name: string, slurmFields: string): Promise<string> {
  const file = path.join(root, name);
  const output = `.bprof-${path.basename(name, ".bprof.yaml")}`;
  await fs.writeFile(
    file,
    `${CONFIG_YAML}threads: 1\noutput: ${output}\ntarget:\n  slurm:\n    partition: ${cluster.partition}\n    poll_seconds: 0.5\n${slurmFields}`,
  );
  return file;
}

function run(args: string[]) {
  return bprof(args, { env: cluster.env });
}

async function onlyRun(config: string): Promise<string> {
  const output = path.join(root, `.bprof-${path.basename(config, ".bprof.yaml")}`);
  const runs = await fs.readdir(path.join(output, "runs"));
  assert.equal(runs.length, 1, `one run expected in ${output}: ${runs.join(", ")}`);
  return path.join(output, "runs", runs[0]!);
}

async function profileOf(runDir: string): Promise<unknown> {
  return JSON.parse(await fs.readFile(path.join(runDir, "results.json"), "utf8")).models[0].profile;
}

let localProfile: unknown;
test("the same profile on this machine, for comparison", { timeout: 60_000 }, async () => {
  const file = path.join(root, "local.bprof.yaml");
  await fs.writeFile(file, `${CONFIG_YAML}threads: 1\noutput: .bprof-local\n`);
  const result = await run(["run", file]);
  assert.equal(result.exitCode, 0, result.stderr);
  localProfile = await profileOf(await onlyRun(file));
});

test(
  "a profile submitted from this machine runs as a Slurm job, shows its progress and gives the local results",
  { timeout: 120_000 },
  async () => {
    const config = await writeConfig("here.bprof.yaml", "");
    const result = await run(["run", config]);
    assert.equal(result.exitCode, 0, `bprof run on Slurm failed:\n${result.stderr}`);
    const id = /^tiny-llama: submitted Slurm job (\d+) on this machine$/m.exec(result.stderr)?.[1];
    assert.ok(id, `a submission line:\n${result.stderr}`);
    // The job's states as the poller saw them: queued or running (a short job may show only one), then done.
    assert.match(
      result.stderr,
      new RegExp(`^tiny-llama: Slurm job ${id} (pending.*|running on \\S+)$[^]*^tiny-llama: Slurm job ${id} completed$`, "m"),
    );
    assert.match(result.stderr, /^tiny-llama importance · Spatial Reasoning \d+\/\d+$/m, "progress read from the job's event file");
    assert.match(result.stderr, /^tiny-llama variant Quantitative Reasoning · top · k 0\.001, n \d+$/m);

    const runDir = await onlyRun(config);
    const modelDir = path.join(runDir, "models", "tiny-llama");
    const files = await fs.readdir(modelDir);
    for (const file of ["bprof.sbatch", "slurm.json", `slurm-${id}.events.jsonl`, `slurm-${id}.out`, "runner"])
      assert.ok(files.includes(file), `${file} in ${files.join(", ")}`);
    const state = await execa("scontrol", ["show", "job", "-o", id!], { env: cluster.env });
    assert.match(String(state.stdout), /JobState=COMPLETED/);
    assert.match(String(state.stdout), new RegExp(`Partition=${cluster.partition}\\b`));
    assertSameProfile(await profileOf(runDir), localProfile, "AIS, intervals, flips and overlap equal the local run's");
  },
);

test("submitted from a login node over SSH: job and output in the remote workdir, results copied back", { timeout: 120_000 }, async () => {
  const remote = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-login-"));
  try {
    const config = await writeConfig(
      "login.bprof.yaml",
      [`    runner: ${JSON.stringify(runnerPath)}`, `    workdir: ${JSON.stringify(remote)}`, ...loginNodeYaml(login), ""].join("\n"),
    );
    // No SLURM_CONF here: only the login node's sessions know the cluster.
    const result = await bprof(["run", config]);
    assert.equal(result.exitCode, 0, `bprof run on Slurm over SSH failed:\n${result.stderr}`);
    assert.match(result.stderr, new RegExp(`^tiny-llama: submitted Slurm job \\d+ on 127\\.0\\.0\\.1:${login.port}$`, "m"));
    const runDir = await onlyRun(config);
    const onHost = path.join(remote, path.basename(runDir), "models", "tiny-llama");
    assert.ok((await fs.readdir(onHost)).includes("bprof.sbatch"));
    assert.deepEqual(
      (await fs.readdir(path.join(runDir, "models", "tiny-llama", "runner"))).sort(),
      (await fs.readdir(path.join(onHost, "runner"))).sort(),
    );
    assertSameProfile(await profileOf(runDir), localProfile);
  } finally {
    await fs.rm(remote, { recursive: true, force: true });
  }
});

/** A job that holds the whole node until cancelled, so the next job waits in the queue. */
async function occupyNode(): Promise<{ release(): Promise<void> }> {
  const slurm = (command: string, args: string[]) => execa(command, args, { env: cluster.env });
  const id = String(
    (await slurm("sbatch", ["--parsable", `--partition=${cluster.partition}`, "--exclusive", "--output=/dev/null", "--wrap", "sleep 300"]))
      .stdout,
  ).trim();
  const deadline = Date.now() + 30_000;
  while (!/JobState=RUNNING/.test(String((await slurm("scontrol", ["show", "job", "-o", id])).stdout))) {
    assert.ok(Date.now() < deadline, `the blocking job ${id} never started`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return { release: async () => void (await slurm("scancel", [id])) };
}

/** bprof as a child process, with a hook on its stderr as it comes. */
function startBprof(args: string[], onStderr: (stderr: string, child: ReturnType<typeof execa>) => void) {
  const child = execa("node", [cliPath, ...args], { reject: false, env: { BPROF_RUNNER: runnerPath, ...cluster.env } });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => onStderr((stderr += String(chunk)), child));
  return child;
}

test("Ctrl-C cancels the queued Slurm job; --resume submits a new one that finishes", { timeout: 120_000 }, async () => {
  const config = await writeConfig("cancel.bprof.yaml", "");
  const node = await occupyNode();
  let cancelled;
  try {
    cancelled = await startBprof(["run", config], (stderr, child) => {
      if (/Slurm job \d+ pending \(Resources\)/.test(stderr) && !child.killed) child.kill("SIGINT");
    });
  } finally {
    await node.release();
  }
  assert.equal(cancelled.exitCode, 130, `cancelled run:\n${cancelled.stderr}`);
  const id = /submitted Slurm job (\d+)/.exec(cancelled.stderr)![1]!;
  assert.match(cancelled.stderr, new RegExp(`^tiny-llama: Slurm job ${id} pending \\(Resources\\)$`, "m"), "the queue state is shown");
  assert.match(cancelled.stderr, new RegExp(`^tiny-llama: cancelling Slurm job ${id}$`, "m"));
  assert.match(cancelled.stderr, /bprof: cancelled: the run was cancelled in Slurm job \d+; start it again to resume/);
  assert.match(String((await execa("scontrol", ["show", "job", "-o", id], { env: cluster.env })).stdout), /JobState=CANCELLED/);

  const resumed = await run(["run", "--resume", await onlyRun(config)]);
  assert.equal(resumed.exitCode, 0, `resume on Slurm failed:\n${resumed.stderr}`);
  const again = /submitted Slurm job (\d+)/.exec(resumed.stderr)?.[1];
  assert.ok(again && again !== id, `a new job after the cancelled one:\n${resumed.stderr}`);
  assertSameProfile(await profileOf(await onlyRun(config)), localProfile);
});

test("a run whose client died follows its queued job on --resume instead of submitting another", { timeout: 120_000 }, async () => {
  const config = await writeConfig("detach.bprof.yaml", "");
  const node = await occupyNode();
  try {
    // SIGKILL: no handler runs, as when a laptop's lid closes.
    const killed = await startBprof(["run", config], (stderr, child) => {
      if (/submitted Slurm job/.test(stderr) && !child.killed) child.kill("SIGKILL");
    });
    const id = /submitted Slurm job (\d+)/.exec(String(killed.stderr))![1]!;
    const resumed = startBprof(["run", "--resume", await onlyRun(config)], (stderr) => {
      if (stderr.includes(`following Slurm job ${id}`)) void node.release();
    });
    const result = await resumed;
    assert.equal(result.exitCode, 0, `resume failed:\n${result.stderr}`);
    assert.match(result.stderr, new RegExp(`^tiny-llama: following Slurm job ${id}, still queued or running from before$`, "m"));
    assert.doesNotMatch(result.stderr, /submitted Slurm job/);
    assert.match(result.stderr, new RegExp(`^tiny-llama: Slurm job ${id} completed$`, "m"));
  } finally {
    await node.release();
  }
  assertSameProfile(await profileOf(await onlyRun(config)), localProfile);
});

test("sbatch's refusal is an error that names what to check", { timeout: 60_000 }, async () => {
  const config = await writeConfig("refused.bprof.yaml", "");
  await fs.writeFile(config, (await fs.readFile(config, "utf8")).replace(`partition: ${cluster.partition}`, "partition: nosuchpartition"));
  const result = await run(["run", config]);
  assert.equal(result.exitCode, 1, result.stderr);
  assert.match(
    result.stderr,
    /^bprof: target_failed: sbatch refused the job on this machine: invalid partition specified: nosuchpartition; Batch job submission failed: Invalid partition name specified\. Check target\.slurm \(partition, time, gpus, mem, account, sbatch_args\)$/m,
  );
  assert.match(result.stderr, /^target: Slurm on this machine$/m);
});

test("bprof validate asks Slurm: sbatch --test-only takes the partition, refuses an unknown one", { timeout: 60_000 }, async () => {
  const config = await writeConfig("check.bprof.yaml", "");
  const ok = await run(["validate", config]);
  assert.equal(ok.exitCode, 0, ok.stderr);
  assert.match(ok.stdout, /^ {2}ok: reached this machine$/m);
  assert.match(ok.stdout, /^ {2}ok: sbatch --test-only accepts the job options on this machine: Job \d+ to start at /m);
  await fs.writeFile(config, (await fs.readFile(config, "utf8")).replace(`partition: ${cluster.partition}`, "partition: nosuchpartition"));
  const bad = await run(["validate", config]);
  assert.equal(bad.exitCode, 1, bad.stdout);
  assert.match(
    bad.stderr,
    /^ {2}error: sbatch --test-only refuses the job options on this machine: .*invalid partition.*; check target\.slurm$/m,
  );
});

test("a submit host that cannot build the runner: the job builds it on its node first, then profiles", { timeout: 300_000 }, async (t) => {
  // The sources as an install carries them (no build of them beside), and an empty cache.
  const sources = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-sources-"));
  const cache = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-runner-cache-"));
  const noTorch = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-no-torch-"));
  t.after(() => Promise.all([sources, cache, noTorch].map((d) => fs.rm(d, { recursive: true, force: true }))));
  const checkout = path.join(repoRoot, "native-runner");
  await fs.cp(checkout, sources, { recursive: true, filter: (f) => !/^\/(build|tests|fuzz)(\/|$)/.test(f.slice(checkout.length)) });
  // The libtorch named for this machine is not there, so this machine cannot build; the job, which
  // is not told of it, finds the real one on its node.
  const config = await writeConfig("injob.bprof.yaml", "");
  const { profile, problems } = await loadProfile(config);
  assert.ok(profile, problems.map((p) => p.message).join("\n"));
  const saved = { ...process.env };
  Object.assign(process.env, cluster.env);
  t.after(() => {
    for (const key of Object.keys(cluster.env)) if (saved[key] === undefined) delete process.env[key];
    Object.assign(process.env, saved);
  });
  const statuses: string[] = [];
  const outcome = await runProfile(profile, {
    runner: { sourcesDir: sources, cacheDir: cache, torchPrefix: noTorch },
    onStatus: (m) => statuses.push(m),
  });
  assert.ok(
    statuses.some((m) => /^this machine lacks libtorch .* to build bprof-runner: the job builds it on its node first$/.test(m)),
    statuses.join("\n"),
  );
  const modelDir = path.join(outcome.runDir, "models", "tiny-llama");
  const out = (await fs.readdir(modelDir)).find((f) => /^slurm-\d+\.out$/.test(f));
  assert.ok(out, "the job's output file");
  const said = await fs.readFile(path.join(modelDir, out), "utf8");
  assert.match(said, /^@@bprof step compile$/m, "the job compiled the runner");
  const built = /^@@bprof built (\S+)$/m.exec(said)?.[1];
  assert.ok(built?.startsWith(cache + path.sep), `built into the cache: ${built}`);
  assert.ok((await fs.stat(built!)).isFile());
  assertSameProfile(await profileOf(outcome.runDir), localProfile, "the same results as the local run's");
});
