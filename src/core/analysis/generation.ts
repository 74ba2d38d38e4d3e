// generate_until scoring the way lm-eval does it, from the runner's generated token ids to a
// per-item correctness: decode the tokens with the model's tokenizer (special tokens skipped),
// cut the text at the first occurrence of any `until` string, run every filter pipeline of the
// task on that response, and compare each answer with the target by exact_match (the task's
// ignore_case, ignore_punctuation, ignore_numbers, regexes_to_ignore).
//
// lm-eval reports one exact_match per filter pipeline (`exact_match,strict-match`, ...). Here the
// first pipeline of the task file is the benchmark's metric: its correctness is what accuracy,
// AIS, the bootstrap and flips use. Every pipeline's answer is kept per item, and its mean per
// benchmark, so the others can still be read (results.json: `exact_match_by_filter`).
import type { ScoredItem } from "./accuracy";
import type { Doc } from "../lmeval/documents";
import { applyFilters, exactMatch, type ExactMatchOptions, type FilterPipeline } from "../lmeval/exactMatch";

/** What a task says about scoring its generations (Task.generation, Task.filters, Task.exactMatch). */
export interface GenerationRules {
  until: readonly string[];
  /** At least one; the first is the benchmark's metric. */
  filters: readonly FilterPipeline[];
  exactMatch: ExactMatchOptions;
  /** The document, for the filters that read it (multi_choice_regex reads its `choices`). */
  doc?: Doc;
}

export interface FilterOutcome {
  /** The pipeline's name in the task file (`none` when the task has no filter_list). */
  name: string;
  /** What the pipeline extracted from the response (a regex filter's fallback, `[invalid]`, when nothing matched). */
  answer: string;
  /** exact_match of `answer` and the target under the task's rules. */
  correct: boolean;
}

/** One generated document: a line of items.jsonl for a generate_until benchmark. */
export interface GeneratedItem {
  kind: "generate_until";
  benchmark: string;
  /** Document index in the test split. */
  index: number;
  /** The reference answer (doc_to_target), before exact_match's normalisation. */
  target: string;
  /** The first filter's answer and its correctness: the benchmark's exact_match. */
  answer: string;
  correct: boolean;
  /** The generation cut at the first `until` string: what the filters read (lm-eval's response). */
  response: string;
  /** The generated tokens decoded, before the cut. */
  generation: string;
  /** The runner's token ids (a matched stop sequence included). */
  tokens: number[];
  /** A stop sequence ended the generation (else it reached max_gen_toks). */
  stopped: boolean;
  /** Every filter pipeline of the task, in file order; the first is `answer` / `correct`. */
  filters: FilterOutcome[];
  /**
   * The task's own score of the document (its Python metric or process_results on the first
   * filter's answer), in [0, 1]: it stands in for `correct`. Absent for tasks scored by exact_match.
   */
  score?: number;
}

/** A per-item record of any benchmark: a scored multiple-choice item or a generated one. */
export type BenchmarkItem = ScoredItem | GeneratedItem;

export function isGenerated(item: BenchmarkItem): item is GeneratedItem {
  return item.kind === "generate_until";
}

/**
 * The text before the first occurrence of any `until` string (empty strings are no stop), as
 * lm-eval's `s.split(term)[0]` for each term in turn leaves it.
 */
export function cutAtStop(text: string, until: readonly string[]): string {
  let end = text.length;
  for (const stop of until) {
    if (stop === "") continue;
    const at = text.indexOf(stop);
    if (at >= 0 && at < end) end = at;
  }
  return text.slice(0, end);
}

/**
 * The filters and exact_match on one response. `answers`: each pipeline's answer when it was
 * computed for every document at once (a pipeline with a Python filter class).
 */
export function judgeResponse(
  response: string,
  target: string,
  rules: Pick<GenerationRules, "filters" | "exactMatch" | "doc">,
  answers?: readonly string[],
): FilterOutcome[] {
  if (rules.filters.length === 0) throw new Error("a generate_until benchmark needs at least one filter pipeline");
  return rules.filters.map((pipeline, p) => {
    const answer = answers?.[p] ?? applyFilters(pipeline, [response], rules.doc);
    return { name: pipeline.name, answer, correct: exactMatch(answer, target, rules.exactMatch) };
  });
}

/** A generation of the runner, decoded, cut, filtered and matched. */
export function scoreGeneration(
  benchmark: string,
  index: number,
  target: string,
  tokens: readonly number[],
  stopped: boolean,
  decode: (ids: readonly number[]) => string,
  rules: GenerationRules,
  answers?: readonly string[],
): GeneratedItem {
  const generation = decode(tokens);
  const response = cutAtStop(generation, rules.until);
  const filters = judgeResponse(response, target, rules, answers);
  return {
    kind: "generate_until",
    benchmark,
    index,
    target,
    answer: filters[0]!.answer,
    correct: filters[0]!.correct,
    response,
    generation,
    tokens: [...tokens],
    stopped,
    filters,
  };
}

export interface BenchmarkExactMatch {
  items: number;
  /** Fraction of documents whose first filter's answer matches the target. */
  exact_match: number;
  /** P_b(chance) of exact-match generation: 0 (docs/method.md; no lm-eval task key sets another). */
  chance: number;
  /** The filter pipeline `exact_match` is computed with (the task's first). */
  filter: string;
  /** exact_match under every filter pipeline of the task, by name (lm-eval's `exact_match,<filter>`). */
  exact_match_by_filter: Record<string, number>;
}

export function benchmarkExactMatch(items: readonly GeneratedItem[], filterNames: readonly string[]): BenchmarkExactMatch {
  const n = items.length;
  const byFilter: Record<string, number> = {};
  filterNames.forEach((name, f) => {
    byFilter[name] = n === 0 ? 0 : items.reduce((s, item) => s + (item.filters[f]?.correct ? 1 : 0), 0) / n;
  });
  return {
    items: n,
    exact_match: n === 0 ? 0 : items.reduce((s, item) => s + (item.score ?? (item.correct ? 1 : 0)), 0) / n,
    chance: 0,
    filter: filterNames[0] ?? "none",
    exact_match_by_filter: byFilter,
  };
}
