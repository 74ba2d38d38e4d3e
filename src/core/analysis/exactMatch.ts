// generate_until scoring as lm-eval does it: a filter pipeline turns the generated text into an
// answer, then exact_match (Hugging Face evaluate's rules) compares it with the target.
import { pyLstrip, pyStrip } from "../prompts/pythonString";
import { findall, pythonRegex } from "../prompts/pythonRegex";

export type FilterStep =
  | { function: "regex"; regex_pattern: string; group_select?: number; fallback?: string }
  | { function: "take_first" }
  | { function: "lowercase" }
  | { function: "uppercase" }
  | { function: "remove_whitespace" };

export const FILTER_FUNCTIONS = ["regex", "take_first", "lowercase", "uppercase", "remove_whitespace"] as const;

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

/** Applies a pipeline to the model's responses for one document (one response when greedy). */
export function applyFilters(pipeline: FilterPipeline, responses: string[]): string {
  let current = responses;
  for (const step of pipeline.steps) {
    switch (step.function) {
      case "regex":
        current = current.map((r) => regexFilter(step, r));
        break;
      case "take_first":
        current = current.slice(0, 1);
        break;
      case "lowercase":
        current = current.map((r) => r.toLowerCase());
        break;
      case "uppercase":
        current = current.map((r) => r.toUpperCase());
        break;
      case "remove_whitespace":
        current = current.map(pyLstrip);
        break;
    }
  }
  return current[0] ?? "";
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
