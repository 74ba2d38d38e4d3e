// A real single-node Slurm cluster on localhost for integration tests: its own munged, slurmctld
// and slurmd, every file (munge key and socket, slurm.conf, state, spool, pids, logs) in one
// temporary folder, TCP ports picked at start. Nothing in /etc/slurm, /etc/munge, /run or /var
// is read or written, so it neither needs nor disturbs a system Slurm or munge, and test files
// that run in parallel each get a cluster of their own. Needs root (SlurmUser=root keeps privilege dropping
// out of the picture) and the Debian packages slurm-wlm and munge; no systemd, no cgroups.
import { execa } from "execa";
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { freePorts } from "./ports";

export interface SlurmCluster {
  /** Environment for any slurm command (sbatch, squeue, scontrol, scancel): SLURM_CONF etc. */
  env: Record<string, string>;
  /** Partition name jobs go to. */
  partition: string;
  /** Stops slurmd, slurmctld and munged and removes the temp folder; idempotent. */
  stop(): Promise<void>;
}

const PARTITION = "test";
const DAEMONS = ["munged", "slurmctld", "slurmd"] as const;
const CLIENTS = ["sbatch", "squeue", "scontrol", "scancel", "sinfo"] as const;
type Daemon = (typeof DAEMONS)[number];
type Binary = Daemon | (typeof CLIENTS)[number];
/** Daemons live in sbin, which a non-login PATH may lack. */
const SBIN_DIRS = ["/usr/local/sbin", "/usr/sbin", "/sbin"];
const READY_TIMEOUT_MS = 60_000;
const POLL_MS = 200;
/** How long a daemon gets to exit after SIGTERM before SIGKILL. */
const STOP_GRACE_MS = 3_000;
/** Starts that lose a freshly picked port to another process are retried with new ports. */
const START_ATTEMPTS = 3;

export async function startSlurmCluster(options: { cpus?: number } = {}): Promise<SlurmCluster> {
  requireRoot();
  const binaries = locateBinaries();
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(binaries, options.cpus ?? os.availableParallelism());
    } catch (error) {
      if (!(error instanceof StartError && error.portTaken && attempt < START_ATTEMPTS)) throw error;
    }
  }
}

// ------------------------------------------------------------------------------------------------
// Preconditions

function requireRoot(): void {
  if (process.getuid?.() !== 0) {
    throw new Error("startSlurmCluster: must run as root (the test cluster runs slurmd and slurmctld with SlurmUser=root).");
  }
}

