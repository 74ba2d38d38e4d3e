// A problem in a user's file: where it is (file, 1-based line and column, the config field), what
// it is (a stable code from the table below, which also fixes its severity), what to do about it
// (the message) and, for the editor's quick fixes, structured data (the suggested key, the other
// item's line). Quick fixes and tests key on the code and the data, never on the message's words.
//
// "Problem" is a finding of validation; "diagnostic" in this project means only the paper's
// diagnostic datasets (*.diag.jsonl).

import { NotUtf8Error } from "./fsutil";

export type Severity = "error" | "warning";

/** What each code means, and its severity. Codes are stable: renaming one breaks users' filters. */
export const PROBLEM_CODES = {
  // Files that cannot be read or parsed at all.
  "file.unreadable": { severity: "error", summary: "the file cannot be read" },
  "file.not-utf8": { severity: "error", summary: "a file whose bytes are not UTF-8 (at the first bad bytes)" },
  "yaml.syntax": { severity: "error", summary: "the YAML does not parse" },
  "yaml.warning": { severity: "warning", summary: "the YAML parses, with a warning from the parser" },
  "json.syntax": { severity: "error", summary: "a JSON file, or a line of a JSON Lines file, that does not parse" },
  "json.too-deep": {
    severity: "error",
    summary:
      "a JSON file, or a line of a JSON Lines file, nested deeper than 64 levels (at its first bracket past them), refused before it is parsed",
  },

  // Profiling configs (*.bprof.yaml): the schema.
  "config.unknown-key": { severity: "error", summary: "a key the config schema does not know (data: the nearest known key)" },
  "config.missing-field": { severity: "error", summary: "a required field is absent" },
  "config.repeated-value": { severity: "error", summary: "a list repeats a value that must be unique" },
  "config.not-allowed": { severity: "error", summary: "a value outside the allowed set" },
  "config.invalid-value": { severity: "error", summary: "a value of the wrong type or out of range" },
  // Profiling configs: what the files they name say.
  "config.no-effect": { severity: "warning", summary: "a key that has no effect in this config" },
  "config.ablation-missing": { severity: "error", summary: "abilities without `ablation`" },
  "config.ability-declared-twice": { severity: "error", summary: "one ability name in two entries" },
  "config.ability-near-miss": { severity: "warning", summary: "an ability name one typo from a paper ability (data: the name)" },
  "config.ability-near-twin": { severity: "warning", summary: "an ability name one typo from another declared ability" },
  "config.dataset-not-found": { severity: "error", summary: "a diagnostic dataset file that does not exist (data: the file, the ability)" },
  "config.dataset-has-errors": { severity: "error", summary: "a diagnostic dataset with errors of its own" },
  "config.dataset-undeclared-abilities": { severity: "warning", summary: "a dataset with items of abilities the config does not declare" },
  "config.ability-no-items": { severity: "error", summary: "an ability none of whose files has an item for it" },
  "config.review-missing": { severity: "error", summary: "`review: accepted` on a dataset that has no review file" },
  "config.layers-excluded": { severity: "error", summary: "front_removal + back_removal leave no layer" },
  "config.k-out-of-range": { severity: "error", summary: "a k outside (0, 1) (data: k / 100 when k looks like a percentage)" },
  "config.k-outside-paper": {
    severity: "warning",
    summary: "a k outside the paper's range, 1e-5 to 0.01024 (the message gives the range)",
  },
  "config.k-too-large": { severity: "error", summary: "k selects more parameters than the MLP candidates (data: the largest k)" },
  "config.k-selects-nothing": { severity: "warning", summary: "k selects 0 parameters (data: the smallest useful k)" },
  "config.model-folder": { severity: "error", summary: "a model folder that is missing or lacks a file" },
  "config.fewshot-needs-chat": { severity: "error", summary: "fewshot_as_multiturn without chat_template" },
  "config.benchmark-data": { severity: "error", summary: "a benchmark's `data` file that is not found or not of a format a task reads" },
  "config.failure-signature": {
    severity: "warning",
    summary:
      "the config's newest finished run shows a failure signature (docs/method.md): on the dataset's `data`, the label's `ability`, or `ablation.k` (data: the ability)",
  },
  "config.group-incomplete": {
    severity: "warning",
    summary: "a group or tag named by name whose tasks are not all found under task_paths (those found are profiled)",
  },
  "config.task-not-found": {
    severity: "error",
    summary: "a task file that does not exist, or a task, group or tag name found in no `task_paths` folder",
  },
  "config.task-has-errors": { severity: "error", summary: "a task file with errors of its own" },
  "config.duplicate-name": {
    severity: "error",
    summary: "two models or two benchmarks with one name, or two model names that share a run folder",
  },
  "config.chat-template": { severity: "error", summary: "the chat template is missing or refuses a prompt" },
  "config.chat-drops-description": {
    severity: "warning",
    summary: "the chat template refuses a system message, so descriptions are dropped",
  },
  "config.output": { severity: "error", summary: "an `output` folder that cannot be made or written (a file in the way, no permission)" },
  "config.shards": {
    severity: "error",
    summary:
      "`shards` or `devices` that cannot split this profile (auto without GPUs, a count that disagrees with `devices`, a remote target)",
  },
  "config.device-memory": {
    severity: "error",
    summary: "a model's job whose peak device memory exceeds the config's `gpu` (the figures, and what would bring it down)",
  },
  "config.identity-file-not-found": { severity: "error", summary: "an SSH identity file that does not exist" },
  "config.ssh-option-runs-commands": {
    severity: "error",
    summary: "an ssh option that runs a command or loads code (ProxyCommand, LocalCommand, ...): it belongs in ~/.ssh/config",
  },
  "config.ssh-option-not-allowed": {
    severity: "error",
    summary: "an ssh option that is not on the list a config may set (XAuthLocation, ForwardX11, ...): it belongs in ~/.ssh/config",
  },
  "config.ssh-option-value": {
    severity: "error",
    summary: "an ssh option's value that is not of its form, or holds %-tokens, $, backquotes, spaces or shell characters",
  },
  "config.unknown-label": {
    severity: "error",
    summary: "a benchmark's `ability` label that names no declared ability (data: the nearest)",
  },
  "config.unknown-expected-ability": {
    severity: "error",
    summary: "an ability a benchmark `expects` that names no declared ability (data: the nearest)",
  },
  "config.unknown-of-ability": {
    severity: "error",
    summary: "a second diagnostic set whose `of` names no other ability of the config, itself, or another second set (data: the nearest)",
  },
  "config.unknown-pair-ability": {
    severity: "error",
    summary: "an ability of `ablation.pairs` that names no declared ability (data: the nearest)",
  },
  "config.bad-pairs": {
    severity: "error",
    summary: "`ablation.pairs` that cannot run: a pair of one ability, no `top` selection, or a sharded run",
  },
  "config.window-too-small": { severity: "error", summary: "max_gen_toks leaves no room for the context" },
  "config.low-power": {
    severity: "warning",
    summary:
      "a benchmark that cannot detect the config's `stats.min_effect` at its confidence and 80% power, from its documents and baseline (data: the documents it would need)",
  },

  // Diagnostic datasets (*.diag.jsonl): one line.
  "diag.too-long": { severity: "error", summary: "an item longer than the model's max length, found when a run compiles its job" },
  "diag.syntax": { severity: "error", summary: "a line that is not valid JSON" },
  "diag.not-object": { severity: "error", summary: "a line that is not a JSON object" },
  "diag.missing-field": { severity: "error", summary: "an item without a required field (data: the field)" },
  "diag.wrong-type": { severity: "error", summary: "a field of the wrong type" },
  "diag.empty-field": { severity: "error", summary: "an empty id or ability" },
  "diag.choice-count": { severity: "error", summary: "fewer than 2 or more than 26 choices" },
  "diag.choice-empty": { severity: "error", summary: "an empty choice" },
  "diag.choice-repeated": { severity: "error", summary: "a choice that repeats another" },
  "diag.answer-not-index": { severity: "error", summary: "an answer that is not an integer index" },
  "diag.answer-out-of-range": { severity: "error", summary: "an answer index outside the choices (data: the number of choices)" },
  "diag.authors-format": {
    severity: "error",
    summary:
      "an item in the format of the paper's released code (question_type, options, answer as text), to convert (or what stops it converting)",
  },
  "diag.answer-not-an-option": { severity: "error", summary: "an item in the released code's format whose answer is none of its options" },
  "diag.unknown-field": { severity: "warning", summary: "a field items do not have (data: the nearest field)" },
  // Diagnostic datasets: the file as a whole.
  "diag.duplicate-id": { severity: "error", summary: "an id used by an earlier item (data: its line)" },
  "diag.unknown-ability": { severity: "warning", summary: "an ability name one typo from a known one (data: the name)" },
  "diag.duplicate": { severity: "warning", summary: "the context and question of an earlier item (data: its line)" },
  "diag.near-duplicate": { severity: "warning", summary: "almost the context and question of an earlier item (data: its line)" },
  "diag.contamination": { severity: "warning", summary: "a 13-word sequence shared with a benchmark document" },
  "diag.empty-dataset": { severity: "warning", summary: "a dataset without items" },
  "diag.answer-position-bias": { severity: "warning", summary: "answers favour some positions (chi-square test)" },
  "diag.longest-answer-bias": { severity: "warning", summary: "the answer is the longest choice more often than chance" },
  "diag.too-few-items": { severity: "warning", summary: "an ability with fewer items than a stable ranking needs" },
  "diag.unstable-ranking": {
    severity: "warning",
    summary: "an ability whose ranking a run measured unstable (its items' two halves rank unlike sets)",
  },

  // Review files of diagnostic datasets (*.review.jsonl).
  "review.invalid-record": { severity: "error", summary: "a line of a review file that is not a decision or the sample" },
  "review.answer-out-of-range": { severity: "error", summary: "a correction to a choice the item does not have" },

  // lm-eval task files and their data.
  "task.unsupported-key": { severity: "error", summary: "a task key the profiler does not support" },
  "task.python-function": {
    severity: "error",
    summary:
      "a `!function` helper that failed (it raised, was not found, returned what is not data, ran past its time limit, or Python is missing), that may not run (an untrusted workspace, task Python not allowed yet or turned off), or of a key whose helpers do not run",
  },
  "task.unsafe-code": {
    severity: "warning",
    summary: "a task whose score runs the code the model generates (`unsafe_code: true`): a run needs your confirmation",
  },
  "task.missing-key": { severity: "error", summary: "a task key the task needs" },
  "task.invalid-value": { severity: "error", summary: "a task key with a value the profiler cannot use" },
  "task.include": { severity: "error", summary: "an `include` that is missing or cyclic" },
  "task.data-file": { severity: "error", summary: "a data file that is not named or not found" },
  "task.dataset-name": {
    severity: "error",
    summary:
      "a `dataset_path` or `dataset_name` that is not a Hugging Face dataset or config name, checked before any cache path is made of it",
  },
  "task.fewshot": { severity: "error", summary: "too few few-shot documents" },
  "task.empty-split": { severity: "error", summary: "a split without documents" },
  "task.document": { severity: "error", summary: "a document that cannot be read or rendered" },
  "task.template": {
    severity: "error",
    summary: "a Jinja template that does not parse, prints an undefined name, or runs past its limits",
  },
  "task.group-aggregate": {
    severity: "warning",
    summary:
      "an aggregate_metric_list entry of a group that gives the group no score here (no task of the group reports it, or its metric is scored already)",
  },

  // Files of a model folder.
  "model.generation-config": { severity: "error", summary: "generation_config.json with an unusable eos_token_id" },
  "model.chat-template": { severity: "error", summary: "a chat template that does not compile" },
  "model.tokenizer": { severity: "error", summary: "a tokenizer that cannot be loaded (tokenizer.json, tokenizer_config.json)" },
  "model.tokenizer-pattern": {
    severity: "error",
    summary: "a tokenizer.json pattern (Split, Replace) that ran past its time limit on a text: it backtracks catastrophically",
  },
} as const satisfies Record<string, { severity: Severity; summary: string }>;

