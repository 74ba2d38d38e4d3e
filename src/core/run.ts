// One run of a profile: compile jobs, launch the runner per model, turn its scores into results.
import { createWriteStream, promises as fs } from "node:fs";
import * as path from "node:path";
import { benchmarkAccuracy, scoreItem, type ChoiceScore, type ScoredItem } from "./analysis/accuracy";
import type { Profile } from "./config/load";
import { writeJsonAtomic } from "./fsutil";
import type { RunnerEvent } from "./launch/events";
import { runLocal } from "./launch/local";
import { compileScoreJob, itemId } from "./plan/job";
import { loadTokenizer } from "./prompts/tokenize";
import { createRunFolder, RESULTS_SCHEMA_VERSION, writeJsonl, writeResults, type Results } from "./results/store";

export interface RunProgress {
  model: string;
  phase: string;
  done: number;
  total: number;
}

export interface RunOptions {
  runnerPath: string;
  onProgress?: (progress: RunProgress) => void;
  onWarning?: (message: string) => void;
  signal?: AbortSignal;
}

export interface RunOutcome {
  runId: string;
  runDir: string;
  resultsFile: string;
  results: Results;
  itemCount: number;
}

export async function runProfile(profile: Profile, options: RunOptions): Promise<RunOutcome> {
  const run = await createRunFolder(profile.outputDir, profile.configText);
  const results: Results = {
    schema: "bprof.results",
    schema_version: RESULTS_SCHEMA_VERSION,
    run_id: run.id,
    created: new Date().toISOString(),
    config_file: profile.configFile,
    models: [],
  };
  let itemCount = 0;
  for (const model of profile.models) {
    const dir = run.modelDir(model.name);
    const tokenizer = await loadTokenizer(model.path);
    const { job, refs } = compileScoreJob(model, profile.benchmarks, tokenizer, profile.device);
    const jobFile = path.join(dir, "job.json");
    await writeJsonAtomic(jobFile, job);

    const outDir = path.join(dir, "runner");
    const eventLog = createWriteStream(path.join(dir, "events.jsonl"));
    const onEvent = (event: RunnerEvent) => {
      eventLog.write(JSON.stringify(event) + "\n");
      if (event.type === "start") results.runner_version = event.runner_version;
      if (event.type === "progress") options.onProgress?.({ model: model.name, phase: event.phase, done: event.done, total: event.total });
      if (event.type === "warning") options.onWarning?.(event.message);
    };
    try {
      await runLocal({ runnerPath: options.runnerPath, subcommand: "score", jobFile, outDir, onEvent, ...(profile.threads ? { threads: profile.threads } : {}), ...(options.signal ? { signal: options.signal } : {}) });
    } finally {
      await new Promise((resolve) => eventLog.end(resolve));
    }

    const scores = await readScores(path.join(outDir, "scores.jsonl"));
    const itemsById = new Map(profile.benchmarks.flatMap((b) => b.task.items.map((i) => [itemId(b.name, i.index), i] as const)));
    const items: ScoredItem[] = refs.map((ref) => {
      const item = itemsById.get(ref.id);
      if (item?.kind !== "multiple_choice") throw new Error(`${ref.id} is not a multiple-choice item`);
      const choices = scores.get(ref.id);
      if (!choices || choices.length !== item.choices.length) throw new Error(`runner scores for ${ref.id} are missing or incomplete`);
      return scoreItem(ref.benchmark, ref.index, item.target, item.choices, choices);
    });
    await writeJsonl(path.join(dir, "items.jsonl"), items);
    itemCount += items.length;
    results.models.push({
      name: model.name,
      path: model.path,
      dtype: model.dtype,
      benchmarks: profile.benchmarks.map((b) => ({
        name: b.name,
        task_file: b.task.file,
        ...benchmarkAccuracy(items.filter((i) => i.benchmark === b.name)),
      })),
    });
  }
  const resultsFile = await writeResults(run, results);
  return { runId: run.id, runDir: run.dir, resultsFile, results, itemCount };
}

async function readScores(file: string): Promise<Map<string, ChoiceScore[]>> {
  const scores = new Map<string, ChoiceScore[]>();
  for (const line of (await fs.readFile(file, "utf8")).split("\n")) {
    if (line.trim() === "") continue;
    const row = JSON.parse(line) as { id: string; choices: ChoiceScore[] };
    scores.set(row.id, row.choices);
  }
  return scores;
}
