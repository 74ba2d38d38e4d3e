// The spec of an lm-eval task file: the YAML read with the files it includes, each key checked
// where it was written, and the settings the loader uses (splits, templates, few-shot, generation,
// metrics and filters). What the profiler does not support is refused by key and line.
import * as path from "node:path";
import { errorsOf, fileProblem, notUtf8Problem, type Problem, type ProblemCode } from "../base/problems";
import { isFile, type TextFiles } from "../base/fsutil";
import { FUNCTION_TAG, parseYamlSource, type FieldPath, type YamlSource } from "../base/yamlSource";
import { DATASET_KINDS, type DatasetKind, type Doc } from "./documents";
import { FILTER_FUNCTIONS, type ExactMatchOptions, type FilterPipeline, type FilterStep } from "./exactMatch";
import { helperModuleFile, helperRef, type HelperRequest, type PythonScorer } from "./helpers";
import type { HelperRefusal } from "./taskPython";
import { pythonRegex } from "./pythonRegex";
import type { OutputType, TaskOptions } from "./taskItems";

/** Keys read here. Keys in IGNORED_TASK_KEYS are accepted and have no effect on scoring. */
export const SUPPORTED_TASK_KEYS: ReadonlySet<string> = new Set([
  "task",
  "include",
  "dataset_path",
  "dataset_kwargs",
  "test_split",
  "fewshot_split",
  "output_type",
  "doc_to_text",
  "doc_to_choice",
  "doc_to_target",
  "target_delimiter",
  "fewshot_delimiter",
  "num_fewshot",
  "fewshot_config",
  "description",
  "generation_kwargs",
  "metric_list",
  "filter_list",
  "repeats",
  "process_docs",
  "dataset_name",
  "process_results",
  "unsafe_code",
]);
/** The keys whose `!function` helpers run (lmeval/helpers.ts). */
const HELPER_KEYS: ReadonlySet<string> = new Set(["process_docs", "doc_to_text", "doc_to_target", "doc_to_choice", "process_results"]);
export const IGNORED_TASK_KEYS: ReadonlySet<string> = new Set([
  "tag",
  "group",
  "metadata",
  "training_split",
  "validation_split",
  "should_decontaminate",
  "doc_to_decontamination_query",
  "task_alias",
  "group_alias",
]);
const MULTIPLE_CHOICE_METRICS = new Set(["acc", "acc_norm"]);
const LM_EVAL_MAX_GEN_TOKS = 256;

/** A task file merged with the files it includes; each key remembers the file it came from. */
export interface TaskSource {
  raw: Record<string, unknown>;
  origin: Map<string, YamlSource>;
  main: YamlSource;
}

export async function readTaskSource(
  file: string,
  problems: Problem[],
  seen: Set<string>,
  files: TextFiles,
): Promise<TaskSource | undefined> {
  let text: string;
  try {
    text = await files.read(file);
  } catch (e) {
    problems.push(notUtf8Problem(file, e, "the task file") ?? fileProblem(file, "file.unreadable", `cannot read the task file: ${file}`));
    return undefined;
  }
  const main = parseYamlSource(text, file);
  problems.push(...main.problems);
  if (main.value === undefined) return undefined;
  return taskSourceOf(main, problems, new Set([...seen, file]), files);
}