export type ProblemCode = keyof typeof PROBLEM_CODES;

/** What a quick fix needs to know, beyond the place. Every field is optional; each code documents its own. */
export interface ProblemData {
  /** The text that should replace the problem's range: the nearest key or name, the largest allowed k. */
  suggestion?: string;
  /** The line of the other item (a duplicate id, a duplicate question). */
  otherLine?: number;
  /** A file the problem is about (a missing dataset, task or include), absolute. */
  file?: string;
  /** The ability the problem is about. */
  ability?: string;
  /** The number of choices of the item (an answer out of range). */
  choices?: number;
  /** The documents a benchmark would need to detect the config's `stats.min_effect` (`config.low-power`). */
  documents?: number;
  /** The field the problem is about, where the range cannot say it (a missing field). */
  field?: string;
  /** Task Python the user has not allowed yet: each helper file and its content's SHA-256 (the editor asks about them). */
  pythonFiles?: { file: string; sha256: string }[];
}

export interface Problem {
  file: string;
  line: number;
  column: number;
  endLine?: number;
  endColumn?: number;
  severity: Severity;
  code: ProblemCode;
  message: string;
  /** Dotted path of the field, e.g. `models[0].path`, when there is one. */
  field?: string;
  data?: ProblemData;
}

/** Where a problem sits, as the places that make problems know it. */
export interface ProblemPlace {
  file: string;
  line: number;
  column: number;
  endLine?: number;
  endColumn?: number;
  field?: string;
}

