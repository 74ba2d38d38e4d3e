// Benchmarks are lm-eval task YAML files whose data is local. This reads the subset of the
// format the profiler supports, renders every document to the text it scores, and refuses, by
// key and line, what it does not support.
import * as path from "node:path";
import { FILTER_FUNCTIONS, type ExactMatchOptions, type FilterPipeline, type FilterStep } from "../analysis/exactMatch";
import { errorsOf, fileProblem, notUtf8Problem, problemAt, type Problem, type ProblemCode } from "../problems";
import { diskFiles, type TextFiles } from "../fsutil";
import { isFile } from "../fsutil";
import { PythonRandom } from "../prompts/pythonRandom";
import { pythonRegex } from "../prompts/pythonRegex";
import { parseListLiteral } from "../prompts/literal";
import { fieldNames, lmEvalTemplate, TemplateError, type TextTemplate } from "../prompts/template";
import { formatFieldPath, FUNCTION_TAG, parseYamlSource, scopedSource, type FieldPath, type YamlSource } from "../yamlSource";
import { hubSplitFiles, HubDataNotFound } from "../lmeval/hubCache";
import { helperRef, HelperError, runHelpers, type DocumentHelperKey, type HelperAnswer, type HelperRequest } from "../lmeval/helpers";
import { DATASET_KINDS, datasetKindOf, DocumentError, loadDocuments, THE_ONE_LIST, type DatasetKind, type Doc } from "./documents";

export type OutputType = "multiple_choice" | "generate_until";

/**
 * The pieces a document's context is made of, kept apart so that a chat template can lay them
 * out as lm-eval does (prompts/chatPrompt.ts): the rendered description, the few-shot examples
 * (doc_to_text and the answer as shown) and doc_to_text of the document itself. Without a chat
 * template, `context` is their concatenation (description + examples + text).
 */
export interface PromptParts {
  description: string;
  fewshot: { text: string; target: string }[];
  text: string;
}

export interface MultipleChoiceItem {
  kind: "multiple_choice";
  /** Index of the document in the test split. */
  index: number;
  /** 1-based line of the document in the data file, where the format has lines (jsonl, csv). */
  line?: number;
  context: string;
  prompt: PromptParts;
  choices: string[];
  /** Continuations as scored: target_delimiter + choice text. */
  continuations: string[];
  target: number;
}

export interface GenerationItem {
  kind: "generate_until";
  index: number;
  line?: number;
  context: string;
  prompt: PromptParts;
  /** The reference answer before filters and exact_match's normalisation. */
  target: string;
}

export type TaskItem = MultipleChoiceItem | GenerationItem;

export interface Task {
  name: string;
  /** The task file; for a task defined inline in a config, `<config file>#benchmarks[i].task`. */
  file: string;
  outputType: OutputType;
  /** lm-eval's target_delimiter (before a choice, and between a few-shot example and its answer) and fewshot_delimiter. */
  targetDelimiter: string;
  fewshotDelimiter: string;
  dataFile: string;
  numFewshot: number;
  items: TaskItem[];
  /** Multiple choice: the metrics to report (acc, acc_norm). Generation: exact_match. */
  metrics: string[];
  generation?: { until: string[]; maxGenToks: number };
  /** Generation: filter pipelines in file order; the first is the one AIS uses unless told. */
  filters: FilterPipeline[];
  exactMatch: ExactMatchOptions;
}

export interface TaskOptions {
  limit?: number;
  /** Overrides the task's num_fewshot. */
  numFewshot?: number;
  /** Overrides where the data is (a config's `benchmarks[].data`, absolute paths). */
  data?: DataFiles;
  /** Whether `!function` helpers may run (Python); `refuse` in a VS Code workspace that is not trusted. */
  helpers?: "run" | "refuse";
}

/** The data of a task's splits: one file for its test split, or a file per split. */
export type DataFiles = string | Record<string, string>;