/** The keys of one task definition (a file's or an inline one), after the file it includes. */
export async function taskSourceOf(
  main: YamlSource,
  problems: Problem[],
  seen: Set<string>,
  files: TextFiles,
): Promise<TaskSource | undefined> {
  if (typeof main.value !== "object" || main.value === null || Array.isArray(main.value)) {
    problems.push(main.at([], "task.invalid-value", "a task must be a YAML mapping of lm-eval task keys"));
    return undefined;
  }
  const own = main.value as Record<string, unknown>;
  const source: TaskSource = { raw: {}, origin: new Map(), main };
  // lm-eval's `include`: the named file's keys first, this file's keys override them.
  if (typeof own.include === "string") {
    const included = path.resolve(path.dirname(main.file), own.include);
    if (seen.has(included)) {
      problems.push(main.at(["include"], "task.include", `include cycle through ${included}`));
      return undefined;
    }
    if (!(await isFile(included))) {
      problems.push(main.at(["include"], "task.include", `included file not found: ${included}`, { data: { file: included } }));
      return undefined;
    }
    const base = await readTaskSource(included, problems, seen, files);
    if (!base) return undefined;
    Object.assign(source.raw, base.raw);
    base.origin.forEach((v, k) => source.origin.set(k, v));
  }
  for (const [key, value] of Object.entries(own)) {
    if (key === "include") continue;
    source.raw[key] = value;
    source.origin.set(key, main);
  }
  return source;
}

/** A problem at a task key, in the file that set the key; `task.invalid-value` unless a code is given. */
export type At = (keyPath: FieldPath, message: string, code?: ProblemCode, on?: "key" | "value") => Problem;

/**
 * Checks the task's keys. `refusal` says why its Python may not run (lmeval/taskPython.ts): each
 * key that would run a helper is then an error that says so, with the files the user may allow.
 */
export function checkKeys(source: TaskSource, at: At, problems: Problem[], refusal?: HelperRefusal): void {
  for (const [key, value] of Object.entries(source.raw)) {
    if (IGNORED_TASK_KEYS.has(key)) continue;
    if (key === "unsafe_code" && value === true) {
      problems.push(
        at(
          [key],
          "this task runs the code the model generates to score it: a run asks you to confirm it first (bprof: --confirm-run-unsafe-code, as lm-eval's --confirm_run_unsafe_code)",
          "task.unsafe-code",
          "key",
        ),
      );
      continue;
    }
    if (!SUPPORTED_TASK_KEYS.has(key)) {
      problems.push(at([key], `task key \`${key}\` is not supported by Benchmark Profiler`, "task.unsupported-key", "key"));
      continue;
    }
    const badPath = functionTags(value).find((tag) => helperRuns(key, tag.path) && !helperRef(tag.name, source.main.file));
    if (badPath) {
      problems.push(
        at(
          [key, ...badPath.path],
          `\`!function ${badPath.name}\` is not \`module.function\` of Python names: a helper is a module of the task's folder (\`utils.process_docs\` is utils.py beside the task file), never a file path, a leading dot or \`..\``,
          "task.python-function",
        ),
      );
      continue;
    }
    const fn = findFunctionTag(value);
    if (!fn) continue;
    if (!helperRuns(key, fn.path)) {
      problems.push(
        at(
          [key, ...fn.path],
          `\`${key}\` uses \`!function ${fn.name}\`: Python helpers run for process_docs, doc_to_text, doc_to_target, doc_to_choice, process_results, metrics, filter classes and custom filters; here, write it as a template or a built-in filter`,
          "task.python-function",
        ),
      );
    } else if (refusal) {
      const problem = at(
        [key, ...fn.path],
        `\`${key}\` runs the Python helper \`${fn.name}\`, and ${refusal.message}`,
        "task.python-function",
      );
      problems.push(refusal.ask ? { ...problem, data: { ...problem.data, pythonFiles: refusal.ask } } : problem);
    }
  }
}

/** Whether a `!function` at `fnPath` under `key` is one the loader runs (the others are refused by checkKeys). */
function helperRuns(key: string, fnPath: readonly (string | number)[]): boolean {
  const filterClass =
    key === "filter_list" && fnPath.length === 4 && fnPath[1] === "filter" && (fnPath[3] === "function" || fnPath[3] === "filter_fn");
  const metricFunction = key === "metric_list" && fnPath.length === 2 && fnPath[1] === "metric";
  return (HELPER_KEYS.has(key) && fnPath.length === 0) || filterClass || metricFunction;
}

