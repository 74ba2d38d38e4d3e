// Benchmarks are lm-eval task YAML files whose data is local. This reads the subset of the
// format the profiler supports and refuses, by key, what it does not.
import { Template } from "@huggingface/jinja";
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { fileDiagnostic, type Diagnostic } from "../diagnostics";
import { isFile } from "../fsutil";
import { parseListLiteral } from "../prompts/literal";
import { parseYamlSource, type YamlSource } from "../yamlSource";
import { readJsonl } from "./jsonl";

/** One document of a benchmark, rendered to what scoring needs. */
export interface TaskItem {
  /** Index of the document in the test split. */
  index: number;
  context: string;
  /** Continuations as scored: target_delimiter + choice text. */
  continuations: string[];
  choices: string[];
  target: number;
}

export interface Task {
  name: string;
  file: string;
  outputType: "multiple_choice";
  dataFile: string;
  items: TaskItem[];
}

const SUPPORTED_KEYS = new Set([
  "task", "tag", "dataset_path", "dataset_name", "dataset_kwargs", "test_split", "output_type",
  "doc_to_text", "doc_to_choice", "doc_to_target", "target_delimiter", "metric_list", "metadata", "description",
]);

interface RawTask {
  task?: unknown;
  dataset_path?: unknown;
  dataset_kwargs?: { data_files?: unknown };
  test_split?: unknown;
  output_type?: unknown;
  doc_to_text?: unknown;
  doc_to_choice?: unknown;
  doc_to_target?: unknown;
  target_delimiter?: unknown;
}

export async function loadTask(file: string, limit?: number): Promise<{ task?: Task; diagnostics: Diagnostic[] }> {
  let text: string;
  try {
    text = await fs.readFile(file, "utf8");
  } catch {
    return { diagnostics: [fileDiagnostic(file, "cannot read the task file")] };
  }
  const source = parseYamlSource(text, file);
  if (source.value === undefined) return { diagnostics: source.diagnostics };
  const diagnostics = [...source.diagnostics, ...unsupportedKeyDiagnostics(source)];
  const raw = (source.value ?? {}) as RawTask;

  const required = (key: keyof RawTask) => {
    if (typeof raw[key] !== "string" || raw[key] === "") diagnostics.push(source.at([key], "error", `the task needs \`${key}\` (a string)`));
  };
  required("task");
  required("doc_to_text");
  required("doc_to_target");
  if (raw.doc_to_choice === undefined) diagnostics.push(source.at(["doc_to_choice"], "error", "a multiple_choice task needs `doc_to_choice`"));
  if (raw.output_type !== "multiple_choice") {
    diagnostics.push(source.at(["output_type"], "error", `output_type \`${String(raw.output_type)}\` is not supported yet; use multiple_choice`));
  }
  if (raw.dataset_path !== "json") {
    diagnostics.push(source.at(["dataset_path"], "error", "only `dataset_path: json` with local `dataset_kwargs.data_files` is supported"));
  }
  const split = typeof raw.test_split === "string" ? raw.test_split : "test";
  const dataFile = dataFileOf(raw, split, file, source, diagnostics);
  if (diagnostics.some((d) => d.severity === "error") || !dataFile) return { diagnostics };
  if (!(await isFile(dataFile))) {
    return { diagnostics: [...diagnostics, source.at(["dataset_kwargs", "data_files"], "error", `data file not found: ${dataFile}`)] };
  }

  const { records, diagnostics: dataProblems } = await readJsonl(dataFile);
  diagnostics.push(...dataProblems);
  const items: TaskItem[] = [];
  const delimiter = typeof raw.target_delimiter === "string" ? raw.target_delimiter : " ";
  for (const [index, record] of records.slice(0, limit ?? records.length).entries()) {
    try {
      items.push(renderItem(raw, record.value as Record<string, unknown>, index, delimiter));
    } catch (e) {
      diagnostics.push({ file: dataFile, line: record.line, column: 1, severity: "error", message: (e as Error).message });
    }
  }
  if (items.length === 0 && !diagnostics.some((d) => d.severity === "error")) {
    diagnostics.push(fileDiagnostic(dataFile, `split \`${split}\` has no documents`));
  }
  return { task: { name: raw.task as string, file, outputType: "multiple_choice", dataFile, items }, diagnostics };
}

function unsupportedKeyDiagnostics(source: YamlSource): Diagnostic[] {
  const value = source.value;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return [source.at([], "error", "a task file must be a YAML mapping")];
  }
  return Object.keys(value)
    .filter((k) => !SUPPORTED_KEYS.has(k))
    .map((k) => source.at([k], "error", `task key \`${k}\` is not supported by Benchmark Profiler`, "key"));
}

function dataFileOf(raw: RawTask, split: string, taskFile: string, source: YamlSource, diagnostics: Diagnostic[]): string | undefined {
  const files = raw.dataset_kwargs?.data_files;
  const chosen = typeof files === "string" ? files : typeof files === "object" && files !== null ? (files as Record<string, unknown>)[split] : undefined;
  if (typeof chosen !== "string") {
    diagnostics.push(source.at(["dataset_kwargs", "data_files"], "error", `\`dataset_kwargs.data_files\` must name a local file for split \`${split}\``));
    return undefined;
  }
  // lm-eval resolves data files against the working directory; against the task file is what
  // keeps a task folder portable, so relative paths are taken from there.
  return path.resolve(path.dirname(taskFile), chosen);
}

/** lm-eval's rule: a template that names a document field is that field, otherwise Jinja. */
function applyTemplate(template: unknown, doc: Record<string, unknown>): { value: unknown; rendered: boolean } {
  if (typeof template === "number" || Array.isArray(template)) return { value: template, rendered: false };
  const text = String(template);
  if (Object.prototype.hasOwnProperty.call(doc, text)) return { value: doc[text], rendered: false };
  return { value: new Template(text).render(doc), rendered: true };
}

function renderItem(raw: RawTask, doc: Record<string, unknown>, index: number, delimiter: string): TaskItem {
  const context = String(applyTemplate(raw.doc_to_text, doc).value);
  const choiceValue = applyTemplate(raw.doc_to_choice, doc).value;
  const choices = Array.isArray(choiceValue) ? choiceValue.map(String) : parseListLiteral(String(choiceValue));
  if (!choices || choices.length < 2) throw new Error(`doc_to_choice must give a list of at least 2 choices, got ${JSON.stringify(choiceValue)}`);
  const target = targetIndex(applyTemplate(raw.doc_to_target, doc), choices);
  return { index, context, continuations: choices.map((c) => delimiter + c), choices, target };
}

/**
 * As lm-eval: a number is an index; a rendered template made of digits is an index; any other
 * string (a field's raw value included) is the text of the correct choice.
 */
function targetIndex(target: { value: unknown; rendered: boolean }, choices: string[]): number {
  const { value, rendered } = target;
  const text = String(value).trim();
  const index = typeof value === "number" ? value : rendered && /^\d+$/.test(text) ? Number(text) : choices.indexOf(text);
  if (!Number.isInteger(index) || index < 0 || index >= choices.length) {
    throw new Error(`doc_to_target gives ${JSON.stringify(value)}, which is neither a choice nor an index below ${choices.length}`);
  }
  return index;
}
