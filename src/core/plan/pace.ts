// How fast a model's runner went in an earlier run, in the units shards are balanced by
// (plan/shards.ts: forward-pass tokens of work), so that validation can say about how long each
// shard of the next run will take. Read from the run's own record: each runner process's job.json
// (its work) and events.jsonl (its device and threads at `start`, its seconds at `summary`). A
// process that was resumed is left out: its seconds cover only what was left.
import { promises as fs } from "node:fs";
import * as path from "node:path";
import type { ProfileJob } from "./job";
import { abilityWork, commonWork, randomVariants, scoringWork, type ShardJob } from "./shards";

/** Seconds per unit of work: on the CPU per thread (thread-seconds), on a GPU per device. */
export interface Pace {
  cpuThreadSeconds?: number;
  gpuSeconds?: number;
  /** The run it was measured in. */
  runId: string;
}

/** The work a job holds (a shard's job: its abilities, and the baseline and control only where it runs them). */
export function jobWork(job: ProfileJob | ShardJob): number {
  const abilities = [...abilityWork(job).values()].reduce((a, b) => a + b, 0);
  if (!("shard" in job)) return abilities + commonWork(job);
  const scoring = scoringWork(job);
  return abilities + (job.shard.baseline ? scoring : 0) + (job.shard.random ? randomVariants(job) * scoring : 0);
}

interface RunnerProcess {
  device: string;
  threads: number;
  seconds: number;
  work: number;
}

/** The pace of a finished run's model folder (models/<name>), or undefined where it cannot be told. */
export async function measuredPace(modelDir: string, runId: string): Promise<Pace | undefined> {
  const processes = await runnerProcesses(modelDir);
  const sum = (list: RunnerProcess[], f: (p: RunnerProcess) => number) => list.reduce((n, p) => n + f(p), 0);
  const cpu = processes.filter((p) => p.device === "cpu" && p.work > 0);
  const gpu = processes.filter((p) => p.device.startsWith("cuda") && p.work > 0);
  const pace: Pace = { runId };
  if (cpu.length > 0) pace.cpuThreadSeconds = sum(cpu, (p) => p.seconds * p.threads) / sum(cpu, (p) => p.work);
  if (gpu.length > 0) pace.gpuSeconds = sum(gpu, (p) => p.seconds) / sum(gpu, (p) => p.work);
  return pace.cpuThreadSeconds === undefined && pace.gpuSeconds === undefined ? undefined : pace;
}

/** The model's runner processes whose whole work one start and one summary timed: its shards', or its own. */
async function runnerProcesses(modelDir: string): Promise<RunnerProcess[]> {
  const shardsDir = path.join(modelDir, "shards");
  const shards = await fs.readdir(shardsDir).catch(() => undefined);
  if (!shards) {
    const one = await timedProcess(modelDir);
    return one ? [one] : [];
  }
  // a sharded run: each shard's folder holds its job and its runner's own events
  const found = await Promise.all(shards.filter((name) => /^\d+$/.test(name)).map((name) => timedProcess(path.join(shardsDir, name))));
  return found.filter((p): p is RunnerProcess => p !== undefined);
}

/** The runner process of a folder holding its job.json and events.jsonl (a model's, or a shard's). */
async function timedProcess(dir: string): Promise<RunnerProcess | undefined> {
  try {
    const job = JSON.parse(await fs.readFile(path.join(dir, "job.json"), "utf8")) as ProfileJob;
    if (job.subcommand !== "profile") return undefined;
    const events = (await fs.readFile(path.join(dir, "events.jsonl"), "utf8"))
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.parse(line) as { type?: string; device?: string; threads?: number; seconds?: number });
    const starts = events.filter((e) => e.type === "start");
    const summary = events.find((e) => e.type === "summary");
    if (starts.length !== 1 || typeof summary?.seconds !== "number") return undefined;
    return { device: starts[0]!.device ?? "cpu", threads: starts[0]!.threads ?? 1, seconds: summary.seconds, work: jobWork(job) };
  } catch {
    return undefined; // a record cut short or damaged times nothing
  }
}

/** About how long `work` takes at `pace` on `device` with `threads`; undefined where the pace was not measured on that kind of device. */
export function secondsFor(work: number, pace: Pace, device: string, threads: number): number | undefined {
  if (device.startsWith("cuda")) return pace.gpuSeconds === undefined ? undefined : work * pace.gpuSeconds;
  return pace.cpuThreadSeconds === undefined ? undefined : (work * pace.cpuThreadSeconds) / Math.max(1, threads);
}