function locateBinaries(): Record<Binary, string> {
  const dirs = [...(process.env.PATH ?? "").split(path.delimiter).filter(Boolean), ...SBIN_DIRS];
  const found = {} as Record<Binary, string>;
  const missing: string[] = [];
  for (const name of [...DAEMONS, ...CLIENTS]) {
    const hit = dirs.map((dir) => path.join(dir, name)).find(isExecutable);
    if (hit) found[name] = hit;
    else missing.push(name);
  }
  if (missing.length > 0) {
    throw new Error(
      `startSlurmCluster: ${missing.join(", ")} not found (searched PATH and ${SBIN_DIRS.join(", ")}). ` +
        "Install the Debian packages: apt-get install slurm-wlm munge",
    );
  }
  return found;
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

// ------------------------------------------------------------------------------------------------
// Start

/** Everything stop() and the exit hook need to tear one cluster down. */
interface Running {
  dir: string;
  conf: string;
  daemons: Partial<Record<Daemon, ChildProcess>>;
}

class StartError extends Error {
  constructor(
    message: string,
    /** A daemon could not bind its port: another process took it between our pick and the bind. */
    readonly portTaken: boolean,
  ) {
    super(message);
  }
}

async function startOnce(bin: Record<Binary, string>, cpus: number): Promise<SlurmCluster> {
  // munged refuses a socket whose folder is not searchable by all, so the root must be 0755
  // (mkdtemp makes it 0700). The key stays 0600, which munged insists on.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "slurm-test-"));
  fs.chmodSync(dir, 0o755);
  const running: Running = { dir, conf: path.join(dir, "slurm.conf"), daemons: {} };
  track(running);
  const stop = once(() => stopCluster(running));
  try {
    const node = os.hostname().split(".")[0]!;
    const [ctldPort, slurmdPort] = await freePorts(2, "0.0.0.0");
    for (const sub of ["state", "spool"]) fs.mkdirSync(path.join(dir, sub));
    fs.writeFileSync(path.join(dir, "munge.key"), randomBytes(1024), { mode: 0o600 });
    fs.writeFileSync(path.join(dir, "plugstack.conf"), "");
    fs.writeFileSync(running.conf, slurmConf({ dir, node, cpus, ctldPort: ctldPort!, slurmdPort: slurmdPort! }));
    const env = daemonEnv(running.conf);

    const socket = path.join(dir, "munge.socket");
    running.daemons.munged = spawnDaemon(bin.munged, mungedArgs(dir, socket), path.join(dir, "munged.log"), env);
    await waitFor("munged's socket", running, async () => fs.existsSync(socket));
    // slurmd retries its registration until slurmctld answers, so both can start at once.
    running.daemons.slurmctld = spawnDaemon(bin.slurmctld, ["-D", "-f", running.conf], path.join(dir, "slurmctld.stderr"), env);
    running.daemons.slurmd = spawnDaemon(bin.slurmd, ["-D", "-f", running.conf, "-N", node], path.join(dir, "slurmd.stderr"), env);
    await waitFor(`node ${node} to be idle`, running, async () => (await nodeState(bin.scontrol, running.conf, node)) === "IDLE");
  } catch (error) {
    await stop();
    throw error;
  }
  return { env: { SLURM_CONF: running.conf }, partition: PARTITION, stop };
}

function slurmConf(c: { dir: string; node: string; cpus: number; ctldPort: number; slurmdPort: number }): string {
  const file = (name: string) => path.join(c.dir, name);
  // Memory is not scheduled (CR_Core), but a node must not claim more than it has.
  const memoryMiB = Math.floor((os.totalmem() / 2 ** 20) * 0.9);
  return [
    // A fresh cluster name per start: slurmctld refuses a state folder saved by another cluster.
    `ClusterName=t${randomBytes(4).toString("hex")}`,
    `SlurmctldHost=${c.node}(127.0.0.1)`,
    `SlurmctldPort=${c.ctldPort}`,
    `SlurmdPort=${c.slurmdPort}`,
    "AuthType=auth/munge",
    "CredType=cred/munge",
    `AuthInfo=socket=${file("munge.socket")}`,
    "SlurmUser=root",
    "SlurmdUser=root",
    `StateSaveLocation=${file("state")}`,
    `SlurmdSpoolDir=${file("spool")}`,
    `SlurmctldPidFile=${file("slurmctld.pid")}`,
    `SlurmdPidFile=${file("slurmd.pid")}`,
    `SlurmctldLogFile=${file("slurmctld.log")}`,
    `SlurmdLogFile=${file("slurmd.log")}`,
    `PlugStackConfig=${file("plugstack.conf")}`,
    // No cgroups in a container without systemd: track job processes through /proc.
    "ProctrackType=proctrack/linuxproc",
    "TaskPlugin=task/none",
    "JobAcctGatherType=jobacct_gather/none",
    "AccountingStorageType=accounting_storage/none",
    "JobCompType=jobcomp/none",
    "SelectType=select/cons_tres",
    "SelectTypeParameters=CR_Core",
    "MpiDefault=none",
    // Batch jobs are otherwise scheduled up to 3 s after submission.
    "SchedulerParameters=batch_sched_delay=0",
    // The default, /usr/bin/mail, is rarely installed and slurmctld logs an error without it.
    "MailProg=/bin/true",
    // Trust the node line: `cpus` may differ from what slurmd detects without draining the node.
    "SlurmdParameters=config_overrides",
    "ReturnToService=2",
    // Finished jobs stay visible to `scontrol show job` for 10 minutes.
    "MinJobAge=600",
    // Cancelled jobs get SIGKILL 5 s after SIGTERM.
    "KillWait=5",
    `NodeName=${c.node} NodeAddr=127.0.0.1 NodeHostname=${c.node} CPUs=${c.cpus} RealMemory=${memoryMiB} State=UNKNOWN`,
    `PartitionName=${PARTITION} Nodes=${c.node} Default=YES MaxTime=INFINITE State=UP`,
    "",
  ].join("\n");
}

function mungedArgs(dir: string, socket: string): string[] {
  // In the foreground munged logs to stderr (spawnDaemon sends it to munged.log); --log-file and
  // --seed-file still keep it away from /var/log/munge and /var/lib/munge.
  return [
    "--foreground",
    `--socket=${socket}`,
    `--key-file=${path.join(dir, "munge.key")}`,
    `--pid-file=${path.join(dir, "munged.pid")}`,
    `--log-file=${path.join(dir, "munged.log")}`,
    `--seed-file=${path.join(dir, "munged.seed")}`,
  ];
}

/**
 * The daemons' environment carries SLURM_CONF, which slurmd passes on to slurmstepd and the
 * jobs: that is how the process sweep finds them. Inherited SLURM_* and SBATCH_* variables (a
 * test run inside a Slurm job) are dropped.
 */
function daemonEnv(conf: string): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^(SLURM|SBATCH)_/.test(key)));
  return { ...env, SLURM_CONF: conf };
}

