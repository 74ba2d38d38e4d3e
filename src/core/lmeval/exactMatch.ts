// generate_until scoring as lm-eval does it: a filter pipeline turns the generated text into an
// answer, then exact_match (Hugging Face evaluate's rules) compares it with the target.
import type { Doc } from "./documents";
import { runFilterHelper, type FilterHelper } from "./helpers";
import { pyLstrip, pyStrip } from "./pythonString";
import { findall, pythonRegex } from "./pythonRegex";

export type FilterStep =
  | { function: "regex"; regex_pattern: string; group_select?: number; fallback?: string }
  | { function: "take_first" }
  | { function: "lowercase" }
  | { function: "uppercase" }
  | { function: "remove_whitespace" }
  | { function: "take_first_k"; k: number }
  | { function: "majority_vote" }
  | { function: "map"; mapping_dict: Record<string, unknown>; default_value?: unknown }
  /** A filter class of the task's own (`function: !function utils.MyFilter`), run in Python. */
  | { function: "python"; helper: FilterHelper };

export const FILTER_FUNCTIONS = ["regex", "take_first", "lowercase", "uppercase", "remove_whitespace", "take_first_k", "majority_vote", "map"] as const;

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
  const fallback = step.fallback ?? "[invalid]";
  const matches = findall(pythonRegex(step.regex_pattern), response);
  if (matches.length === 0) return fallback;
  const select = step.group_select ?? 0;
  let match = matches.at(select);
  if (match === undefined) return fallback;
  if (Array.isArray(match)) {
    const nonEmpty = match.filter((g) => g !== "");
    if (nonEmpty.length === 0) return fallback;
    match = nonEmpty[0]!;
  }
  return pyStrip(match);
}

/** Whether a pipeline runs a Python filter class: then it runs on every document at once (applyFiltersToAll). */
export function hasPythonStep(pipeline: FilterPipeline): boolean {
  return pipeline.steps.some((s) => s.function === "python");
}

/** Applies a pipeline to the model's responses for one document (one response when greedy). */
export function applyFilters(pipeline: FilterPipeline, responses: string[]): string {
  let current = responses;
  for (const step of pipeline.steps) {
    if (step.function === "python") throw new Error(`filter pipeline ${pipeline.name} runs Python: apply it with applyFiltersToAll`);
    current = applyStep(step, current);
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
    current = step.function === "python" ? await runFilterHelper(step.helper, current, docs) : current.map((r) => applyStep(step, r));
  }
  return current.map((r) => (r[0] === undefined ? "" : String(r[0])));
}

/** One built-in step on one document's responses. */
function applyStep(step: Exclude<FilterStep, { function: "python" }>, responses: string[]): string[] {
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
      return responses.map(pyLstrip);
    case "take_first_k":
      return responses.slice(0, step.k);
    case "majority_vote":
      return [mostCommon(responses)];
    case "map":
      // lm-eval's MapFilter gives default_value (None unless set) to a response it has no entry for.
      return responses.map((r) => pythonStr(Object.prototype.hasOwnProperty.call(step.mapping_dict, r) ? step.mapping_dict[r] : (step.default_value ?? null)));
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