/** Keys read here. Keys in IGNORED_TASK_KEYS are accepted and have no effect on scoring. */
export const SUPPORTED_TASK_KEYS: ReadonlySet<string> = new Set([
  "task", "include", "dataset_path", "dataset_kwargs", "test_split", "fewshot_split", "output_type",
  "doc_to_text", "doc_to_choice", "doc_to_target", "target_delimiter", "fewshot_delimiter", "num_fewshot",
  "fewshot_config", "description", "generation_kwargs", "metric_list", "filter_list", "repeats", "process_docs", "dataset_name",
]);
/** The keys whose `!function` helpers run (lmeval/helpers.ts). */
const HELPER_KEYS: ReadonlySet<string> = new Set(["process_docs", "doc_to_text", "doc_to_target", "doc_to_choice"]);
export const IGNORED_TASK_KEYS: ReadonlySet<string> = new Set([
  "tag", "group", "metadata", "training_split", "validation_split", "should_decontaminate",
  "doc_to_decontamination_query", "task_alias", "group_alias",
]);
const MULTIPLE_CHOICE_METRICS = new Set(["acc", "acc_norm"]);
const LM_EVAL_MAX_GEN_TOKS = 256;
const LM_EVAL_FEWSHOT_SEED = 1234;

/** A task file merged with the files it includes; each key remembers the file it came from. */
interface TaskSource {
  raw: Record<string, unknown>;
  origin: Map<string, YamlSource>;
  main: YamlSource;
}

/** A task and the problems found on the way; no task when there are errors. */
export interface TaskLoad {
  task?: Task;
  problems: Problem[];
}

export async function loadTask(file: string, options: TaskOptions = {}, files: TextFiles = diskFiles): Promise<TaskLoad> {
  const problems: Problem[] = [];
  const source = await readTaskSource(path.resolve(file), problems, new Set(), files);
  if (!source) return { problems };
  return buildTask(source, path.resolve(file), problems, options, files);
}

/**
 * A task defined inline in a profiling config (`benchmarks[i].task` as a mapping): `source` is
 * the config's, `at` the field that holds the definition. Every problem points into the config;
 * `include` and `data_files` are resolved against the config file's folder.
 */
export async function loadInlineTask(definition: unknown, source: YamlSource, at: FieldPath, options: TaskOptions = {}, files: TextFiles = diskFiles): Promise<TaskLoad> {
  const problems: Problem[] = [];
  const scoped = scopedSource(source, at, definition);
  const taskSource = await taskSourceOf(scoped, problems, new Set([source.file]), files);
  if (!taskSource) return { problems };
  return buildTask(taskSource, `${source.file}#${formatFieldPath(at)}`, problems, options, files);
}

/** Where a task's test documents are, without rendering them: the data file and each document's line (after `limit`). */
export interface TaskPlaces {
  name: string;
  dataFile: string;
  /** 1-based line of each document, by index; empty for formats without lines (Parquet). */
  lines: number[];
}

/** The places of a task file's documents: what marking documents in their data file needs, and no more. */
export async function loadTaskPlaces(file: string, options: TaskOptions = {}, files: TextFiles = diskFiles): Promise<{ places?: TaskPlaces; problems: Problem[] }> {
  const problems: Problem[] = [];
  const source = await readTaskSource(path.resolve(file), problems, new Set(), files);
  const read = source && (await testDocuments(source, problems, options, files));
  if (!read) return { problems };
  const count = Math.min(options.limit ?? read.test.docs.length, read.test.docs.length);
  return { places: { name: read.spec.name, dataFile: read.dataFile, lines: (read.test.lines ?? []).slice(0, count) }, problems };
}

/** The task's spec and its test split's documents, with the problems met on the way. */
async function testDocuments(source: TaskSource, problems: Problem[], options: TaskOptions, files: TextFiles) {
  const at: At = (keyPath, message, code = "task.invalid-value", on = "value") =>
    (source.origin.get(String(keyPath[0])) ?? source.main).at(keyPath, code, message, { on });
  checkKeys(source, at, problems, options);
  const spec = readSpec(source.raw, at, problems, options);
  if (errorsOf(problems).length > 0 || !spec) return undefined;
  const data = await dataOf(source, spec, spec.testSplit, at, problems, options.data);
  if (!data) return undefined;
  const test = await readDocuments(data, at, problems, files);
  return test ? { spec, at, dataFile: data.file, test } : undefined;
}

