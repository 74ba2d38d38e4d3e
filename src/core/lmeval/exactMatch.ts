// generate_until scoring as lm-eval does it: a filter pipeline turns the generated text into an
// answer, then exact_match (Hugging Face evaluate's rules) compares it with the target.
import type { Doc } from "./documents";
import { runFilterHelper, type FilterHelper } from "./helpers";
import { pyStrip } from "./pythonString";
import { escapeRegExp, findall, pythonRegex } from "./pythonRegex";

export type FilterStep =
  | { function: "regex"; regex_pattern: string; group_select?: number; fallback?: string }
  | { function: "take_first" }
  | { function: "lowercase" }
  | { function: "uppercase" }
  | { function: "remove_whitespace" }
  | { function: "take_first_k"; k: number }
  | { function: "majority_vote" }
  | { function: "map"; mapping_dict: Record<string, unknown>; default_value?: unknown }
  | {
      function: "multi_choice_regex";
      regex_pattern?: string;
      group_select?: number;
      fallback?: string;
      ignore_case?: boolean;
      ignore_punctuation?: boolean;
      regexes_to_ignore?: string[];
    }
  /**
   * Python of the task's own: a filter class (`function: !function utils.MyFilter`) or a
   * function (`function: custom` with `filter_fn: !function utils.f`).
   */
  | { function: "python"; helper: FilterHelper };

export const FILTER_FUNCTIONS = [
  "regex",
  "take_first",
  "lowercase",
  "uppercase",
  "remove_whitespace",
  "take_first_k",
  "majority_vote",
  "map",
  "multi_choice_regex",
  "custom",
] as const;

/** lm-eval's default regex_pattern of `regex` and `multi_choice_regex` (GSM8K's "#### 42"). */
const DEFAULT_REGEX_PATTERN = String.raw`#### (\-?[0-9\.\,]+)`;

export interface FilterPipeline {
  name: string;
  steps: FilterStep[];
}

export interface ExactMatchOptions {
  ignore_case?: boolean;
  ignore_punctuation?: boolean;
  ignore_numbers?: boolean;
  regexes_to_ignore?: string[];
}

/** lm-eval's RegexFilter on one response. */
function regexFilter(step: Extract<FilterStep, { function: "regex" }>, response: string): string {
  return selectedMatch(pythonRegex(step.regex_pattern), response, step.group_select ?? 0) ?? step.fallback ?? "[invalid]";
}

/**
 * The `select`-th match of `regex` in `text` (a match with groups: its first non-empty group),
 * stripped; undefined when there is none.
 */
function selectedMatch(regex: RegExp, text: string, select: number): string | undefined {
  const matches = findall(regex, text);
  let match = matches.at(select);
  if (match === undefined) return undefined;
  if (Array.isArray(match)) {
    match = match.find((g) => g !== "");
    if (match === undefined) return undefined;
  }
  return pyStrip(match);
}

/**
 * lm-eval's registered `multi_choice_regex` on one document's responses. An answer is a letter in
 * parentheses, "(B)", found in three tries: the step's pattern; else the text of one of the
 * document's `choices` (after the ignore options), read as its letter; else ":" and a bare letter.
 */
function multiChoiceRegexFilter(
  step: Extract<FilterStep, { function: "multi_choice_regex" }>,
  responses: string[],
  doc: Doc | undefined,
): string[] {
  const choices = doc?.choices;
  if (!Array.isArray(choices))
    throw new Error("the multi_choice_regex filter reads the document's `choices`, a list, which this document lacks");
  const ignore = (text: string) => withIgnoredRemoved(text, step);
  const select = step.group_select ?? 0;
  const letters = choices.map((_, i) => String.fromCharCode(65 + i));
  const letterOfChoice = new Map(choices.map((c, i) => [ignore(pyStrip(String(c))), `(${letters[i]})`]));
  const choiceText = new RegExp([...letterOfChoice.keys()].map(escapeRegExp).join("|"));
  const bareLetter = new RegExp(`:\\s*(${letters.join("|")})`);
  const pattern = pythonRegex(step.regex_pattern ?? DEFAULT_REGEX_PATTERN);
  const converted = (match: string | undefined, table: Map<string, string>) =>
    match === undefined ? undefined : (table.get(match) ?? match);
  const letterTable = new Map(letters.map((l) => [l, `(${l})`]));
  return responses.map(
    (response) =>
      selectedMatch(pattern, response, select) ||
      converted(selectedMatch(choiceText, ignore(response), select), letterOfChoice) ||
      converted(selectedMatch(bareLetter, response, select), letterTable) ||
      (step.fallback ?? "[invalid]"),
  );
}

