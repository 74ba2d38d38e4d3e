// A sharded run's shards as its folder shows them (docs/targets.md, "Shards"): each shard's
// abilities and device from its job.json, whether it finished (its runner's shard.json), and where
// it stands from its own events, so that a user watching a long run sees which shard is behind,
// which failed and why, whether the run was started here, by the CLI or on Slurm.
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { isDirectory, isFile, pathWithinFolder, readTail } from "../base/fsutil";
import { parseEventLine, type RunnerEvent } from "../launch/events";
import { progressStep } from "../plan/progressText";

export type ShardState = "finished" | "running" | "failed" | "stopped" | "waiting";

export interface ShardRow {
  /** The model's folder name under models/. */
  model: string;
  /** 0-based, as the folder shards/<index>/. */
  index: number;
  count: number;
  /** The ids of its abilities (the job's), in its job's order. */
  abilities: string[];
  baseline: boolean;
  random: boolean;
  device: string;
  state: ShardState;
  /** Its last progress event: what it was doing when its events were last written. */
  progress?: { phase: string; done: number; total: number; ability?: string };
  /** Its variants done of its own, from its last `variants` progress. */
  variants?: { done: number; total: number };
  /** The runner's error, for a shard that failed (`cancelled` for one stopped with the run). */
  error?: { code: string; message: string };
  /** Its latest attempt's events file, where it has one. */
  eventsFile?: string;
}

interface ShardPlanFile {
  abilities: string[];
  baseline: boolean;
  random: boolean;
  device: string;
  count: number;
}

/**
 * Every shard of every model of the run, by model then index; none for a run that did not shard.
 * `running`: whether the run's process is at work, so that a shard with neither an end nor an error
 * is running rather than stopped without a word (a killed process, a lost node).
 */
export async function shardsOfRun(runDir: string, running: boolean): Promise<ShardRow[]> {
  const modelsDir = path.join(runDir, "models");
  const models = (await fs.readdir(modelsDir).catch(() => [] as string[])).sort();
  const rows: ShardRow[] = [];
  for (const model of models) {
    const shardsDir = path.join(modelsDir, model, "shards");
    const indices = (await fs.readdir(shardsDir).catch(() => [] as string[]))
      .filter((name) => /^\d+$/.test(name))
      .map(Number)
      .sort((a, b) => a - b);
    for (const index of indices) {
      // a shard folder that links out of the run folder is none of the run's: it is not read
      const dir = path.join(shardsDir, String(index));
      const row = (await isWithinRun(runDir, dir)) ? await shardRow(model, index, dir, running) : undefined;
      if (row) rows.push(row);
    }
  }
  return rows;
}

// The Runs tree asks of every run each time it redraws (once a second while one runs): a run found
// sharded stays so, and a finished run that was not never will be, so only the others are looked at again.
const settledSharding = new Map<string, boolean>();

/** Whether any model of the run was split into shards (models/<name>/shards/); `finished`: the run has its results. */
export async function ranInShards(runDir: string, finished: boolean): Promise<boolean> {
  const known = settledSharding.get(runDir);
  if (known !== undefined) return known;
  const models = await fs.readdir(path.join(runDir, "models")).catch(() => [] as string[]);
  let sharded = false;
  for (const model of models) if (!sharded) sharded = await isDirectory(path.join(runDir, "models", model, "shards"));
  if (sharded || finished) settledSharding.set(runDir, sharded);
  return sharded;
}

/** Whether `file` is in `folder`, links followed: a run folder can come with a repository, and its links are not followed out. */
function isWithinRun(folder: string, file: string): Promise<boolean> {
  return pathWithinFolder(folder, file).then(
    () => true,
    () => false,
  );
}

async function shardRow(model: string, index: number, dir: string, running: boolean): Promise<ShardRow | undefined> {
  const jobFile = path.join(dir, "job.json");
  const plan = (await isWithinRun(dir, jobFile)) ? await shardPlanOf(jobFile) : undefined;
  if (!plan) return undefined;
  const { file: eventsFile, events } = await latestEvents(dir);
  // a resumed shard appends to its file: only its latest attempt says where it stands
  const lastStart = lastIndex(events, (e) => e.type === "start");
  const attempt = lastStart < 0 ? events : events.slice(lastStart);
  const progress = lastOf(attempt, (e) => e.type === "progress");
  const variants = lastOf(events, (e) => e.type === "progress" && e.phase === "variants");
  const error = lastOf(attempt, (e) => e.type === "error");
  const finished = await isFile(path.join(dir, "runner", "shard.json"));
  const ended = attempt.some((e) => e.type === "summary");
  const state: ShardState = finished
    ? "finished"
    : error
      ? "failed"
      : !running || ended
        ? "stopped"
        : events.length === 0
          ? "waiting"
          : "running";
  return {
    model,
    index,
    count: plan.count,
    abilities: plan.abilities,
    baseline: plan.baseline,
    random: plan.random,
    device: plan.device,
    state,
    ...(progress?.type === "progress"
      ? {
          progress: {
            phase: progress.phase,
            done: progress.done,
            total: progress.total,
            ...(progress.ability ? { ability: progress.ability } : {}),
          },
        }
      : {}),
    ...(variants?.type === "progress" ? { variants: { done: variants.done, total: variants.total } } : {}),
    ...(state === "failed" && error?.type === "error" ? { error: { code: error.code, message: error.message } } : {}),
    ...(eventsFile ? { eventsFile } : {}),
  };
}