async function buildTask(source: TaskSource, file: string, problems: Problem[], options: TaskOptions, files: TextFiles): Promise<TaskLoad> {
  const read = await testDocuments(source, problems, options, files);
  if (!read) return { problems };
  const { spec, at, dataFile } = read;
  const helpers = helperRequest(source);
  const helperValues = new Map<DocumentHelperKey, WeakMap<Doc, unknown>>();
  const withHelpers = (split: { docs: Doc[]; lines?: number[] }, file: string) => (helpers ? applyHelpers(helpers, split, file, helperValues, at, problems) : split);
  const test = await withHelpers(read.test, dataFile);
  if (!test) return { problems };

  let fewshotDocs: Doc[] = [];
  if (spec.numFewshot > 0) {
    if (spec.fewshotSamples) fewshotDocs = spec.fewshotSamples;
    else if (spec.fewshotSplit) {
      const fewshotData = await dataOf(source, spec, spec.fewshotSplit, at, problems, options.data);
      const read = fewshotData ? await readDocuments(fewshotData, at, problems, files) : undefined;
      const loaded = read && (await withHelpers(read, fewshotData!.file));
      if (!loaded) return { problems };
      fewshotDocs = loaded.docs;
    } else {
      problems.push(at(["num_fewshot"], "num_fewshot > 0 needs `fewshot_split` or `fewshot_config.samples`", "task.fewshot"));
      return { problems };
    }
    if (fewshotDocs.length < spec.numFewshot) {
      problems.push(at(["num_fewshot"], `num_fewshot is ${spec.numFewshot} but only ${fewshotDocs.length} few-shot documents exist`, "task.fewshot"));
      return { problems };
    }
  }

  const render = new Renderer(spec, fewshotDocs, helperValues);
  const items: TaskItem[] = [];
  const docs = test.docs.slice(0, options.limit ?? test.docs.length);
  for (const [index, doc] of docs.entries()) {
    try {
      const line = test.lines?.[index];
      items.push({ ...render.item(doc, index), ...(line !== undefined ? { line } : {}) });
    } catch (e) {
      // A template's own fault would be the same for every document: once, where the template is.
      // So is an error of a render that failed on the first document; after that, it is the data's.
      if (e instanceof TemplateFault && (e.origin !== "render" || items.length === 0)) {
        problems.push(at([e.key], `${e.key}: ${e.message}${e.origin === "template" ? "" : ` in document ${index}`}`, "task.template"));
        break;
      }
      const line = test.lines?.[index] ?? 1;
      problems.push(problemAt({ file: dataFile, line, column: 1 }, "task.document", `document ${index}: ${(e as Error).message}`));
      if (errorsOf(problems).length >= 20) break;
    }
  }
  if (test.docs.length === 0) problems.push(fileProblem(dataFile, "task.empty-split", `split \`${spec.testSplit}\` has no documents`));
  if (errorsOf(problems).length > 0) return { problems };

  const task: Task = {
    name: spec.name,
    file,
    outputType: spec.outputType,
    targetDelimiter: spec.targetDelimiter,
    fewshotDelimiter: spec.fewshotDelimiter,
    dataFile,
    numFewshot: spec.numFewshot,
    items,
    metrics: spec.metrics,
    filters: spec.filters,
    exactMatch: spec.exactMatch,
    ...(spec.outputType === "generate_until" ? { generation: { until: spec.until, maxGenToks: spec.maxGenToks } } : {}),
  };
  return { task, problems };
}

