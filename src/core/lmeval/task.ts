// lm-eval task files as benchmarks: a task's spec (spec.ts), its documents (data.ts), the
// `!function` helpers run on them (helpers.ts), and every document rendered to the text it scores
// (render.ts). What a task cannot be is a problem at the key and line that says so.
import * as path from "node:path";
import { errorsOf, fileProblem, problemAt, type Problem } from "../base/problems";
import { diskFiles, type TextFiles } from "../base/fsutil";
import { formatFieldPath, scopedSource, type FieldPath, type YamlSource } from "../base/yamlSource";
import { dataOf, readDocuments } from "./data";
import { documentId, type Doc } from "./documents";
import { applyFilters, readsDocuments, type ExactMatchOptions, type FilterPipeline } from "./exactMatch";
import {
  HelperError,
  runFilterHelper,
  runHelpers,
  runScorer,
  type DocumentHelperKey,
  type HelperAnswer,
  type HelperRequest,
  type PythonScorer,
} from "./helpers";
import { Renderer, TemplateFault } from "./render";
import {
  checkKeys,
  helperEntriesOf,
  helperRequest,
  isFunctionTag,
  readSpec,
  readTaskSource,
  taskSourceOf,
  type At,
  type TaskSource,
} from "./spec";
import { helperFilesToConsent, helperRefusal, recordConsent, type HelperFile, type HelperRefusal } from "./taskPython";
import type { OutputType, TaskItem, TaskOptions } from "./taskItems";

export type { DataFiles, GenerationItem, MultipleChoiceItem, OutputType, PromptParts, TaskItem, TaskOptions } from "./taskItems";

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
  /** The documents by index, for what reads them (Python's filters and scorer, multi_choice_regex); only when the task has one. */
  documents?: Doc[];
  /** The task's own per-document score (process_results, a `!function` metric), run in Python after the runner. */
  scorer?: PythonScorer;
  /** The scorer runs the code the model generates (`unsafe_code: true`): a run needs the user's confirmation. */
  unsafeCode?: true;
  exactMatch: ExactMatchOptions;
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
export async function loadInlineTask(
  definition: unknown,
  source: YamlSource,
  at: FieldPath,
  options: TaskOptions = {},
  files: TextFiles = diskFiles,
): Promise<TaskLoad> {
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
  /** Each document's id (documentId), by index; undefined for a document without one. */
  ids: (string | undefined)[];
  /** The task's process_docs (Python) decides its documents: `lines` are the data file's, not theirs, and left empty. */
  processDocs?: true;
}

/** The places of a task file's documents: what marking documents in their data file needs, and no more. */
export async function loadTaskPlaces(
  file: string,
  options: TaskOptions = {},
  files: TextFiles = diskFiles,
): Promise<{ places?: TaskPlaces; problems: Problem[] }> {
  const problems: Problem[] = [];
  const source = await readTaskSource(path.resolve(file), problems, new Set(), files);
  // Places run no Python (not even process_docs), so a task whose Python may not run still has them.
  const read = source && (await testDocuments(source, problems, { ...options, helpers: "run" }, files));
  if (!read) return { problems };
  const count = Math.min(options.limit ?? read.test.docs.length, read.test.docs.length);
  if (helperRequest(source)?.processDocs)
    return { places: { name: read.spec.name, dataFile: read.dataFile, lines: [], ids: [], processDocs: true }, problems };
  const places = {
    name: read.spec.name,
    dataFile: read.dataFile,
    lines: (read.test.lines ?? []).slice(0, count),
    ids: read.test.docs.slice(0, count).map(documentId),
  };
  return { places, problems };
}

/**
 * Why the task's Python may not run under the options' policy (undefined when it may, or it has
 * none), and the files a run of it executes, by content: the helpers and the task folder's
 * modules they import.
 */
async function pythonConsent(source: TaskSource, options: TaskOptions): Promise<{ refusal?: HelperRefusal; files: HelperFile[] }> {
  const entries = helperEntriesOf(source);
  if (entries.length === 0) return { files: [] };
  const files = await helperFilesToConsent(entries);
  const refusal = helperRefusal(options.helpers, files);
  return refusal ? { refusal, files } : { files };
}

/** The task's spec and its test split's documents, with the problems met on the way. */
async function testDocuments(source: TaskSource, problems: Problem[], options: TaskOptions, files: TextFiles) {
  const at: At = (keyPath, message, code = "task.invalid-value", on = "value") =>
    (source.origin.get(String(keyPath[0])) ?? source.main).at(keyPath, code, message, { on });
  const python = await pythonConsent(source, options);
  checkKeys(source, at, problems, python.refusal);
  const spec = readSpec(source.raw, at, problems, options, (key) => (source.origin.get(key) ?? source.main).file);
  if (errorsOf(problems).length > 0 || !spec) return undefined;
  const data = await dataOf(source, spec, spec.testSplit, at, problems, options.data);
  if (!data) return undefined;
  const test = await readDocuments(data, at, problems, files);
  return test ? { spec, at, dataFile: data.file, test, python: python.files } : undefined;
}

