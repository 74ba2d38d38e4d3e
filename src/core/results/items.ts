// From the runner's result lines to benchmark items: each multiple-choice document's choice
// scores (put back together when truncation sent it as parts), each generation decoded, cut,
// filtered and matched (analysis/generation.ts), with the answers of Python filters and the
// task's own scores (taskScores.ts) where the task has them.
import { promises as fs } from "node:fs";
import { scoreItem, type ChoiceScore, type ScoredItem } from "../analysis/accuracy";
import { cutAtStop, scoreGeneration, type BenchmarkItem } from "../analysis/generation";
import type { ResolvedBenchmark } from "../config/load";
import type { Doc } from "../lmeval/documents";
import type { Task, TaskItem } from "../lmeval/task";
import { applyFiltersToAll, hasPythonStep } from "../lmeval/exactMatch";
import type { ItemRef } from "../plan/job";
import { itemId } from "../plan/job";

/** A generation item's result line: the generated token ids and whether a stop sequence ended it. */
export interface RunnerGeneration {
  generated: number[];
  stopped: boolean;
}

/** Per item id, the choices' scores (a multiple-choice item) or the generation (a generate_until item). */
export type RunnerScores = Map<string, ChoiceScore[] | RunnerGeneration>;

/** Decodes generated token ids to text (ModelTokenizer.decode). */
export type Decoder = (ids: readonly number[]) => string;

/**
 * `decode` remembering what it decoded, by the generation's token list: a run reads each source
 * once, and its Python filters, its task's scorer and its items then get the same text from one
 * decoding of each generation (readRunnerScores' lists are read once and never changed).
 */
export function decodingOnce(decode: Decoder): Decoder {
  const texts = new WeakMap<readonly number[], string>();
  return (ids) => {
    let text = texts.get(ids);
    if (text === undefined) {
      text = decode(ids);
      texts.set(ids, text);
    }
    return text;
  };
}

export async function readRunnerScores(file: string): Promise<RunnerScores> {
  const scores: RunnerScores = new Map();
  let text: string;
  try {
    text = await fs.readFile(file, "utf8");
  } catch {
    throw new Error(`the runner's scores are missing: ${file}`);
  }
  for (const [i, line] of text.split("\n").entries()) {
    if (line.trim() === "") continue;
    let row: { id?: unknown; choices?: unknown; generated?: unknown; stopped?: unknown };
    try {
      row = JSON.parse(line) as typeof row;
    } catch {
      throw new Error(`${file}:${i + 1}: not a JSON line`);
    }
    if (typeof row.id === "string" && Array.isArray(row.choices)) scores.set(row.id, row.choices as ChoiceScore[]);
    else if (
      typeof row.id === "string" &&
      Array.isArray(row.generated) &&
      row.generated.every((t) => Number.isInteger(t)) &&
      typeof row.stopped === "boolean"
    ) {
      scores.set(row.id, { generated: row.generated as number[], stopped: row.stopped });
    } else throw new Error(`${file}:${i + 1}: expected {"id", "choices": [...]} or {"id", "generated": [...], "stopped"}`);
  }
  return scores;
}

/** A document's own score; `chance` is its score when every choice is equally likely (multiple choice, baseline only). */
export interface TaskScore {
  score: number;
  chance?: number;
}

/** Per source (scores.jsonl, baseline.jsonl, a variant's file) and item id, the task's own score. */
export type TaskScores = ReadonlyMap<string, ReadonlyMap<string, TaskScore>>;

/** What a source's items carry beyond the runner's results: Python filters' answers and tasks' own scores, by item id. */
export interface ItemExtras {
  filtered?: ReadonlyMap<string, string[]>;
  taskScores?: ReadonlyMap<string, TaskScore>;
}

/** Source `source`'s extras out of a run's Python filter answers and task scores. */
export function extrasOf(source: string, filtered?: FilteredAnswers, taskScores?: TaskScores): ItemExtras {
  const answers = filtered?.get(source);
  const own = taskScores?.get(source);
  return { ...(answers ? { filtered: answers } : {}), ...(own ? { taskScores: own } : {}) };
}

/**
 * The benchmark items of a job with the runner's results, in job order (the order of `refs`).
 * Generated items need the model's tokenizer to decode their tokens; without `decode`, every item
 * must be multiple choice.
 */