async function readTaskSource(file: string, problems: Problem[], seen: Set<string>, files: TextFiles): Promise<TaskSource | undefined> {
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
async function taskSourceOf(main: YamlSource, problems: Problem[], seen: Set<string>, files: TextFiles): Promise<TaskSource | undefined> {
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
type At = (keyPath: FieldPath, message: string, code?: ProblemCode, on?: "key" | "value") => Problem;

function checkKeys(source: TaskSource, at: At, problems: Problem[], options: TaskOptions): void {
  for (const [key, value] of Object.entries(source.raw)) {
    if (IGNORED_TASK_KEYS.has(key)) continue;
    if (!SUPPORTED_TASK_KEYS.has(key)) {
      problems.push(at([key], `task key \`${key}\` is not supported by Benchmark Profiler`, "task.unsupported-key", "key"));
      continue;
    }
    const fn = findFunctionTag(value);
    if (!fn) continue;
    const runs = HELPER_KEYS.has(key) && fn.path.length === 0;
    if (!runs) {
      problems.push(at([key, ...fn.path], `\`${key}\` uses \`!function ${fn.name}\`: Python helpers run for process_docs, doc_to_text, doc_to_target and doc_to_choice; here, write it as a template or a built-in filter`, "task.python-function"));
    } else if (options.helpers === "refuse") {
      problems.push(at([key], `\`${key}\` runs the Python helper \`${fn.name}\`, and helpers run only in a trusted workspace: trust this folder to check and run this task`, "task.python-function"));
    }
  }
}

function findFunctionTag(value: unknown, at: (string | number)[] = []): { name: string; path: (string | number)[] } | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  if (FUNCTION_TAG in value) return { name: String((value as Record<string, unknown>)[FUNCTION_TAG]), path: at };
  for (const [k, v] of Object.entries(value)) {
    const found = findFunctionTag(v, [...at, Array.isArray(value) ? Number(k) : k]);
    if (found) return found;
  }
  return undefined;
}

interface TaskSpec {
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
}

function readSpec(raw: Record<string, unknown>, at: At, problems: Problem[], options: TaskOptions): TaskSpec | undefined {
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
    problems.push(at(["dataset_path"], "the task needs `dataset_path`: json, csv or parquet with `dataset_kwargs.data_files`, or a Hugging Face dataset in this machine's hub cache", "task.missing-key"));
  }
  for (const key of ["doc_to_text", "doc_to_target"]) if (raw[key] === undefined) problems.push(at([key], `the task needs \`${key}\``, "task.missing-key"));
  if (outputType === "multiple_choice" && raw.doc_to_choice === undefined) problems.push(at(["doc_to_choice"], "a multiple_choice task needs `doc_to_choice`", "task.missing-key"));
  if (raw.repeats !== undefined && raw.repeats !== 1) problems.push(at(["repeats"], "only `repeats: 1` is supported (greedy scoring)"));

  const kwargs = (raw.dataset_kwargs ?? {}) as Record<string, unknown>;
  const field = kwargs.field;
  for (const key of Object.keys(kwargs)) {
    if (!options.data && local && key !== "data_files" && key !== "field") problems.push(at(["dataset_kwargs", key], `dataset_kwargs.${key} is not supported (data_files and field are)`, "task.unsupported-key", "key"));
  }

  const numFewshot = options.numFewshot ?? (raw.num_fewshot === undefined ? 0 : Number(raw.num_fewshot));
  if (!Number.isInteger(numFewshot) || numFewshot < 0) problems.push(at(["num_fewshot"], "num_fewshot must be a non-negative integer"));
  const fewshot = readFewshotConfig(raw.fewshot_config, at, problems);
  const generation = readGenerationKwargs(raw.generation_kwargs, at, problems);
  const metricSpec = readMetricList(raw.metric_list, outputType === "generate_until" ? "generate_until" : "multiple_choice", at, problems);
  const filters = readFilterList(raw.filter_list, at, problems);
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
  if (sampler !== "default" && sampler !== "first_n") problems.push(at(["fewshot_config", "sampler"], "fewshot_config.sampler must be default or first_n"));
  for (const key of Object.keys(config)) {
    if (key !== "sampler" && key !== "samples") problems.push(at(["fewshot_config", key], `fewshot_config.${key} is not supported`, "task.unsupported-key", "key"));
  }
  if (config.samples !== undefined && (!Array.isArray(config.samples) || !config.samples.every((s) => typeof s === "object" && s !== null))) {
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
      if (!Array.isArray(until) || !until.every((s) => typeof s === "string")) problems.push(at(["generation_kwargs", "until"], "until must be a string or a list of strings"));
      else out.until = until;
    } else if (key === "max_gen_toks") {
      if (!Number.isInteger(v) || (v as number) < 1) problems.push(at(["generation_kwargs", key], "max_gen_toks must be a positive integer"));
      else out.maxGenToks = v as number;
    } else if (key === "do_sample") {
      if (v !== false) problems.push(at(["generation_kwargs", key], "only greedy decoding is supported: do_sample must be false"));
    } else if (key === "temperature") {
      if (v !== 0 && v !== 0.0) problems.push(at(["generation_kwargs", key], "only greedy decoding is supported: temperature must be 0"));
    } else {
      problems.push(at(["generation_kwargs", key], `generation_kwargs.${key} is not supported (until, max_gen_toks, do_sample: false, temperature: 0 are)`, "task.unsupported-key", "key"));
    }
  }
  return out;
}