/** The Python files a task would import, with their task folders: the module of every `!function` the loader runs, where lm-eval finds it. */
export function helperEntriesOf(source: TaskSource): { dir: string; file: string }[] {
  const entries = new Map<string, { dir: string; file: string }>();
  for (const [key, value] of Object.entries(source.raw)) {
    if (IGNORED_TASK_KEYS.has(key) || !SUPPORTED_TASK_KEYS.has(key)) continue;
    for (const fn of functionTags(value)) {
      const ref = helperRuns(key, fn.path) ? helperRef(fn.name, (source.origin.get(key) ?? source.main).file) : undefined;
      if (ref) entries.set(helperModuleFile(ref), { dir: ref.dir, file: helperModuleFile(ref) });
    }
  }
  return [...entries.values()];
}

function functionTags(value: unknown, at: (string | number)[] = []): { name: string; path: (string | number)[] }[] {
  if (typeof value !== "object" || value === null) return [];
  if (isFunctionTag(value)) return [{ name: String(value[FUNCTION_TAG]), path: at }];
  return Object.entries(value).flatMap(([k, v]) => functionTags(v, [...at, Array.isArray(value) ? Number(k) : k]));
}

function findFunctionTag(value: unknown, at: (string | number)[] = []): { name: string; path: (string | number)[] } | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  if (isFunctionTag(value)) return { name: String(value[FUNCTION_TAG]), path: at };
  for (const [k, v] of Object.entries(value)) {
    const found = findFunctionTag(v, [...at, Array.isArray(value) ? Number(k) : k]);
    if (found) return found;
  }
  return undefined;
}

export interface TaskSpec {
  name: string;
  outputType: OutputType;
  kind: DatasetKind;
  field?: string;
  testSplit: string;
  fewshotSplit?: string;
  fewshotSamples?: Doc[];
  fewshotSampler: "default" | "first_n";
  numFewshot: number;
  docToText: unknown;
  docToChoice: unknown;
  docToTarget: unknown;
  description: string;
  targetDelimiter: string;
  fewshotDelimiter: string;
  until: string[];
  maxGenToks: number;
  metrics: string[];
  filters: FilterPipeline[];
  exactMatch: ExactMatchOptions;
  /** The task's own per-document score, in Python, when it has one (process_results, a `!function` metric). */
  scorer?: PythonScorer;
  /** unsafe_code: true, the scorer runs the code the model generates. */
  unsafeCode: boolean;
}