async function buildTask(source: TaskSource, file: string, problems: Problem[], options: TaskOptions, files: TextFiles): Promise<TaskLoad> {
  const read = await testDocuments(source, problems, options, files);
  if (!read) return { problems };
  const { spec, at, dataFile } = read;
  // allowed under the policy (else the check refused it): these bytes, and no others, may run
  recordConsent(read.python);
  const helpers = helperRequest(source);
  const helperValues = new Map<DocumentHelperKey, WeakMap<Doc, unknown>>();
  const withHelpers = (split: { docs: Doc[]; lines?: number[] }, file: string) =>
    helpers ? applyHelpers(helpers, split, file, helperValues, at, problems) : split;
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
      problems.push(
        at(["num_fewshot"], `num_fewshot is ${spec.numFewshot} but only ${fewshotDocs.length} few-shot documents exist`, "task.fewshot"),
      );
      return { problems };
    }
  }

  const render = new Renderer(spec, fewshotDocs, helperValues);
  const items: TaskItem[] = [];
  const docs = test.docs.slice(0, options.limit ?? test.docs.length);
  for (const [index, doc] of docs.entries()) {
    try {
      const line = test.lines?.[index];
      const id = documentId(doc);
      items.push({ ...render.item(doc, index), ...(line !== undefined ? { line } : {}), ...(id !== undefined ? { id } : {}) });
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
  if (spec.filters.some(readsDocuments)) await tryFiltersOnDocument(spec.filters, docs[0]!, at, problems);
  if (spec.scorer) await tryScorer(spec.scorer, docs[0]!, items[0], scorerKey(source), at, problems);
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
    ...(spec.filters.some(readsDocuments) || spec.scorer ? { documents: docs } : {}),
    ...(spec.scorer ? { scorer: spec.scorer } : {}),
    ...(spec.unsafeCode ? { unsafeCode: true } : {}),
  };
  return { task, problems };
}

/**
 * The filters that read documents, applied to an empty response of the first one: a module that
 * is missing, a class that does not exist, arguments it does not take, an import its apply
 * needs, or a document without the `choices` multi_choice_regex reads, is an error at the
 * filter's line before any run.
 */
async function tryFiltersOnDocument(pipelines: readonly FilterPipeline[], doc: Doc, at: At, problems: Problem[]): Promise<void> {
  for (const [i, pipeline] of pipelines.entries()) {
    for (const [j, step] of pipeline.steps.entries()) {
      if (step.function === "multi_choice_regex") {
        try {
          applyFilters({ name: pipeline.name, steps: [step] }, [""], doc);
        } catch (e) {
          problems.push(
            at(
              ["filter_list", i, "filter", j, "function"],
              `filter \`multi_choice_regex\` of pipeline \`${pipeline.name}\`: ${(e as Error).message} (document 0)`,
            ),
          );
        }
      }
      if (step.function !== "python") continue;
      try {
        await runFilterHelper(step.helper, [[""]], [doc]);
      } catch (e) {
        if (!(e instanceof HelperError)) throw e;
        const { module, name } = step.helper.ref;
        const key = step.helper.call === "function" ? "filter_fn" : "function";
        problems.push(
          at(
            ["filter_list", i, "filter", j, key],
            `filter \`!function ${module}.${name}\` of pipeline \`${pipeline.name}\`: ${e.message}`,
            "task.python-function",
          ),
        );
      }
    }
  }
}

/** Where a task's scorer is named: process_results, or its `!function` metric in metric_list. */
function scorerKey(source: TaskSource): FieldPath {
  if (source.raw.process_results !== undefined) return ["process_results"];
  const metrics = Array.isArray(source.raw.metric_list) ? (source.raw.metric_list as { metric?: unknown }[]) : [];
  return [
    "metric_list",
    Math.max(
      0,
      metrics.findIndex((m) => isFunctionTag(m?.metric)),
    ),
    "metric",
  ];
}

/**
 * The scorer's module imported, and process_results tried on the first document with every
 * choice equally likely, so that a missing module or package, or a dict without the metric, is an
 * error at the key before any run. A metric is only imported: calling it may run code.
 */
async function tryScorer(
  scorer: PythonScorer,
  doc: Doc,
  item: TaskItem | undefined,
  key: FieldPath,
  at: At,
  problems: Problem[],
): Promise<void> {
  const results = item?.kind === "multiple_choice" ? item.choices.map(() => [0, false]) : [""];
  try {
    await runScorer(scorer, scorer.kind === "process_results" ? [{ doc, results }] : []);
  } catch (e) {
    if (!(e instanceof HelperError)) throw e;
    problems.push(at(key, `\`!function ${scorer.ref.module}.${scorer.ref.name}\`: ${e.message}`, "task.python-function"));
  }
}

/**
 * A split's documents after the task's helpers: process_docs' documents (their data lines kept
 * only when it kept every document, in order), and each per-document helper's values recorded
 * in `values`. Undefined, with a problem at the helper's key, when Python or a helper fails.
 */
async function applyHelpers(
  request: HelperRequest,
  split: { docs: Doc[]; lines?: number[] },
  dataFile: string,
  values: Map<DocumentHelperKey, WeakMap<Doc, unknown>>,
  at: At,
  problems: Problem[],
): Promise<{ docs: Doc[]; lines?: number[] } | undefined> {
  let answer: HelperAnswer;
  try {
    answer = await runHelpers(request, split.docs);
  } catch (e) {
    if (!(e instanceof HelperError)) throw e;
    const key =
      e.step === "python" || e.step === "import" ? (request.processDocs ? "process_docs" : Object.keys(request.perDocument)[0]!) : e.step;
    const ref = key === "process_docs" ? request.processDocs : request.perDocument[key as DocumentHelperKey];
    const name = ref ? ` (\`!function ${ref.module}.${ref.name}\`)` : "";
    const where =
      e.document === undefined
        ? ""
        : ` in document ${e.document}${split.lines?.[e.document] ? ` (${path.basename(dataFile)}:${split.lines[e.document]})` : ""}`;
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