function readMetricList(value: unknown, outputType: OutputType, at: At, problems: Problem[]): { metrics: string[]; exactMatch: ExactMatchOptions } {
  const fallback = outputType === "multiple_choice" ? ["acc", "acc_norm"] : ["exact_match"];
  if (value === undefined) return { metrics: fallback, exactMatch: {} };
  if (!Array.isArray(value)) {
    problems.push(at(["metric_list"], "metric_list must be a list of {metric: ...}"));
    return { metrics: fallback, exactMatch: {} };
  }
  const metrics: string[] = [];
  let exactMatch: ExactMatchOptions = {};
  value.forEach((entry: Record<string, unknown>, i) => {
    const metric = String(entry?.metric);
    const allowed = outputType === "multiple_choice" ? MULTIPLE_CHOICE_METRICS.has(metric) : metric === "exact_match";
    if (!allowed) {
      const supported = outputType === "multiple_choice" ? "acc, acc_norm" : "exact_match";
      problems.push(at(["metric_list", i, "metric"], `metric \`${metric}\` is not supported for ${outputType} (supported: ${supported})`));
      return;
    }
    metrics.push(metric);
    if (metric === "exact_match") exactMatch = readExactMatchOptions(entry, i, at, problems);
    if (entry.aggregation !== undefined && entry.aggregation !== "mean") problems.push(at(["metric_list", i, "aggregation"], "only `aggregation: mean` is supported"));
  });
  return { metrics, exactMatch };
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

function readFilterList(value: unknown, at: At, problems: Problem[]): FilterPipeline[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    problems.push(at(["filter_list"], "filter_list must be a list of {name, filter: [...]}"));
    return [];
  }
  return value.map((entry: { name?: unknown; filter?: unknown }, i) => {
    const steps = Array.isArray(entry?.filter) ? entry.filter : [];
    if (steps.length === 0) problems.push(at(["filter_list", i], "a filter pipeline needs a non-empty `filter` list"));
    steps.forEach((step: Record<string, unknown>, j) => {
      // A `!function` filter is refused once, by checkKeys.
      if (isFunctionTag(step?.function)) return;
      if (!FILTER_FUNCTIONS.includes(step?.function as (typeof FILTER_FUNCTIONS)[number])) {
        problems.push(at(["filter_list", i, "filter", j, "function"], `filter function \`${String(step?.function)}\` is not supported (supported: ${FILTER_FUNCTIONS.join(", ")})`));
      } else if (step.function === "regex") {
        if (typeof step.regex_pattern !== "string") problems.push(at(["filter_list", i, "filter", j], "a regex filter needs `regex_pattern`"));
        else checkPattern(step.regex_pattern, ["filter_list", i, "filter", j, "regex_pattern"], at, problems);
      } else if (step.function === "take_first_k") {
        if (!Number.isInteger(step.k) || (step.k as number) < 1) problems.push(at(["filter_list", i, "filter", j], "a take_first_k filter needs `k`, a positive integer"));
      } else if (step.function === "map") {
        const mapping = step.mapping_dict;
        if (typeof mapping !== "object" || mapping === null || Array.isArray(mapping)) problems.push(at(["filter_list", i, "filter", j], "a map filter needs `mapping_dict`, a mapping of responses to answers"));
      }
    });
    return { name: String(entry?.name ?? `filter ${i}`), steps: steps as FilterStep[] };
  });
}

/** A split's data: its file, format and JSON field. */
interface SplitData {
  /** The data file, or a hub dataset's first shard: where documents' lines are. */
  file: string;
  /** A hub dataset's further shards, whose documents follow the first file's. */
  shards?: string[];
  kind: DatasetKind;
  field?: string | typeof THE_ONE_LIST;
}

/**
 * Where a split's documents are: the config's `data` when it names them, else the task's
 * data_files, else (dataset_path naming a Hugging Face dataset) the hub cache of this machine.
 */
async function dataOf(source: TaskSource, spec: TaskSpec, split: string, at: At, problems: Problem[], override?: DataFiles): Promise<SplitData | undefined> {
  if (override !== undefined) {
    const file = typeof override === "string" ? (split === spec.testSplit ? override : undefined) : override[split];
    const kind = file && datasetKindOf(file);
    if (!file || !kind) {
      const key = split === spec.testSplit ? "test_split" : "fewshot_split";
      problems.push(at([key], file ? `the config's \`data\` file ${file} is not .json, .jsonl, .csv or .parquet` : `the task reads split \`${split}\`, and the config's \`data\` names no file for it: write \`data: {${spec.testSplit}: ..., ${split}: ...}\``, "task.data-file"));
      return undefined;
    }
    return { file, kind, field: spec.field ?? THE_ONE_LIST };
  }
  if (!DATASET_KINDS.includes(spec.kind)) return hubData(source, String(spec.kind), split, at, problems);
  const file = resolveDataFile(source, split, at, problems);
  return file ? { file, kind: spec.kind, ...(spec.field !== undefined ? { field: spec.field } : {}) } : undefined;
}