/** `fileOf(key)`: the YAML file that set the key (the task's, or one it includes), where its helpers are found. */
export function readSpec(
  raw: Record<string, unknown>,
  at: At,
  problems: Problem[],
  options: TaskOptions,
  fileOf: (key: string) => string,
): TaskSpec | undefined {
  const str = (key: string, fallback?: string): string | undefined => {
    const value = raw[key];
    if (value === undefined) return fallback;
    if (typeof value !== "string") {
      problems.push(at([key], `\`${key}\` must be a string`));
      return fallback;
    }
    return value;
  };
  const name = str("task");
  if (!name) problems.push(at(["task"], "the task needs a name: `task: <name>`", "task.missing-key"));
  const outputType = raw.output_type;
  if (outputType !== "multiple_choice" && outputType !== "generate_until") {
    problems.push(at(["output_type"], `output_type \`${String(outputType)}\` is not supported; use multiple_choice or generate_until`));
  }
  const kind = raw.dataset_path;
  const local = DATASET_KINDS.includes(kind as DatasetKind);
  if (!options.data && typeof kind !== "string") {
    problems.push(
      at(
        ["dataset_path"],
        "the task needs `dataset_path`: json, csv or parquet with `dataset_kwargs.data_files`, or a Hugging Face dataset in this machine's hub cache",
        "task.missing-key",
      ),
    );
  }
  for (const key of ["doc_to_text", "doc_to_target"])
    if (raw[key] === undefined) problems.push(at([key], `the task needs \`${key}\``, "task.missing-key"));
  if (outputType === "multiple_choice" && raw.doc_to_choice === undefined)
    problems.push(at(["doc_to_choice"], "a multiple_choice task needs `doc_to_choice`", "task.missing-key"));
  if (raw.repeats !== undefined && raw.repeats !== 1) problems.push(at(["repeats"], "only `repeats: 1` is supported (greedy scoring)"));

  const kwargs = (raw.dataset_kwargs ?? {}) as Record<string, unknown>;
  const field = kwargs.field;
  for (const key of Object.keys(kwargs)) {
    if (!options.data && local && key !== "data_files" && key !== "field")
      problems.push(
        at(["dataset_kwargs", key], `dataset_kwargs.${key} is not supported (data_files and field are)`, "task.unsupported-key", "key"),
      );
  }

  const numFewshot = options.numFewshot ?? (raw.num_fewshot === undefined ? 0 : Number(raw.num_fewshot));
  if (!Number.isInteger(numFewshot) || numFewshot < 0) problems.push(at(["num_fewshot"], "num_fewshot must be a non-negative integer"));
  const fewshot = readFewshotConfig(raw.fewshot_config, at, problems);
  const generation = readGenerationKwargs(raw.generation_kwargs, at, problems);
  const processResults = isFunctionTag(raw.process_results)
    ? helperRef(raw.process_results[FUNCTION_TAG], fileOf("process_results"))
    : undefined;
  if (raw.process_results !== undefined && !processResults)
    problems.push(at(["process_results"], "process_results must be `!function module.function`", "task.python-function"));
  const metricSpec = readMetricList(
    raw.metric_list,
    outputType === "generate_until" ? "generate_until" : "multiple_choice",
    at,
    problems,
    processResults !== undefined,
  );
  const scorer = processResults
    ? { kind: "process_results" as const, ref: processResults, metric: metricSpec.metrics[0] ?? "acc" }
    : metricSpec.metricFunction?.(fileOf("metric_list"));
  const filters = readFilterList(raw.filter_list, at, problems, fileOf("filter_list"));
  const fewshotDelimiter = str("fewshot_delimiter", "\n\n")!;

  if (errorsOf(problems).length > 0) return undefined;
  return {
    name: name!,
    outputType: outputType as OutputType,
    kind: kind as DatasetKind,
    ...(typeof field === "string" ? { field } : {}),
    testSplit: scoredSplit(raw, at, problems),
    ...(str("fewshot_split") ? { fewshotSplit: str("fewshot_split")! } : {}),
    ...(fewshot.samples ? { fewshotSamples: fewshot.samples } : {}),
    fewshotSampler: fewshot.sampler,
    numFewshot,
    docToText: raw.doc_to_text,
    docToChoice: raw.doc_to_choice,
    docToTarget: raw.doc_to_target,
    description: str("description", "")!,
    targetDelimiter: str("target_delimiter", " ")!,
    fewshotDelimiter,
    // lm-eval's default stop sequence is the few-shot delimiter.
    until: generation.until ?? [fewshotDelimiter],
    maxGenToks: generation.maxGenToks ?? LM_EVAL_MAX_GEN_TOKS,
    metrics: metricSpec.metrics,
    filters: filters.length > 0 ? filters : [{ name: "none", steps: [{ function: "take_first" }] }],
    exactMatch: metricSpec.exactMatch,
    ...(scorer ? { scorer } : {}),
    unsafeCode: raw.unsafe_code === true,
  };
}

/**
 * The split lm-eval scores: `test_split`, else (when it is null or absent) `validation_split`;
 * "test" when neither is set, for local data files that name one split.
 */
