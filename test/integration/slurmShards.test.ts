// `target.slurm.shards: 3` against real Slurm daemons on this machine (test/support/slurmCluster.ts):
// one array job of 3 tasks and a merge job after it; results equal to the unsharded local run's,
// cell for cell and file for file. A resume after a shard's files were lost submits an array of
// that shard alone. Submitted from a login node over SSH (a real sshd), the shard jobs go to the
// remote workdir and only the merged runner folder comes back. Ctrl-C cancels both jobs.
import assert from "node:assert/strict";
import { execa } from "execa";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { bprof, cliPath, runnerPath } from "../support/cli";
import { CONFIG_YAML, makeProfileProject } from "../support/profileProject";
import { startSlurmCluster, type SlurmCluster } from "../support/slurmCluster";
import { loginNodeYaml, startSshServer, type SshServer } from "../support/sshServer";
import { filesUnder } from "../support/files";
import { resultsOf, runDirOf } from "../support/runFolder";
import { shardsOfRun, shardStateText } from "../../src/core/results/shards";

/** A Slurm run names its target in results.json; the local reference does not. */
const TARGET = ["target"];

let cluster: SlurmCluster;
let login: SshServer;
let root: string;
let reference: string;

before(
  async () => {
    // 3 CPUs on the node line, so the 3 one-CPU tasks run at once
    cluster = await startSlurmCluster({ cpus: 3 });
    login = await startSshServer({ env: cluster.env });
    ({ root } = await makeProfileProject());
    const docs = await fs.readFile(path.join(root, "tasks", "tiny_yes.jsonl"), "utf8");
    await fs.writeFile(path.join(root, "tasks", "tiny_yes.jsonl"), docs.repeat(10));
    const local = path.join(root, "local.bprof.yaml");
    await fs.writeFile(local, `${CONFIG_YAML}threads: 1\noutput: .bprof-local\n`);
    const result = await bprof(["run", local]);
    assert.equal(result.exitCode, 0, result.stderr);
    reference = runDirOf(result.stdout);
  },
  { timeout: 180_000 },
);
after(async () => {
  await login?.stop();
  await cluster?.stop();
  await fs.rm(root, { recursive: true, force: true });
});

async function assertSameAsReference(runDir: string, than = reference): Promise<void> {
  assert.deepEqual(await resultsOf(runDir, TARGET), await resultsOf(than, TARGET));
  const runner = (dir: string) => path.join(dir, "models", "tiny-llama", "runner");
  const files = await filesUnder(runner(runDir));
  const expected = await filesUnder(runner(than));
  // an unsharded run on a remote workdir brings back the fingerprint of the job as uploaded there
  assert.deepEqual([...files.keys()].sort(), [...expected.keys()].sort());
  for (const [file, bytes] of files) if (file !== "job.fingerprint") assert.equal(bytes, expected.get(file), file);
}

test("3 shards as one Slurm array and a merge job after it: the unsharded run's results", { timeout: 240_000 }, async () => {
  const config = path.join(root, "slurm.bprof.yaml");
  await fs.writeFile(
    config,
    `${CONFIG_YAML}threads: 1\noutput: .bprof-slurm\ntarget:\n  slurm:\n    partition: ${cluster.partition}\n    poll_seconds: 0.5\n    shards: 3\n`,
  );
  const result = await bprof(["run", config], { env: cluster.env, timeout: 200_000 });
  assert.equal(result.exitCode, 0, `bprof run failed:\n${result.stderr}`);
  const ids = /^tiny-llama: submitted Slurm array job (\d+) \(3 shards\) and merge job (\d+) on this machine$/m.exec(result.stderr);
  assert.ok(ids, result.stderr);
  const [, arrayId, mergeId] = ids;
  assert.match(result.stderr, /^tiny-llama variants 6\/6$/m, "the shards' progress as one");
  assert.match(result.stderr, /^tiny-llama importance · Spatial Reasoning \d+\/\d+$/m);
  const runDir = runDirOf(result.stdout);
  await assertSameAsReference(runDir);

  const tasks = await execa("scontrol", ["show", "job", "-o", arrayId!], { env: cluster.env });
  const lines = String(tasks.stdout).trim().split("\n");
  assert.deepEqual(lines.map((l) => /ArrayTaskId=(\S+)/.exec(l)?.[1]).sort(), ["0", "1", "2"]);
  assert.ok(
    lines.every((l) => /JobState=COMPLETED/.test(l)),
    String(tasks.stdout),
  );
  const merge = await execa("scontrol", ["show", "job", "-o", mergeId!], { env: cluster.env });
  assert.match(String(merge.stdout), /JobState=COMPLETED/);
  assert.match(String(merge.stdout), new RegExp(`Dependency=\\(null\\)|afterok:${arrayId}`));
  const modelDir = path.join(runDir, "models", "tiny-llama");
  for (const i of [0, 1, 2])
    assert.ok((await fs.readdir(path.join(modelDir, "shards", String(i)))).includes(`slurm-${arrayId}.events.jsonl`));
  // the Runs tree's shards: each array task's own events, every variant of its own done
  assert.deepEqual(
    (await shardsOfRun(runDir, false)).map((s) => [shardStateText(s), path.basename(s.eventsFile ?? "")]),
    [
      ["finished · variants 2/2", `slurm-${arrayId}.events.jsonl`],
      ["finished · variants 2/2", `slurm-${arrayId}.events.jsonl`],
      ["finished · variants 2/2", `slurm-${arrayId}.events.jsonl`],
    ],
  );

  // the shard that held Spatial Reasoning lost its files: the resume submits it alone, then the merge
  const lost = path.join(modelDir, "shards", "1");
  assert.deepEqual(
    JSON.parse(await fs.readFile(path.join(lost, "job.json"), "utf8")).abilities.map((a: { id: string }) => a.id),
    ["spatial-reasoning"],
  );
  await fs.rm(path.join(lost, "runner"), { recursive: true });
  await fs.mkdir(path.join(lost, "runner"));
  await fs.rm(path.join(modelDir, "runner"), { recursive: true });
  await fs.rm(path.join(runDir, "results.json"));
  const resumed = await bprof(["run", "--resume", runDir], { env: cluster.env, timeout: 200_000 });
  assert.equal(resumed.exitCode, 0, `bprof run --resume failed:\n${resumed.stderr}`);
  assert.match(
    resumed.stderr,
    /^tiny-llama: submitted Slurm array job \d+ \(1 shard; 2 finished earlier\) and merge job \d+ on this machine$/m,
  );
  await assertSameAsReference(runDir);
});