async function hubData(source: TaskSource, repo: string, split: string, at: At, problems: Problem[]): Promise<SplitData | undefined> {
  const name = typeof source.raw.dataset_name === "string" ? source.raw.dataset_name : undefined;
  try {
    const { files } = await hubSplitFiles(repo, name, split);
    return { file: files[0]!, ...(files.length > 1 ? { shards: files.slice(1) } : {}), kind: datasetKindOf(files[0]!)! };
  } catch (e) {
    if (!(e instanceof HubDataNotFound)) throw e;
    problems.push(at(["dataset_path"], `${e.message}; looked in ${e.looked}. Run lm-eval once with this task on this machine (it fills the cache), or name the data in the config (\`benchmarks[].data\`)`, "task.data-file"));
    return undefined;
  }
}

function resolveDataFile(source: TaskSource, split: string, at: At, problems: Problem[]): string | undefined {
  const files = (source.raw.dataset_kwargs as { data_files?: unknown } | undefined)?.data_files;
  const chosen = typeof files === "string" ? (split === "train" || split === "test" ? files : undefined) : typeof files === "object" && files !== null ? (files as Record<string, unknown>)[split] : undefined;
  if (typeof chosen !== "string") {
    problems.push(at(["dataset_kwargs", "data_files"], `\`dataset_kwargs.data_files\` must name a local file for split \`${split}\``, "task.data-file"));
    return undefined;
  }
  // lm-eval resolves data files against the working directory; the task's own folder is what
  // keeps a task portable, so relative paths are taken from the file that declares data_files.
  const declaredIn = source.origin.get("dataset_kwargs") ?? source.main;
  return path.resolve(path.dirname(declaredIn.file), chosen);
}

async function readDocuments({ file, shards = [], kind, field }: SplitData, at: At, problems: Problem[], files: TextFiles) {
  const docs: Doc[] = [];
  for (const each of [file, ...shards]) {
    if (!(await isFile(each))) {
      problems.push(at(["dataset_kwargs", "data_files"], `data file not found: ${each}`, "task.data-file"));
      return undefined;
    }
    try {
      const read = await loadDocuments(kind, each, field, files);
      if (shards.length === 0) return read;
      docs.push(...read.docs);
    } catch (e) {
      const line = e instanceof DocumentError ? e.line : 1;
      problems.push(notUtf8Problem(each, e, "the data file") ?? problemAt({ file: each, line, column: 1 }, "task.document", (e as Error).message));
      return undefined;
    }
  }
  return { docs };
}

/** Renders documents the way lm-eval's ConfigurableTask does, few-shot examples included. */
class Renderer {
  private readonly templates = new Map<string, TextTemplate>();
  private readonly rng = new PythonRandom(LM_EVAL_FEWSHOT_SEED);

  /** `helperValues`: what each `!function` helper gave for each document (lmeval/helpers.ts). */
  constructor(private readonly spec: TaskSpec, private readonly fewshotDocs: Doc[], private readonly helperValues: ReadonlyMap<DocumentHelperKey, WeakMap<Doc, unknown>>) {}

  item(doc: Doc, index: number): TaskItem {
    const prompt = this.prompt(doc);
    const context = plainContext(prompt, this.spec.targetDelimiter, this.spec.fewshotDelimiter);
    if (this.spec.outputType === "generate_until") {
      return { kind: "generate_until", index, context, prompt, target: this.targetText(doc) };
    }
    const choices = this.choices(doc);
    const target = this.targetIndex(doc, choices);
    return { kind: "multiple_choice", index, context, prompt, choices, continuations: choices.map((c) => this.spec.targetDelimiter + c), target };
  }

  /** The description, the few-shot examples with their answers, and doc_to_text(doc). */
  private prompt(doc: Doc): PromptParts {
    const description = this.spec.description ? String(this.apply("description", this.spec.description, doc).value) : "";
    return { description, fewshot: this.fewshotExamples(doc), text: this.text(doc) };
  }

