// What a config resolves its models and benchmarks to, and what loading it reads through (its
// files, task files, diagnostic datasets): apart from load.ts, so that what the loader uses (the
// abilities section, the targets, the jobs) can name them without importing the loader.
import type { BenchmarkNgramIndex } from "../diagnostic/contamination";
import type { DiagnosticCheckOptions, DiagnosticDatasetCheck } from "../diagnostic/dataset";
import type { TextFiles } from "../base/fsutil";
import type { Task, TaskLoad, TaskOptions } from "../lmeval/task";
import type { HelperPolicy } from "../lmeval/taskPython";
import type { ChatSettings } from "../prompts/chatPrompt";
import type { Dtype } from "./types";

export interface ResolvedModel {
  name: string;
  path: string;
  dtype: Dtype;
  /** The chat template and how to lay out few-shot examples, when the config asks for the template. */
  chat?: ChatSettings;
  /**
   * The longest sequence the model reads (lm-eval's max_length): the config's `max_length`, else
   * the model's window (model/modelSettings.ts). Benchmark contexts are cut from the left to fit.
   * Absent (a model made in code): nothing is cut.
   */
  maxLength?: number;
  /**
   * The config's `add_bos_token` (lm-eval's model argument): whether contexts and diagnostic
   * items get the tokenizer's special tokens. Absent: the tokenizer's own default, as lm-eval 0.4.10+.
   */
  addBosToken?: boolean;
  /** Where the folder is on an ssh or slurm target, when the config says (absolute or ~/...). */
  remotePath?: string;
}

export interface ResolvedBenchmark {
  name: string;
  task: Task;
  /** The ability the config labels it with (one of the profile's abilities). */
  ability?: string;
  /** The abilities the config expects it to need (`expects`), in the config's order. */
  expects?: ExpectedAbility[];
}

/** An ability a benchmark is expected to need, with its weight when the config gives weights. */
export interface ExpectedAbility {
  ability: string;
  weight?: number;
}

/** A benchmark entry's `expects` as a list of expected abilities (none when it has none). */
export function expectedAbilities(expects: string[] | Record<string, number> | undefined): ExpectedAbility[] {
  if (expects === undefined) return [];
  return Array.isArray(expects)
    ? expects.map((ability) => ({ ability }))
    : Object.entries(expects).map(([ability, weight]) => ({ ability, weight }));
}

/**
 * Where loadProfile gets what the config names. The CLI reads everything from disk each time
 * (`directInputs`); the editor's workspace model passes loaders that read unsaved buffers and
 * cache each result until a file it read changes.
 */
export interface ProfileInputs {
  files: TextFiles;
  task(file: string, options: TaskOptions): Promise<TaskLoad>;
  dataset(file: string, options: DiagnosticCheckOptions): Promise<DiagnosticDatasetCheck>;
  /** The contamination index of the benchmarks' documents; undefined when there are none. */
  benchmarkIndex(benchmarks: readonly ResolvedBenchmark[]): BenchmarkNgramIndex | undefined;
  /** Whether task files' `!function` helpers run (Python); they do unless told otherwise. */
  helpers?: HelperPolicy;
}