function scoredSplit(raw: Record<string, unknown>, at: At, problems: Problem[]): string {
  for (const key of ["test_split", "validation_split"]) {
    const value = raw[key];
    if (typeof value === "string") return value;
    if (value !== undefined && value !== null) problems.push(at([key], `\`${key}\` must be a split's name or null`));
  }
  return "test";
}

function readFewshotConfig(value: unknown, at: At, problems: Problem[]): { sampler: "default" | "first_n"; samples?: Doc[] } {
  if (value === undefined) return { sampler: "default" };
  const config = value as { sampler?: unknown; samples?: unknown };
  const sampler = config.sampler ?? "default";
  if (sampler !== "default" && sampler !== "first_n")
    problems.push(at(["fewshot_config", "sampler"], "fewshot_config.sampler must be default or first_n"));
  for (const key of Object.keys(config)) {
    if (key !== "sampler" && key !== "samples")
      problems.push(at(["fewshot_config", key], `fewshot_config.${key} is not supported`, "task.unsupported-key", "key"));
  }
  if (
    config.samples !== undefined &&
    (!Array.isArray(config.samples) || !config.samples.every((s) => typeof s === "object" && s !== null))
  ) {
    problems.push(at(["fewshot_config", "samples"], "fewshot_config.samples must be a list of documents"));
    return { sampler: "default" };
  }
  return { sampler: sampler as "default" | "first_n", ...(config.samples ? { samples: config.samples as Doc[] } : {}) };
}

function readGenerationKwargs(value: unknown, at: At, problems: Problem[]): { until?: string[]; maxGenToks?: number } {
  if (value === undefined) return {};
  const kwargs = value as Record<string, unknown>;
  const out: { until?: string[]; maxGenToks?: number } = {};
  for (const [key, v] of Object.entries(kwargs)) {
    if (key === "until") {
      const until = typeof v === "string" ? [v] : v;
      if (!Array.isArray(until) || !until.every((s) => typeof s === "string"))
        problems.push(at(["generation_kwargs", "until"], "until must be a string or a list of strings"));
      else out.until = until;
    } else if (key === "max_gen_toks") {
      if (!Number.isInteger(v) || (v as number) < 1)
        problems.push(at(["generation_kwargs", key], "max_gen_toks must be a positive integer"));
      else out.maxGenToks = v as number;
    } else if (key === "do_sample") {
      if (v !== false) problems.push(at(["generation_kwargs", key], "only greedy decoding is supported: do_sample must be false"));
    } else if (key === "temperature") {
      if (v !== 0 && v !== 0.0) problems.push(at(["generation_kwargs", key], "only greedy decoding is supported: temperature must be 0"));
    } else {
      problems.push(
        at(
          ["generation_kwargs", key],
          `generation_kwargs.${key} is not supported (until, max_gen_toks, do_sample: false, temperature: 0 are)`,
          "task.unsupported-key",
          "key",
        ),
      );
    }
  }
  return out;
}

/**
 * The task's metrics, the first being the one AIS uses. With process_results, a metric is a key of
 * the dict it returns, any name. A `!function` metric (called per document as lm-eval does:
 * references=[target], predictions=[answer], the entry's other keys as keyword arguments) is
 * returned as `metricFunction`, to be resolved against the file that holds metric_list.
 */
