// What a task renders its documents into (the items a benchmark scores) and the options it loads
// with: apart from task.ts, so that what task.ts is made of (spec.ts, data.ts, render.ts) can name
// them without importing the loader.
import type { HelperPolicy } from "./taskPython";

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
  /** doc_to_text of the document; "" in lm-eval's multiple-input form, where each choice is the document's text. */
  text: string;
}

export interface MultipleChoiceItem {
  kind: "multiple_choice";
  /** Index of the document in the test split. */
  index: number;
  /** 1-based line of the document in the data file, where the format has lines (jsonl, csv). */
  line?: number;
  /** The document's own id (its `id` field), when it has one: what the user knows it by. */
  id?: string;
  /** What every choice is scored after; in the multiple-input form, what each choice's context starts with. */
  context: string;
  prompt: PromptParts;
  /** doc_to_choice: the continuations' texts, or in the multiple-input form the contexts' ends. */
  choices: string[];
  /** Continuations as scored: target_delimiter + choice text (+ doc_to_target for every choice in the multiple-input form). */
  continuations: string[];
  target: number;
  /**
   * lm-eval's "multiple input" form (winogrande): doc_to_text gives the gold index, choice i is
   * scored as the continuation target_delimiter + `targetText` after the context `context` +
   * choices[i]. Absent in the usual form, where the choices are the continuations.
   */
  multipleInput?: { targetText: string };
}

export interface GenerationItem {
  kind: "generate_until";
  index: number;
  line?: number;
  id?: string;
  context: string;
  prompt: PromptParts;
  /** The reference answer before filters and exact_match's normalisation. */
  target: string;
}

export type TaskItem = MultipleChoiceItem | GenerationItem;

export interface TaskOptions {
  limit?: number;
  /** Overrides the task's num_fewshot. */
  numFewshot?: number;
  /** Overrides where the data is (a config's `benchmarks[].data`, absolute paths). */
  data?: DataFiles;
  /** Whether the task's Python (`!function` helpers, filters, scorers) may run (lmeval/taskPython.ts); it does when absent. */
  helpers?: HelperPolicy;
}

/** The data of a task's splits: one file for its test split, or a file per split. */
export type DataFiles = string | Record<string, string>;
