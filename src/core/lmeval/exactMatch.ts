// generate_until scoring as lm-eval does it: a filter pipeline turns the generated text into an
// answer, then exact_match (Hugging Face evaluate's rules) compares it with the target.
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
  | { function: "map"; mapping_dict: Record<string, unknown>; default_value?: unknown };

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
      case "take_first_k":
        current = current.slice(0, step.k);
        break;
      case "majority_vote":
        current = [mostCommon(current)];
        break;
      case "map":
        // lm-eval's MapFilter gives default_value (None unless set) to a response it has no entry for.
        current = current.map((r) => pythonStr(Object.prototype.hasOwnProperty.call(step.mapping_dict, r) ? step.mapping_dict[r] : (step.default_value ?? null)));
        break;
    }
  }
  return current[0] ?? "";
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
