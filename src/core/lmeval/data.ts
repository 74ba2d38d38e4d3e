// Where a split's documents are: the config's `data`, the task's data_files, or the Hugging Face caches,
// and the documents read from there (a hub dataset's shards in order).
import * as path from "node:path";
import { notUtf8Problem, problemAt, type Problem } from "../base/problems";
import { isFile, type TextFiles } from "../base/fsutil";
import { DATASET_KINDS, datasetKindOf, DocumentError, loadDocuments, THE_ONE_LIST, type DatasetKind, type Doc } from "./documents";
import { cachedSplitFiles, HubDataNotFound, HubNameError } from "./hubCache";
import type { At, TaskSource, TaskSpec } from "./spec";
import type { DataFiles } from "./taskItems";

/** A split's data: its file, format and JSON field. */
export interface SplitData {
  /** The data file, or a hub dataset's first shard: where documents' lines are. */
  file: string;
  /** A hub dataset's further shards, whose documents follow the first file's. */
  shards?: string[];
  kind: DatasetKind;
  field?: string | typeof THE_ONE_LIST;
}

/**
 * Where a split's documents are: the config's `data` when it names them, else the task's
 * data_files, else (dataset_path naming a Hugging Face dataset) the Hugging Face caches of this machine.
 */
export async function dataOf(
  source: TaskSource,
  spec: TaskSpec,
  split: string,
  at: At,
  problems: Problem[],
  override?: DataFiles,
): Promise<SplitData | undefined> {
  if (override !== undefined) {
    const file = typeof override === "string" ? (split === spec.testSplit ? override : undefined) : override[split];
    const kind = file && datasetKindOf(file);
    if (!file || !kind) {
      const key = split === spec.testSplit ? "test_split" : "fewshot_split";
      problems.push(
        at(
          [key],
          file
            ? `the config's \`data\` file ${file} is not .json, .jsonl, .csv, .parquet or .arrow`
            : `the task reads split \`${split}\`, and the config's \`data\` names no file for it: write \`data: {${spec.testSplit}: ..., ${split}: ...}\``,
          "task.data-file",
        ),
      );
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
    const { files } = await cachedSplitFiles(repo, name, split);
    return { file: files[0]!, ...(files.length > 1 ? { shards: files.slice(1) } : {}), kind: datasetKindOf(files[0]!)! };
  } catch (e) {
    if (e instanceof HubNameError) {
      const local = "a local file is `dataset_path: json` (or csv, parquet) with `dataset_kwargs.data_files`";
      problems.push(at([e.key], `${e.message}; the Hugging Face caches are read by such names only (${local})`, "task.dataset-name"));
      return undefined;
    }
    if (!(e instanceof HubDataNotFound)) throw e;
    problems.push(
      at(
        ["dataset_path"],
        `${e.message}; looked in ${e.looked}. Run lm-eval once with this task on this machine (it fills the cache), or name the data in the config (\`benchmarks[].data\`)`,
        "task.data-file",
      ),
    );
    return undefined;
  }
}

function resolveDataFile(source: TaskSource, split: string, at: At, problems: Problem[]): string | undefined {
  const files = (source.raw.dataset_kwargs as { data_files?: unknown } | undefined)?.data_files;
  const chosen =
    typeof files === "string"
      ? split === "train" || split === "test"
        ? files
        : undefined
      : typeof files === "object" && files !== null
        ? (files as Record<string, unknown>)[split]
        : undefined;
  if (typeof chosen !== "string") {
    problems.push(
      at(["dataset_kwargs", "data_files"], `\`dataset_kwargs.data_files\` must name a local file for split \`${split}\``, "task.data-file"),
    );
    return undefined;
  }
  // lm-eval resolves data files against the working directory; the task's own folder is what
  // keeps a task portable, so relative paths are taken from the file that declares data_files.
  const declaredIn = source.origin.get("dataset_kwargs") ?? source.main;
  return path.resolve(path.dirname(declaredIn.file), chosen);
}

export async function readDocuments({ file, shards = [], kind, field }: SplitData, at: At, problems: Problem[], files: TextFiles) {
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
      const { line, column, code } = e instanceof DocumentError ? e : { line: 1, column: 1, code: "task.document" as const };
      problems.push(notUtf8Problem(each, e, "the data file") ?? problemAt({ file: each, line, column }, code, (e as Error).message));
      return undefined;
    }
  }
  return { docs };
}