// A shard's job.json holds every benchmark item's tokens (it can be large) and never changes while
// its run lives: it is read once per file and version, however often the tree redraws.
const plans = new Map<string, { stamp: string; plan: ShardPlanFile | undefined }>();

async function shardPlanOf(file: string): Promise<ShardPlanFile | undefined> {
  const stat = await fs.stat(file).catch(() => undefined);
  if (!stat) return undefined;
  const stamp = `${stat.mtimeMs}:${stat.size}`;
  const cached = plans.get(file);
  if (cached?.stamp === stamp) return cached.plan;
  const plan = await fs.readFile(file, "utf8").then(parseShardPlan, () => undefined);
  plans.set(file, { stamp, plan });
  return plan;
}

function parseShardPlan(text: string): ShardPlanFile | undefined {
  try {
    const job = JSON.parse(text) as {
      abilities?: { id: string }[];
      device?: string;
      shard?: { count?: number; baseline?: boolean; random?: boolean };
    };
    if (!job.shard || !Array.isArray(job.abilities)) return undefined;
    return {
      abilities: job.abilities.map((a) => a.id),
      baseline: job.shard.baseline === true,
      random: job.shard.random === true,
      device: job.device ?? "cpu",
      count: job.shard.count ?? 1,
    };
  } catch {
    return undefined;
  }
}

/** The shard's events of its latest attempt's file: events.jsonl here and over SSH, slurm-<job>.events.jsonl on Slurm. */
async function latestEvents(dir: string): Promise<{ file?: string; events: RunnerEvent[] }> {
  const names = (await fs.readdir(dir).catch(() => [] as string[])).filter((n) => n === "events.jsonl" || n.endsWith(".events.jsonl"));
  const files = await Promise.all(
    names.map(async (n) => {
      // an events file that links out of the shard's folder is not read, nor offered to open
      const within = await isWithinRun(dir, path.join(dir, n));
      return { file: path.join(dir, n), within, mtime: (await fs.stat(path.join(dir, n)).catch(() => undefined))?.mtimeMs ?? -1 };
    }),
  );
  const newest = files.filter((f) => f.within).sort((a, b) => b.mtime - a.mtime)[0];
  if (!newest) return { events: [] };
  // the tail holds the last start, error, variants and progress events of any attempt
  const text = await readTail(newest.file, 64 * 1024).catch(() => "");
  const events = text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map(parseEventLine);
  return { file: newest.file, events };
}

function lastIndex(events: readonly RunnerEvent[], test: (e: RunnerEvent) => boolean): number {
  for (let i = events.length - 1; i >= 0; i--) if (test(events[i]!)) return i;
  return -1;
}

function lastOf(events: readonly RunnerEvent[], test: (e: RunnerEvent) => boolean): RunnerEvent | undefined {
  const i = lastIndex(events, test);
  return i < 0 ? undefined : events[i];
}

/** `shard 2 of 3 · cuda:1`: how the Runs tree and the CLI name a shard. */
export function shardLabel(row: ShardRow): string {
  return `shard ${row.index + 1} of ${row.count} · ${row.device}`;
}

/** `finished`, `running: variants 3/8`, `failed: resources`, ...: where the shard stands. */
export function shardStateText(row: ShardRow): string {
  const variants = row.variants ? ` · variants ${row.variants.done}/${row.variants.total}` : "";
  switch (row.state) {
    case "finished":
      return `finished${variants}`;
    case "running": {
      const p = row.progress;
      const step = p ? `${progressStep(p)} ${p.done}/${p.total}` : "starting";
      return `running: ${step}${p?.phase === "variants" ? "" : variants}`;
    }
    case "failed":
      return `${row.error?.code === "cancelled" ? "cancelled" : `failed: ${row.error?.code ?? "error"}`}${variants}`;
    case "stopped":
      return `stopped${variants}`;
    case "waiting":
      return "waiting to start";
  }
}

/** What the shard holds: `spatial-reasoning, quantitative-reasoning + baseline + random control`. */
export function shardWorkText(row: ShardRow): string {
  const parts = [...row.abilities];
  if (row.baseline) parts.push("baseline");
  if (row.random) parts.push("random control");
  return parts.join(", ") || "nothing";
}