test("Ctrl-C cancels the array and the merge job", { timeout: 120_000 }, async () => {
  const config = path.join(root, "cancel.bprof.yaml");
  await fs.writeFile(
    config,
    `${CONFIG_YAML}threads: 1\noutput: .bprof-cancel\ntarget:\n  slurm:\n    partition: ${cluster.partition}\n    poll_seconds: 0.5\n    shards: 3\n`,
  );
  const child = execa("node", [cliPath, "run", config], {
    reject: false,
    env: { ...cluster.env, BPROF_RUNNER: process.env.BPROF_RUNNER ?? runnerPath },
  });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr += String(chunk);
    if (/submitted Slurm array job/.test(stderr) && !child.killed) child.kill("SIGINT");
  });
  const cancelled = await child;
  assert.equal(cancelled.exitCode, 130, cancelled.stderr);
  const [, arrayId, mergeId] = /submitted Slurm array job (\d+) \(3 shards\) and merge job (\d+)/.exec(cancelled.stderr)!;
  assert.match(cancelled.stderr, new RegExp(`cancelling Slurm jobs ${arrayId} and ${mergeId}`));
  for (const id of [arrayId!, mergeId!]) {
    const state = await execa("scontrol", ["show", "job", "-o", id], { env: cluster.env });
    for (const line of String(state.stdout).trim().split("\n")) assert.match(line, /JobState=CANCELLED/, `job ${id}`);
  }
});

test(
  "shards submitted from a login node over SSH: jobs in the remote workdir, the merged folder copied back",
  { timeout: 240_000 },
  async () => {
    const remote = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-login-"));
    try {
      const write = (name: string, shards: string) =>
        fs.writeFile(
          path.join(root, name),
          [
            `${CONFIG_YAML}threads: 1\noutput: .bprof-${name}\ntarget:\n  slurm:\n    partition: ${cluster.partition}\n    poll_seconds: 0.5${shards}`,
            `    runner: ${JSON.stringify(runnerPath)}`,
            `    workdir: ${JSON.stringify(remote)}`,
            ...loginNodeYaml(login),
            "",
          ].join("\n"),
        );
      // the unsharded run through the same login node is the reference there: the node's
      // environment, not this process's, decides the last bits of a float
      await write("login-one.bprof.yaml", "");
      await write("login.bprof.yaml", "\n    shards: 3");
      // no SLURM_CONF here: only the login node's sessions know the cluster
      const one = await bprof(["run", path.join(root, "login-one.bprof.yaml")], { timeout: 200_000 });
      assert.equal(one.exitCode, 0, `bprof run failed:\n${one.stderr}`);
      const result = await bprof(["run", path.join(root, "login.bprof.yaml")], { timeout: 200_000 });
      assert.equal(result.exitCode, 0, `bprof run failed:\n${result.stderr}`);
      assert.match(
        result.stderr,
        new RegExp(`^tiny-llama: submitted Slurm array job \\d+ \\(3 shards\\) and merge job \\d+ on 127\\.0\\.0\\.1:${login.port}$`, "m"),
      );
      const runDir = runDirOf(result.stdout);
      await assertSameAsReference(runDir, runDirOf(one.stdout));
      const onHost = path.join(remote, path.basename(runDir), "models", "tiny-llama");
      for (const i of [0, 1, 2]) assert.ok((await fs.readdir(path.join(onHost, "shards", String(i), "runner"))).includes("shard.json"));
    } finally {
      await fs.rm(remote, { recursive: true, force: true });
    }
  },
);