/**
 * Each daemon leads a process group of its own (slurmctld forks a helper, slurmscriptd), output
 * goes straight to a file (no pipe to drain) and the child is unref'd, so a test that never calls
 * stop() still lets node exit, and the exit hook kills what is left.
 */
function spawnDaemon(binary: string, args: string[], outputFile: string, env: NodeJS.ProcessEnv): ChildProcess {
  const fd = fs.openSync(outputFile, "a");
  try {
    const child = spawn(binary, args, { stdio: ["ignore", fd, fd], detached: true, env });
    child.on("error", (error) => fs.appendFileSync(outputFile, `spawn failed: ${error.message}\n`));
    child.unref();
    return child;
  } finally {
    fs.closeSync(fd);
  }
}

/** Polls `ready` until it holds; fails early, with the daemons' logs, if a daemon exits. */
async function waitFor(what: string, running: Running, ready: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    const dead = DAEMONS.find((name) => hasExited(running.daemons[name]));
    if (dead) throw startError(`${dead} exited (${exitDescription(running.daemons[dead]!)}) while waiting for ${what}`, running);
    if (await ready()) return;
    if (Date.now() > deadline) throw startError(`timed out after ${READY_TIMEOUT_MS / 1000} s waiting for ${what}`, running);
    await sleep(POLL_MS);
  }
}

/** The node's state as scontrol reports it ("IDLE", "DOWN+NOT_RESPONDING", ...), or "" if unknown yet. */
async function nodeState(scontrol: string, conf: string, node: string): Promise<string> {
  // A short timeout: scontrol answers in milliseconds, but one that reached another program on a
  // port slurmctld failed to bind waits out MessageTimeout (10 s) before waitFor sees the exit.
  const result = await execa(scontrol, ["show", "node", "-o", node], {
    reject: false,
    timeout: 2_000,
    env: { SLURM_CONF: conf },
  });
  return /\bState=(\S+)/.exec(String(result.stdout))?.[1] ?? "";
}

function startError(problem: string, running: Running): StartError {
  const logs = ["munged.log", "slurmctld.stderr", "slurmd.stderr"].map((name) => {
    const file = path.join(running.dir, name);
    const text = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "";
    return { name, text, tail: `--- ${name} (last 20 lines)\n${text.trimEnd().split("\n").slice(-20).join("\n")}` };
  });
  const portTaken = logs.some((log) => /Address already in use/i.test(log.text));
  return new StartError(`startSlurmCluster: ${problem}.\n${logs.map((log) => log.tail).join("\n")}`, portTaken);
}

// ------------------------------------------------------------------------------------------------
// Stop

async function stopCluster(running: Running): Promise<void> {
  const { slurmctld, slurmd, munged } = running.daemons;
  // The Slurm daemons first, while munged can still authenticate anything they send on the way out.
  await terminate([slurmctld, slurmd]);
  await terminate([munged]);
  killJobProcesses(running.conf);
  fs.rmSync(running.dir, { recursive: true, force: true, maxRetries: 5 });
  live.delete(running);
}