function readMetricList(
  value: unknown,
  outputType: OutputType,
  at: At,
  problems: Problem[],
  processResults: boolean,
): { metrics: string[]; exactMatch: ExactMatchOptions; metricFunction?: (file: string) => PythonScorer | undefined } {
  const fallback = outputType === "multiple_choice" ? ["acc", "acc_norm"] : ["exact_match"];
  if (value === undefined) return { metrics: fallback, exactMatch: {} };
  if (!Array.isArray(value)) {
    problems.push(at(["metric_list"], "metric_list must be a list of {metric: ...}"));
    return { metrics: fallback, exactMatch: {} };
  }
  const metrics: string[] = [];
  let exactMatch: ExactMatchOptions = {};
  let metricFunction: ((file: string) => PythonScorer | undefined) | undefined;
  value.forEach((entry: Record<string, unknown>, i) => {
    if (entry?.aggregation !== undefined && entry.aggregation !== "mean")
      problems.push(at(["metric_list", i, "aggregation"], "only `aggregation: mean` is supported"));
    if (isFunctionTag(entry?.metric)) {
      const name = entry.metric[FUNCTION_TAG];
      if (outputType !== "generate_until" || processResults || metricFunction) {
        const why =
          outputType !== "generate_until"
            ? "in a generate_until task (a multiple_choice task scores itself with process_results)"
            : "once per task, and not beside process_results";
        problems.push(at(["metric_list", i, "metric"], `a \`!function\` metric runs only ${why}`, "task.python-function"));
        return;
      }
      const { metric: _function, aggregation: _aggregation, higher_is_better: _higher, ...kwargs } = entry;
      metricFunction = (file) => {
        const ref = helperRef(name, file);
        if (!ref) problems.push(at(["metric_list", i, "metric"], "`!function` needs `module.function`", "task.python-function"));
        return ref ? { kind: "metric", ref, metric: ref.name, kwargs } : undefined;
      };
      metrics.push(String(name));
      return;
    }
    const metric = String(entry?.metric);
    const allowed = processResults || (outputType === "multiple_choice" ? MULTIPLE_CHOICE_METRICS.has(metric) : metric === "exact_match");
    if (!allowed) {
      const supported = outputType === "multiple_choice" ? "acc, acc_norm" : "exact_match";
      problems.push(
        at(
          ["metric_list", i, "metric"],
          `metric \`${metric}\` is not supported for ${outputType} (supported: ${supported}, any key of process_results' dict, or a \`!function\` metric)`,
        ),
      );
      return;
    }
    metrics.push(metric);
    if (metric === "exact_match" && !processResults) exactMatch = readExactMatchOptions(entry, i, at, problems);
  });
  return { metrics, exactMatch, ...(metricFunction ? { metricFunction } : {}) };
}

function readExactMatchOptions(entry: Record<string, unknown>, i: number, at: At, problems: Problem[]): ExactMatchOptions {
  const options: ExactMatchOptions = {};
  for (const flag of ["ignore_case", "ignore_punctuation", "ignore_numbers"] as const) {
    if (entry[flag] !== undefined) options[flag] = entry[flag] === true;
  }
  if (entry.regexes_to_ignore !== undefined) {
    const regexes = entry.regexes_to_ignore;
    if (!Array.isArray(regexes)) problems.push(at(["metric_list", i, "regexes_to_ignore"], "regexes_to_ignore must be a list of patterns"));
    else {
      regexes.forEach((pattern, j) => checkPattern(String(pattern), ["metric_list", i, "regexes_to_ignore", j], at, problems));
      options.regexes_to_ignore = regexes.map(String);
    }
  }
  return options;
}

function checkPattern(pattern: string, where: FieldPath, at: At, problems: Problem[]): void {
  try {
    pythonRegex(pattern);
  } catch (e) {
    problems.push(at(where, (e as Error).message));
  }
}

