// The Slurm test cluster (test/support/slurmCluster.ts) does what tests of a Slurm backend rely on:
// a batch job runs and `scontrol show job` still reports it COMPLETED afterwards, scancel ends a
// running job CANCELLED within KillWait, and stop() leaves no daemon, job process or folder behind.
import assert from "node:assert/strict";
import { execa } from "execa";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { startSlurmCluster, type SlurmCluster } from "../support/slurmCluster";

/** KillWait in the cluster's slurm.conf. */
const KILL_WAIT_S = 5;
const TERMINAL = new Set([
  "COMPLETED",
  "FAILED",
  "CANCELLED",
  "TIMEOUT",
  "NODE_FAIL",
  "OUT_OF_MEMORY",
  "BOOT_FAIL",
  "DEADLINE",
  "PREEMPTED",
]);

let cluster: SlurmCluster;
/** Where the jobs write; not the cluster's own folder, which stop() removes. */
let outDir: string;

before(
  async () => {
    outDir = fs.mkdtempSync(path.join(os.tmpdir(), "slurm-cluster-test-"));
    const started = Date.now();
    cluster = await startSlurmCluster();
    console.log(`slurm cluster up in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  },
  { timeout: 90_000 },
);

after(async () => {
  await cluster?.stop();
  fs.rmSync(outDir, { recursive: true, force: true });
});

async function slurm(command: string, args: string[]): Promise<string> {
  const result = await execa(command, args, { env: cluster.env, timeout: 15_000 });
  return String(result.stdout).trim();
}

async function sbatch(args: string[]): Promise<string> {
  const id = await slurm("sbatch", ["--parsable", `--partition=${cluster.partition}`, ...args]);
  assert.match(id, /^\d+$/, `sbatch --parsable printed ${JSON.stringify(id)}`);
  return id;
}

async function jobState(id: string): Promise<string> {
  const line = await slurm("scontrol", ["show", "job", "-o", id]);
  return /\bJobState=(\S+)/.exec(line)?.[1] ?? `no JobState in ${JSON.stringify(line)}`;
}

/** Polls the job until `done` holds for its state; returns that state, fails after `timeoutMs`. */
async function waitForJob(id: string, done: (state: string) => boolean, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const state = await jobState(id);
    if (done(state)) return state;
    assert.ok(Date.now() < deadline, `job ${id} still ${state} after ${timeoutMs / 1000} s`);
    await sleep(200);
  }
}

test("a batch job runs, writes its file and stays visible as COMPLETED", { timeout: 60_000 }, async () => {
  const file = path.join(outDir, "hello.txt");
  const id = await sbatch([`--output=${path.join(outDir, "hello-%j.out")}`, "--wrap", `echo hello > ${file}`]);
  const state = await waitForJob(id, (s) => TERMINAL.has(s), 30_000);
  assert.equal(state, "COMPLETED");
  assert.equal(fs.readFileSync(file, "utf8"), "hello\n");
  assert.equal(fs.readFileSync(path.join(outDir, `hello-${id}.out`), "utf8"), "");
});

test("scancel ends a running job CANCELLED within KillWait", { timeout: 60_000 }, async () => {
  const id = await sbatch([`--output=${path.join(outDir, "sleep-%j.out")}`, "--wrap", "sleep 300"]);
  await waitForJob(id, (s) => s === "RUNNING", 30_000);
  const cancelled = Date.now();
  await slurm("scancel", [id]);
  const state = await waitForJob(id, (s) => TERMINAL.has(s), (KILL_WAIT_S + 5) * 1000);
  assert.equal(state, "CANCELLED");
  console.log(`job ${id} CANCELLED ${((Date.now() - cancelled) / 1000).toFixed(1)} s after scancel`);
});

test("stop() ends every daemon and job process and removes the folder", { timeout: 60_000 }, async () => {
  // A job still running at stop() must go too: slurmstepd and the job outlive slurmd on their own.
  const id = await sbatch([`--output=${path.join(outDir, "left-%j.out")}`, "--wrap", "sleep 300"]);
  await waitForJob(id, (s) => s === "RUNNING", 30_000);
  const conf = cluster.env.SLURM_CONF!;
  const dir = path.dirname(conf);
  const daemons = processes((p) => p.cmdline.includes(dir)).map((p) => p.name);
  for (const name of ["munged", "slurmctld", "slurmd"]) assert.ok(daemons.includes(name), `${name} not running: ${daemons.join(", ")}`);
  // RUNNING comes from slurmctld at allocation; slurmd starts the job's processes a moment later.
  const ofJob = (p: Proc) => p.environ.includes(`SLURM_JOB_ID=${id}`) && p.environ.includes(`SLURM_CONF=${conf}`);
  const launched = Date.now() + 10_000;
  while (processes(ofJob).length === 0 && Date.now() < launched) await sleep(100);
  assert.ok(processes(ofJob).length > 0, `job ${id} has no process`);

  await cluster.stop();
  await cluster.stop(); // idempotent

  // Orphans (slurmstepd, slurmctld's slurmscriptd) stay zombies until init reaps them: allow a moment.
  const belongs = (p: Proc) => p.cmdline.includes(dir) || p.environ.includes(`SLURM_CONF=${conf}`);
  const deadline = Date.now() + 5_000;
  while (processes(belongs).length > 0 && Date.now() < deadline) await sleep(100);
  assert.deepEqual(
    processes(belongs).map((p) => `${p.pid} ${p.name}`),
    [],
  );
  assert.equal(fs.existsSync(dir), false, `${dir} still exists`);
});

interface Proc {
  pid: number;
  name: string;
  cmdline: string;
  environ: string[];
}

/** Live processes (zombies excluded) that satisfy `keep`, read from /proc. */
function processes(keep: (p: Proc) => boolean): Proc[] {
  const found: Proc[] = [];
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "latin1");
      if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) continue;
      const proc = {
        pid: Number(entry),
        name: stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")),
        cmdline: fs.readFileSync(`/proc/${entry}/cmdline`, "latin1").replaceAll("\0", " "),
        environ: fs.readFileSync(`/proc/${entry}/environ`, "latin1").split("\0"),
      };
      if (keep(proc)) found.push(proc);
    } catch {
      // exited while we looked
    }
  }
  return found;
}