/** The text with the step's regexes_to_ignore removed, then lower-cased and without punctuation as it asks. */
function withIgnoredRemoved(
  text: string,
  options: { ignore_case?: boolean; ignore_punctuation?: boolean; regexes_to_ignore?: string[] },
): string {
  let out = text;
  for (const pattern of options.regexes_to_ignore ?? []) out = out.replace(pythonRegex(pattern, "g"), "");
  if (options.ignore_case) out = out.toLowerCase();
  // Unicode's punctuation categories (P*), as lm-eval's translate table removes them.
  if (options.ignore_punctuation) out = out.replace(/\p{P}/gu, "");
  return out;
}

/** Whether a pipeline runs Python of the task's: then it runs on every document at once (applyFiltersToAll). */
export function hasPythonStep(pipeline: FilterPipeline): boolean {
  return pipeline.steps.some((s) => s.function === "python");
}

/** Whether a pipeline reads the documents (a Python step or multi_choice_regex): the task keeps them. */
export function readsDocuments(pipeline: FilterPipeline): boolean {
  return pipeline.steps.some((s) => s.function === "python" || s.function === "multi_choice_regex");
}

/** Applies a pipeline to the model's responses for one document (one response when greedy). */
export function applyFilters(pipeline: FilterPipeline, responses: string[], doc?: Doc): string {
  let current = responses;
  for (const step of pipeline.steps) {
    if (step.function === "python") throw new Error(`filter pipeline ${pipeline.name} runs Python: apply it with applyFiltersToAll`);
    current = applyStep(step, current, doc);
  }
  return current[0] ?? "";
}

/**
 * A pipeline on every document's responses at once, as lm-eval applies it: `responses[i]` and
 * `docs[i]` are document i's; a Python step sees them all in one call. The answer per document.
 */
export async function applyFiltersToAll(pipeline: FilterPipeline, responses: readonly string[][], docs: readonly Doc[]): Promise<string[]> {
  let current = responses.map((r) => [...r]);
  for (const step of pipeline.steps) {
    current =
      step.function === "python" ? await runFilterHelper(step.helper, current, docs) : current.map((r, i) => applyStep(step, r, docs[i]));
  }
  return current.map((r) => (r[0] === undefined ? "" : String(r[0])));
}

/** One built-in step on one document's responses. */
function applyStep(step: Exclude<FilterStep, { function: "python" }>, responses: string[], doc: Doc | undefined): string[] {
  switch (step.function) {
    case "regex":
      return responses.map((r) => regexFilter(step, r));
    case "take_first":
      return responses.slice(0, 1);
    case "lowercase":
      return responses.map((r) => r.toLowerCase());
    case "uppercase":
      return responses.map((r) => r.toUpperCase());
    case "remove_whitespace":
      // lm-eval's WhitespaceFilter drops one leading space, no more (it stripped all whitespace
      // before lm-eval 0.4.3).
      return responses.map((r) => (r.startsWith(" ") ? r.slice(1) : r));
    case "take_first_k":
      return responses.slice(0, step.k);
    case "majority_vote":
      return [mostCommon(responses)];
    case "map":
      // lm-eval's MapFilter gives default_value (None unless set) to a response it has no entry for.
      return responses.map((r) =>
        pythonStr(Object.prototype.hasOwnProperty.call(step.mapping_dict, r) ? step.mapping_dict[r] : (step.default_value ?? null)),
      );
    case "multi_choice_regex":
      return multiChoiceRegexFilter(step, responses, doc);
  }
}

/** The most frequent response, the first seen among ties (Python's Counter.most_common(1)); "" for none. */
function mostCommon(responses: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const r of responses) counts.set(r, (counts.get(r) ?? 0) + 1);
  let best = "";
  let bestCount = 0;
  for (const [r, n] of counts) if (n > bestCount) [best, bestCount] = [r, n];
  return best;
}

/** str(value) as Python prints a YAML scalar: None, True, False, numbers, text. */
function pythonStr(value: unknown): string {
  if (value === null || value === undefined) return "None";
  if (typeof value === "boolean") return value ? "True" : "False";
  return String(value);
}

/** Python's string.punctuation. */
const PUNCTUATION = /[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/g;

/** Hugging Face evaluate's exact_match on one pair, in its order: regexes, case, punctuation, digits. */
export function exactMatch(prediction: string, reference: string, options: ExactMatchOptions = {}): boolean {
  let p = prediction;
  let r = reference;
  for (const pattern of options.regexes_to_ignore ?? []) {
    const regex = pythonRegex(pattern, "g");
    p = p.replace(regex, "");
    r = r.replace(regex, "");
  }
  if (options.ignore_case) [p, r] = [p.toLowerCase(), r.toLowerCase()];
  if (options.ignore_punctuation) [p, r] = [p.replace(PUNCTUATION, ""), r.replace(PUNCTUATION, "")];
  if (options.ignore_numbers) [p, r] = [p.replace(/[0-9]/g, ""), r.replace(/[0-9]/g, "")];
  return p === r;
}