/** SIGTERM to each daemon's process group, SIGKILL after the grace period; resolves once all exited. */
async function terminate(children: (ChildProcess | undefined)[]): Promise<void> {
  const alive = children.filter((c): c is ChildProcess => c?.pid !== undefined);
  for (const child of alive) {
    child.ref(); // keep node running until the exit is seen
    signalGroup(child.pid!, "SIGTERM");
  }
  const allExited = Promise.all(alive.map(exited));
  // An unref'd timer: once the daemons are gone it must not hold node for the rest of the grace.
  const grace = sleep(STOP_GRACE_MS, false, { ref: false });
  const inTime = await Promise.race([allExited.then(() => true), grace]);
  if (!inTime) for (const child of alive) if (!hasExited(child)) signalGroup(child.pid!, "SIGKILL");
  await allExited;
  // Whatever else is left in the groups (slurmctld's slurmscriptd).
  for (const child of alive) signalGroup(child.pid!, "SIGKILL");
}

function exited(child: ChildProcess): Promise<void> {
  return hasExited(child) ? Promise.resolve() : new Promise((resolve) => child.once("exit", () => resolve()));
}

/** Whether the daemon is gone; one that never started (no pid) counts as gone. */
function hasExited(child: ChildProcess | undefined): boolean {
  return child !== undefined && (child.pid === undefined || child.exitCode !== null || child.signalCode !== null);
}

function exitDescription(child: ChildProcess): string {
  if (child.pid === undefined) return "it did not start";
  return child.signalCode ? `signal ${child.signalCode}` : `exit code ${child.exitCode}`;
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // group already gone
  }
}

/**
 * Job processes are no children of slurmd: slurmstepd double-forks into a session of its own and
 * survives slurmd, and so does the job under it. Both carry this cluster's SLURM_CONF in their
 * environment; every process in a session of such a process gets SIGKILL (ours excepted).
 */
function killJobProcesses(conf: string): void {
  const marker = `SLURM_CONF=${conf}`;
  const own = sessionOf(process.pid);
  const pids = listPids().filter((pid) => pid !== process.pid);
  const marked = pids.filter((pid) => environ(pid).includes(marker));
  const sessions = new Set(marked.map(sessionOf).filter((sid) => sid !== undefined && sid !== own));
  for (const pid of pids) {
    if (marked.includes(pid) || sessions.has(sessionOf(pid))) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  }
}

function listPids(): number[] {
  return fs
    .readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map(Number);
}

function environ(pid: number): string[] {
  try {
    return fs.readFileSync(`/proc/${pid}/environ`, "latin1").split("\0");
  } catch {
    return []; // exited, or a kernel thread
  }
}

function sessionOf(pid: number): number | undefined {
  try {
    // "pid (comm) state ppid pgrp session ...": comm may hold spaces and parentheses.
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[3]);
  } catch {
    return undefined;
  }
}

function once(fn: () => Promise<void>): () => Promise<void> {
  let result: Promise<void> | undefined;
  return () => (result ??= fn());
}

// ------------------------------------------------------------------------------------------------
// Last-resort cleanup: a test that fails, or never calls stop(), must not leave daemons behind.

const live = new Set<Running>();
let hooksInstalled = false;

function track(running: Running): void {
  live.add(running);
  if (hooksInstalled) return;
  hooksInstalled = true;
  process.on("exit", killEverythingSync);
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.once(signal, () => {
      killEverythingSync();
      // Listening took the signal's default action (exit) away; without other listeners, re-raise.
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    });
  }
}

function killEverythingSync(): void {
  for (const running of live) {
    for (const child of Object.values(running.daemons)) if (child.pid !== undefined) signalGroup(child.pid, "SIGKILL");
    killJobProcesses(running.conf);
    try {
      fs.rmSync(running.dir, { recursive: true, force: true, maxRetries: 5 });
    } catch {
      // a dying daemon may still write; a stray folder in the temp dir is harmless
    }
  }
  live.clear();
}
