// A profiling config's benchmarks loaded (as abilities.ts loads its abilities): each entry's lm-eval
// task, from a file, inline, or by the name of a task, group or tag under `task_paths`; its
// `limit`, `num_fewshot` and `data`; the groups lm-eval scores as a whole. Problems point at the
// entry's field.
import * as os from "node:os";
import * as path from "node:path";
import { errorsOf, type Problem } from "../base/problems";
import { isFile } from "../base/fsutil";
import type { YamlSource } from "../base/yamlSource";
import { datasetKindOf } from "../lmeval/documents";
import { loadInlineTask, type TaskOptions } from "../lmeval/task";
import { groupAggregates, readAggregateSpecs, type ResolvedGroup } from "../lmeval/group";
import { resolveTaskName, taskIndex, type GroupFiles } from "../lmeval/taskIndex";
import { expectedAbilities, type ProfileInputs, type ResolvedBenchmark } from "./resolved";
import type { ProfileConfig } from "./types";

/**
 * The config's benchmarks, each an lm-eval task (a file or inline) with its `limit` and
 * `num_fewshot`; `entry` is its index in the config. The groups scored as a whole go to `groups`,
 * each once.
 */
export async function loadBenchmarks(
  config: ProfileConfig,
  source: YamlSource,
  inputs: ProfileInputs,
  problems: Problem[],
  groups: ResolvedGroup[] = [],
): Promise<(ResolvedBenchmark & { entry: number })[]> {
  const benchmarks: (ResolvedBenchmark & { entry: number })[] = [];
  for (const i of config.benchmarks.keys()) benchmarks.push(...(await loadBenchmark(config, source, inputs, i, problems, groups)));
  return benchmarks;
}

/** The `limit`, `num_fewshot` and `data` a benchmark entry gives its task; `configDir` is what `data` is relative to. */
export function taskOptionsOf(benchmark: ProfileConfig["benchmarks"][number], configDir: string): TaskOptions {
  const { data } = benchmark;
  const resolve = (file: string) => path.resolve(configDir, file);
  return {
    ...(benchmark.limit ? { limit: benchmark.limit } : {}),
    ...(benchmark.num_fewshot !== undefined ? { numFewshot: benchmark.num_fewshot } : {}),
    ...(data === undefined
      ? {}
      : {
          data:
            typeof data === "string"
              ? resolve(data)
              : Object.fromEntries(Object.entries(data).map(([split, file]) => [split, resolve(file)])),
        }),
  };
}

/** A `data` file of a benchmark entry that does not exist, or is of no format a task can read, at its field. */
async function dataProblems(options: TaskOptions, source: YamlSource, i: number): Promise<Problem[]> {
  const { data } = options;
  if (data === undefined) return [];
  const entries: [string[], string][] =
    typeof data === "string" ? [[[], data]] : Object.entries(data).map(([split, file]) => [[split], file]);
  const problems: Problem[] = [];
  for (const [at, file] of entries) {
    const field = ["benchmarks", i, "data", ...at];
    if (!datasetKindOf(file))
      problems.push(source.at(field, "config.benchmark-data", `${path.basename(file)} is not .json, .jsonl, .csv, .parquet or .arrow`));
    else if (!(await isFile(file)))
      problems.push(source.at(field, "config.benchmark-data", `data file not found: ${file}`, { data: { file } }));
  }
  return problems;
}

/**
 * The benchmarks of the config's entry `i`: one for a task file or an inline task, one per task
 * for a group or tag named by name. Empty (with problems) when its task does not load. A group
 * with `aggregate_metric_list` under the name goes to `groups` unless one of its name is there.
 */