  private fewshotExamples(doc: Doc): PromptParts["fewshot"] {
    const n = this.spec.numFewshot;
    if (n === 0) return [];
    // lm-eval draws one extra when the few-shot pool is the test split, then drops the document itself.
    const sameSplit = this.spec.fewshotSamples === undefined && this.spec.fewshotSplit === this.spec.testSplit;
    const draw = sameSplit ? n + 1 : n;
    const drawn = this.spec.fewshotSampler === "first_n" ? this.fewshotDocs.slice(0, draw) : this.rng.sample(this.fewshotDocs, draw);
    const selected = drawn.filter((d) => !sameDoc(d, doc)).slice(0, n);
    return selected.map((d) => ({ text: this.text(d), target: this.exampleTarget(d) }));
  }

  private text(doc: Doc): string {
    return String(this.apply("doc_to_text", this.spec.docToText, doc).value);
  }

  /** The answer shown after a few-shot example: the choice text for an index, the string otherwise. */
  private exampleTarget(doc: Doc): string {
    if (this.spec.outputType === "generate_until") return this.targetText(doc);
    const choices = this.choices(doc);
    return choices[this.targetIndex(doc, choices)]!;
  }

  private choices(doc: Doc): string[] {
    const template = this.spec.docToChoice;
    const value = this.apply("doc_to_choice", template, doc).value;
    const choices = Array.isArray(value) ? value.map(String) : typeof value === "object" && value !== null ? Object.values(value).map(String) : parseListLiteral(String(value));
    if (!choices && typeof template === "string" && !/{{|{%/.test(template)) {
      // Neither a field nor Jinja: the same for every document, so the key's fault, not the data's.
      throw new TemplateFault("doc_to_choice", `\`${template}\` is not a field of the documents (their fields: ${fieldNames(doc)}) nor a template that gives a list`, "template");
    }
    if (!choices || choices.length < 2) throw new Error(`doc_to_choice must give a list of at least 2 choices, got ${JSON.stringify(value)}`);
    return choices;
  }

  private targetText(doc: Doc): string {
    const { value } = this.apply("doc_to_target", this.spec.docToTarget, doc);
    return Array.isArray(value) ? String(value[0]) : String(value);
  }

  /**
   * As lm-eval: a number is an index; a rendered template made of digits is an index; any other
   * string (a field's raw value included) is the text of the correct choice.
   */
  private targetIndex(doc: Doc, choices: string[]): number {
    const { value, rendered } = this.apply("doc_to_target", this.spec.docToTarget, doc);
    const text = String(value).trim();
    const index = typeof value === "number" ? value : rendered && /^\d+$/.test(text) ? Number(text) : choices.indexOf(text);
    if (!Number.isInteger(index) || index < 0 || index >= choices.length) {
      throw new Error(`doc_to_target gives ${JSON.stringify(value)}, which is neither a choice nor an index below ${choices.length}`);
    }
    return index;
  }

  /** What the key's `!function` helper gave for `doc`. */
  private helperValue(key: TemplateKey, doc: Doc): unknown {
    const value = this.helperValues.get(key as DocumentHelperKey)?.get(doc);
    if (value === undefined || value === null) throw new TemplateFault(key, "its helper returned nothing (None)", "render");
    if (key === "doc_to_text" && typeof value === "number") {
      // lm-eval's "multiple input" tasks (winogrande): the choices are contexts, the target one continuation.
      throw new TemplateFault(key, "its helper returns a number, lm-eval's form in which each choice is a context and the target the one continuation; Benchmark Profiler scores one context per document and does not support that form yet", "template");
    }
    return value;
  }

  /** lm-eval's rule: a template that names a document field is that field, otherwise Jinja. */
  private apply(key: TemplateKey, template: unknown, doc: Doc): { value: unknown; rendered: boolean } {
    if (typeof template === "number" || Array.isArray(template)) return { value: template, rendered: false };
    if (isFunctionTag(template)) return { value: this.helperValue(key, doc), rendered: false };
    const text = String(template);
    if (Object.prototype.hasOwnProperty.call(doc, text)) return { value: doc[text], rendered: false };
    try {
      let compiled = this.templates.get(text);
      if (!compiled) this.templates.set(text, (compiled = lmEvalTemplate(text)));
      return { value: compiled.render(doc), rendered: true };
    } catch (e) {
      const origin = !(e instanceof TemplateError) ? "render" : e.kind === "undefined" ? "undefined" : "template";
      throw new TemplateFault(key, (e as Error).message, origin);
    }
  }
}

type TemplateKey = "description" | "doc_to_text" | "doc_to_choice" | "doc_to_target";

function isFunctionTag(value: unknown): value is Record<typeof FUNCTION_TAG, string> {
  return typeof value === "object" && value !== null && FUNCTION_TAG in value;
}

/** The `!function` helpers of a task's keys, each resolved against the YAML file that names it. */
function helperRequest(source: TaskSource): HelperRequest | undefined {
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

/**
 * A split's documents after the task's helpers: process_docs' documents (their data lines kept
 * only when it kept every document, in order), and each per-document helper's values recorded
 * in `values`. Undefined, with a problem at the helper's key, when Python or a helper fails.
 */
async function applyHelpers(
  request: HelperRequest, split: { docs: Doc[]; lines?: number[] }, dataFile: string,
  values: Map<DocumentHelperKey, WeakMap<Doc, unknown>>, at: At, problems: Problem[],
): Promise<{ docs: Doc[]; lines?: number[] } | undefined> {
  let answer: HelperAnswer;
  try {
    answer = await runHelpers(request, split.docs);
  } catch (e) {
    if (!(e instanceof HelperError)) throw e;
    const key = e.step === "python" || e.step === "import" ? (request.processDocs ? "process_docs" : Object.keys(request.perDocument)[0]!) : e.step;
    const ref = key === "process_docs" ? request.processDocs : request.perDocument[key as DocumentHelperKey];
    const name = ref ? ` (\`!function ${ref.module}.${ref.name}\`)` : "";
    const where = e.document === undefined ? "" : ` in document ${e.document}${split.lines?.[e.document] ? ` (${path.basename(dataFile)}:${split.lines[e.document]})` : ""}`;
    problems.push(at([key], `\`${key}\`${name}: ${e.message}${where}`, "task.python-function"));
    return undefined;
  }
  const docs = answer.docs as Doc[];
  for (const [key, list] of Object.entries(answer.values) as [DocumentHelperKey, unknown[]][]) {
    const byDoc = values.get(key) ?? new WeakMap<Doc, unknown>();
    docs.forEach((doc, i) => byDoc.set(doc, list[i]));
    values.set(key, byDoc);
  }
  const sameDocuments = docs.length === split.docs.length;
  return { docs, ...(sameDocuments && split.lines ? { lines: split.lines } : {}) };
}

/**
 * What stopped a render at a task key, by its origin. `template`: the template itself (syntax,
 * limits), whatever the document; `undefined`: it prints a name the document lacks
 * (StrictUndefined); `render`: the document's values made it fail (an operator or a method that
 * refuses them).
 */
class TemplateFault extends Error {
  constructor(readonly key: TemplateKey, message: string, readonly origin: "template" | "undefined" | "render") {
    super(message);
  }
}

function sameDoc(a: Doc, b: Doc): boolean {
  return a === b || docJson(a) === docJson(b);
}

/** Documents are never changed once read, and few-shot draws compare the same ones over and over. */
const docJsonCache = new WeakMap<Doc, string>();
function docJson(doc: Doc): string {
  let json = docJsonCache.get(doc);
  if (json === undefined) docJsonCache.set(doc, (json = JSON.stringify(doc)));
  return json;
}

/**
 * The context lm-eval builds without a chat template (ContextSampler.get_context, then the
 * document): description, then each example as text + target_delimiter + answer +
 * fewshot_delimiter (an example whose answer is empty is its text alone), then doc_to_text.
 */
export function plainContext(prompt: PromptParts, targetDelimiter: string, fewshotDelimiter: string): string {
  return prompt.description + fewshotText(prompt.fewshot, targetDelimiter, fewshotDelimiter) + prompt.text;
}

/** The few-shot examples as one block of text, as lm-eval's get_context writes them. */
export function fewshotText(examples: PromptParts["fewshot"], targetDelimiter: string, fewshotDelimiter: string): string {
  return examples.map((e) => (e.target === "" ? e.text : e.text + targetDelimiter + e.target + fewshotDelimiter)).join("");
}