export function scoredItems(
  refs: readonly ItemRef[],
  benchmarks: readonly ResolvedBenchmark[],
  scores: RunnerScores,
  source: string,
): ScoredItem[];
export function scoredItems(
  refs: readonly ItemRef[],
  benchmarks: readonly ResolvedBenchmark[],
  scores: RunnerScores,
  source: string,
  decode: Decoder,
  extras?: ItemExtras,
): BenchmarkItem[];
export function scoredItems(
  refs: readonly ItemRef[],
  benchmarks: readonly ResolvedBenchmark[],
  scores: RunnerScores,
  source: string,
  decode?: Decoder,
  extras: ItemExtras = {},
): BenchmarkItem[] {
  const byId = new Map(benchmarks.flatMap((b) => b.task.items.map((i) => [itemId(b.name, i.index), { item: i, task: b.task }] as const)));
  return refs.map((ref): BenchmarkItem => {
    const found = byId.get(ref.id);
    if (!found) throw new Error(`${ref.id} is not an item of the job's benchmarks`);
    const own = extras.taskScores?.get(ref.id);
    const scored = scoredItem(ref, found.item, found.task, scores, source, decode, extras.filtered?.get(ref.id));
    return own ? { ...scored, ...own } : scored;
  });
}

function scoredItem(
  ref: ItemRef,
  item: TaskItem,
  task: Task,
  scores: RunnerScores,
  source: string,
  decode: Decoder | undefined,
  answers: string[] | undefined,
): BenchmarkItem {
  const result = ref.parts ? joinedParts(ref.parts, scores) : scores.get(ref.id);
  if (item.kind === "generate_until") {
    if (!decode) throw new Error(`${ref.id} is a generate_until item: decoding its tokens needs the model's tokenizer`);
    if (result === undefined || Array.isArray(result)) throw new Error(`${source}: the generation of ${ref.id} is missing`);
    const doc = task.documents?.[ref.index];
    const rules = { until: task.generation?.until ?? [], filters: task.filters, exactMatch: task.exactMatch, ...(doc ? { doc } : {}) };
    return scoreGeneration(ref.benchmark, ref.index, item.target, result.generated, result.stopped, decode, rules, answers);
  }
  if (!Array.isArray(result) || result.length !== item.choices.length)
    throw new Error(`${source}: the scores of ${ref.id} are missing or incomplete`);
  return scoreItem(ref.benchmark, ref.index, item.target, item.choices, result);
}

/** Per source (scores.jsonl, baseline.jsonl, a variant's file) and item id, each filter pipeline's answer. */
export type FilteredAnswers = ReadonlyMap<string, ReadonlyMap<string, string[]>>;

/**
 * The answers of the benchmarks whose filters run a Python class (lm-eval's Filter API), which
 * sees every document's response at once: each pipeline applied to all of a benchmark's
 * responses from all `sources` together. Undefined when no benchmark has one.
 */
export async function pythonFilteredAnswers(
  refs: readonly ItemRef[],
  benchmarks: readonly ResolvedBenchmark[],
  sources: ReadonlyMap<string, RunnerScores>,
  decode: Decoder,
): Promise<FilteredAnswers | undefined> {
  const withPython = benchmarks.filter((b) => b.task.filters.some(hasPythonStep));
  if (withPython.length === 0) return undefined;
  const out = new Map<string, Map<string, string[]>>();
  for (const { name, task } of withPython) {
    const entries: { source: string; id: string; response: string; doc: Doc }[] = [];
    for (const [source, scores] of sources) {
      for (const ref of refs) {
        const result = ref.benchmark === name ? scores.get(ref.id) : undefined;
        if (result === undefined || Array.isArray(result)) continue;
        entries.push({
          source,
          id: ref.id,
          response: cutAtStop(decode(result.generated), task.generation?.until ?? []),
          doc: task.documents?.[ref.index] ?? {},
        });
      }
    }
    const responses = entries.map((e) => [e.response]);
    const docs = entries.map((e) => e.doc);
    const perPipeline = await Promise.all(task.filters.map((pipeline) => applyFiltersToAll(pipeline, responses, docs)));
    entries.forEach((e, i) => {
      const bySource = out.get(e.source) ?? new Map<string, string[]>();
      bySource.set(
        e.id,
        perPipeline.map((answers) => answers[i]!),
      );
      out.set(e.source, bySource);
    });
  }
  return out;
}

/**
 * The choices' scores of a document sent as several job items (plan/job.ts, truncation), in
 * choice order; undefined when a part is missing or does not have its choices.
 */
function joinedParts(parts: NonNullable<ItemRef["parts"]>, scores: RunnerScores): ChoiceScore[] | undefined {
  const total = parts.reduce((n, p) => n + p.choices.length, 0);
  const joined = new Array<ChoiceScore | undefined>(total).fill(undefined);
  for (const part of parts) {
    const result = scores.get(part.id);
    if (!Array.isArray(result) || result.length !== part.choices.length) return undefined;
    part.choices.forEach((c, j) => {
      joined[c] = result[j];
    });
  }
  return joined.every((score) => score !== undefined) ? (joined as ChoiceScore[]) : undefined;
}