export async function loadBenchmark(
  config: ProfileConfig,
  source: YamlSource,
  inputs: ProfileInputs,
  i: number,
  problems: Problem[],
  groups: ResolvedGroup[] = [],
): Promise<(ResolvedBenchmark & { entry: number })[]> {
  const benchmark = config.benchmarks[i]!;
  const options: TaskOptions = {
    ...taskOptionsOf(benchmark, path.dirname(source.file)),
    ...(inputs.helpers ? { helpers: inputs.helpers } : {}),
  };
  const missingData = await dataProblems(options, source, i);
  if (missingData.length > 0) {
    problems.push(...missingData);
    return [];
  }
  if (typeof benchmark.task !== "string") {
    // Inline: every problem already points into this config.
    const loaded = await loadInlineTask(benchmark.task, source, ["benchmarks", i, "task"], options, inputs.files);
    problems.push(...loaded.problems);
    return loaded.task
      ? [
          {
            name: benchmark.name ?? loaded.task.name,
            task: loaded.task,
            ...(benchmark.ability ? { ability: benchmark.ability } : {}),
            ...(benchmark.expects ? { expects: expectedAbilities(benchmark.expects) } : {}),
            entry: i,
          },
        ]
      : [];
  }
  const taskFiles = await taskFilesOf(config, source, i);
  if ("missing" in taskFiles) {
    problems.push(
      source.at(
        ["benchmarks", i, "task"],
        "config.task-not-found",
        taskFiles.missing,
        taskFiles.file ? { data: { file: taskFiles.file } } : undefined,
      ),
    );
    return [];
  }
  if (taskFiles.notFound?.length) {
    const names = taskFiles.notFound.map((n) => `\`${n}\``);
    problems.push(
      source.at(
        ["benchmarks", i, "task"],
        "config.group-incomplete",
        `\`${benchmark.task}\` names ${names.length} task(s) not found in task_paths, left out: ${names.slice(0, 8).join(", ")}${names.length > 8 ? ", ..." : ""}`,
      ),
    );
  }
  if (taskFiles.files.length > 1) {
    const singular = (["name", "data", "ability"] as const).filter((key) => benchmark[key] !== undefined);
    for (const key of singular) {
      problems.push(
        source.at(
          ["benchmarks", i, key],
          "config.invalid-value",
          `\`${benchmark.task}\` is ${taskFiles.files.length} tasks: \`${key}\` would say the same of each; list the task you mean on its own`,
        ),
      );
    }
    if (singular.length > 0) return [];
  }
  const loaded: (ResolvedBenchmark & { entry: number })[] = [];
  const loadedFrom = new Map<string, ResolvedBenchmark>();
  for (const taskFile of taskFiles.files) {
    const load = await inputs.task(taskFile, options);
    problems.push(...load.problems);
    if (errorsOf(load.problems).length > 0) {
      problems.push(
        source.at(["benchmarks", i, "task"], "config.task-has-errors", `the task ${path.basename(taskFile)} has errors (see ${taskFile})`, {
          data: { file: taskFile },
        }),
      );
    }
    if (!load.task) continue;
    const resolved = {
      name: (taskFiles.files.length === 1 ? benchmark.name : undefined) ?? load.task.name,
      task: load.task,
      ...(benchmark.ability ? { ability: benchmark.ability } : {}),
      ...(benchmark.expects ? { expects: expectedAbilities(benchmark.expects) } : {}),
      entry: i,
    };
    loaded.push(resolved);
    loadedFrom.set(taskFile, resolved);
  }
  for (const group of taskFiles.groups ?? []) {
    if (groups.some((g) => g.name === group.name)) continue;
    const resolved = await resolveGroup(group, loadedFrom, inputs, problems, () =>
      source.at(
        ["benchmarks", i, "task"],
        "config.task-has-errors",
        `the group file ${path.basename(group.file)} of \`${group.name}\` has errors (see ${group.file})`,
        { data: { file: group.file } },
      ),
    );
    if (resolved) groups.push(resolved);
  }
  return loaded;
}

/**
 * A group with aggregate_metric_list over the tasks of it that loaded; undefined when none did,
 * or when no entry of the list gives it a score. `refused` is the config's error for a group file
 * with errors.
 */
async function resolveGroup(
  group: GroupFiles,
  loadedFrom: ReadonlyMap<string, ResolvedBenchmark>,
  inputs: ProfileInputs,
  problems: Problem[],
  refused: () => Problem,
): Promise<ResolvedGroup | undefined> {
  const tasks = group.tasks.flatMap((file) => loadedFrom.get(file) ?? []);
  if (tasks.length === 0) return undefined;
  const read = await readAggregateSpecs(group.file, inputs.files);
  problems.push(...read.problems);
  if (errorsOf(read.problems).length > 0) {
    problems.push(refused());
    return undefined;
  }
  const scored = groupAggregates(group.name, read.specs, tasks);
  problems.push(...scored.problems);
  return scored.aggregates.length > 0
    ? { name: group.name, file: group.file, tasks: tasks.map((t) => t.name), aggregates: scored.aggregates }
    : undefined;
}

/** Whether a benchmark's `task` is a name (lm-eval's: a task, group or tag) rather than a file. */
export function isTaskName(task: string): boolean {
  return !/[\\/]/.test(task) && !/\.ya?ml$/i.test(task);
}

/** The task files entry `i` names (its file, or its name's tasks under `task_paths`), none loaded; empty when none is found. */
export async function benchmarkTaskFiles(config: ProfileConfig, source: YamlSource, i: number): Promise<string[]> {
  const found = await taskFilesOf(config, source, i);
  return "files" in found ? found.files : [];
}

/** The task files of entry `i`'s `task`: its file, or what its name stands for under `task_paths`. */
async function taskFilesOf(
  config: ProfileConfig,
  source: YamlSource,
  i: number,
): Promise<{ files: string[]; notFound?: string[]; groups?: GroupFiles[] } | { missing: string; file?: string }> {
  const task = config.benchmarks[i]!.task as string;
  const configDir = path.dirname(source.file);
  const asFile = path.resolve(configDir, task);
  if (await isFile(asFile)) return { files: [asFile] };
  if (!isTaskName(task)) return { missing: `task file not found: ${asFile}`, file: asFile };
  const folders = (config.task_paths ?? []).map((f) => path.resolve(configDir, f.replace(/^~(?=$|\/)/, os.homedir())));
  if (folders.length === 0)
    return {
      missing: `\`${task}\` is not a task file here; to name an lm-eval task, group or tag, list the folders that hold it in \`task_paths\``,
    };
  const resolved = resolveTaskName(await taskIndex(folders), task);
  return "files" in resolved ? resolved : { missing: `${resolved.missing} in task_paths (${folders.join(", ")})` };
}