export function problemAt(place: ProblemPlace, code: ProblemCode, message: string, data?: ProblemData): Problem {
  return { ...place, severity: PROBLEM_CODES[code].severity, code, message, ...(data ? { data } : {}) };
}

/** A problem with a whole file that has no finer position (a missing file, an unreadable one). */
export function fileProblem(file: string, code: ProblemCode, message: string, data?: ProblemData): Problem {
  return problemAt({ file, line: 1, column: 1 }, code, message, data);
}

/** The problem of a file whose bytes stop being UTF-8 somewhere, at that place; undefined for other read errors. */
export function notUtf8Problem(file: string, error: unknown, what: string): Problem | undefined {
  if (!(error instanceof NotUtf8Error)) return undefined;
  return problemAt({ file, line: error.line, column: error.column }, "file.not-utf8", `${what} is not UTF-8 text: ${error.message}`);
}

/** `file:line:column: severity: message (field F) [code]`, the CLI's one line per problem. */
export function formatProblem(p: Problem): string {
  const where = `${p.file}:${p.line}:${p.column}`;
  const field = p.field ? ` (field ${p.field})` : "";
  return `${where}: ${p.severity}: ${p.message}${field} [${p.code}]`;
}

export function errorsOf(problems: readonly Problem[]): Problem[] {
  return problems.filter((p) => p.severity === "error");
}