function readFilterList(value: unknown, at: At, problems: Problem[], file: string): FilterPipeline[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    problems.push(at(["filter_list"], "filter_list must be a list of {name, filter: [...]}"));
    return [];
  }
  return value.map((entry: { name?: unknown; filter?: unknown }, i) => {
    const steps = Array.isArray(entry?.filter) ? entry.filter : [];
    if (steps.length === 0) problems.push(at(["filter_list", i], "a filter pipeline needs a non-empty `filter` list"));
    const read = steps.map((step: Record<string, unknown>, j): FilterStep => {
      // lm-eval builds a filter class with the step's other keys as its keyword arguments.
      if (isFunctionTag(step?.function)) {
        const { function: fn, ...kwargs } = step;
        const ref = helperRef((fn as Record<string, string>)[FUNCTION_TAG]!, file);
        if (!ref)
          problems.push(at(["filter_list", i, "filter", j, "function"], "`!function` needs `module.ClassName`", "task.python-function"));
        return { function: "python", helper: { ref: ref ?? { dir: "", module: "", name: "" }, kwargs } };
      }
      // lm-eval's `custom` filter calls filter_fn(resps, docs).
      if (step?.function === "custom") {
        const ref = isFunctionTag(step.filter_fn) ? helperRef(step.filter_fn[FUNCTION_TAG], file) : undefined;
        if (!ref)
          problems.push(
            at(["filter_list", i, "filter", j], "a custom filter needs `filter_fn: !function module.function`", "task.python-function"),
          );
        return { function: "python", helper: { ref: ref ?? { dir: "", module: "", name: "" }, kwargs: {}, call: "function" } };
      }
      if (!FILTER_FUNCTIONS.includes(step?.function as (typeof FILTER_FUNCTIONS)[number])) {
        problems.push(
          at(
            ["filter_list", i, "filter", j, "function"],
            `filter function \`${String(step?.function)}\` is not supported (supported: ${FILTER_FUNCTIONS.join(", ")})`,
          ),
        );
      } else if (step.function === "regex") {
        if (typeof step.regex_pattern !== "string")
          problems.push(at(["filter_list", i, "filter", j], "a regex filter needs `regex_pattern`"));
        else checkPattern(step.regex_pattern, ["filter_list", i, "filter", j, "regex_pattern"], at, problems);
      } else if (step.function === "multi_choice_regex") {
        if (step.regex_pattern !== undefined)
          checkPattern(String(step.regex_pattern), ["filter_list", i, "filter", j, "regex_pattern"], at, problems);
        const ignored = step.regexes_to_ignore;
        if (ignored !== undefined && ignored !== null && !Array.isArray(ignored))
          problems.push(at(["filter_list", i, "filter", j, "regexes_to_ignore"], "regexes_to_ignore must be a list of patterns"));
        else
          (ignored ?? []).forEach((pattern: unknown, n: number) =>
            checkPattern(String(pattern), ["filter_list", i, "filter", j, "regexes_to_ignore", n], at, problems),
          );
      } else if (step.function === "take_first_k") {
        if (!Number.isInteger(step.k) || (step.k as number) < 1)
          problems.push(at(["filter_list", i, "filter", j], "a take_first_k filter needs `k`, a positive integer"));
      } else if (step.function === "map") {
        const mapping = step.mapping_dict;
        if (typeof mapping !== "object" || mapping === null || Array.isArray(mapping))
          problems.push(at(["filter_list", i, "filter", j], "a map filter needs `mapping_dict`, a mapping of responses to answers"));
      }
      return step as FilterStep;
    });
    return { name: String(entry?.name ?? `filter ${i}`), steps: read };
  });
}

export function isFunctionTag(value: unknown): value is Record<typeof FUNCTION_TAG, string> {
  return typeof value === "object" && value !== null && FUNCTION_TAG in value;
}

/** The `!function` helpers of a task's keys, each resolved against the YAML file that names it. */
export function helperRequest(source: TaskSource): HelperRequest | undefined {
  const refOf = (key: string) => {
    const value = source.raw[key];
    return isFunctionTag(value) ? helperRef(value[FUNCTION_TAG], (source.origin.get(key) ?? source.main).file) : undefined;
  };
  const processDocs = refOf("process_docs");
  const perDocument: HelperRequest["perDocument"] = {};
  for (const key of ["doc_to_text", "doc_to_target", "doc_to_choice"] as const) {
    const ref = refOf(key);
    if (ref) perDocument[key] = ref;
  }
  return processDocs || Object.keys(perDocument).length > 0 ? { ...(processDocs ? { processDocs } : {}), perDocument } : undefined;
}
