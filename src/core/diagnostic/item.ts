// A diagnostic item (one line of a `*.diag.jsonl` file): its fields, their limits, and the check of
// one parsed line against them, each problem reported at its JSON path. The file-wide checks
// (duplicates, health, contamination) and their incremental upkeep are dataset.ts's.
import type { JSONPath } from "jsonc-parser";
import { nearestWord } from "../base/nearest";
import type { ProblemCode, ProblemData } from "../base/problems";

/**
 * A diagnostic item read from its dataset: what one line of a `*.diag.jsonl` file holds, and the
 * line. The one item type of diagnostic datasets: the generators write DiagnosticItemFields.
 */
export interface DiagnosticItem {
  id: string;
  ability: string;
  context: string;
  question: string;
  choices: string[];
  /** 0-based index into `choices`. */
  answer: number;
  meta?: Record<string, unknown>;
  /** 1-based line of the item in its file. */
  line: number;
}

/** A diagnostic item as a line of its file holds it, before it is read back (what the generators make). */
export type DiagnosticItemFields = Omit<DiagnosticItem, "line">;

export const DIAGNOSTIC_FIELDS = ["id", "ability", "context", "question", "choices", "answer", "meta"] as const;
const REQUIRED_FIELDS = ["id", "ability", "context", "question", "choices", "answer"] as const;
type RequiredField = (typeof REQUIRED_FIELDS)[number];

export const MIN_CHOICES = 2;
/** One choice per letter A-Z, as prompts label them. */
export const MAX_CHOICES = 26;

const FIELD_HINTS: Record<RequiredField, string> = {
  id: "a string naming the item, unique in the file",
  ability: 'the ability the item exercises, e.g. "Deductive Reasoning"',
  context: 'the passage the question is about; "" when there is none',
  question: "the question text",
  choices: `an array of ${MIN_CHOICES} to ${MAX_CHOICES} choice strings`,
  answer: "the 0-based index of the correct choice",
};

function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  const t = typeof value;
  return t === "object" ? "an object" : t === "string" ? "a string" : t === "number" ? "a number" : t === "boolean" ? "a boolean" : t;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** How a check reports a problem of an item's line, at a path of the line's JSON. */
export type ReportItemProblem = (
  path: JSONPath,
  code: ProblemCode,
  message: string,
  options?: { on?: "value" | "key"; data?: ProblemData; once?: boolean },
) => void;

type Fail = (path: JSONPath, code: ProblemCode, message: string, data?: ProblemData) => void;

/** The item on a parsed line, or undefined when the line has errors (each reported to `line`). */
export function itemOf(value: unknown, line: { report: ReportItemProblem }): DiagnosticItemFields | undefined {
  const report: ReportItemProblem = (path, code, message, options) => line.report(path, code, message, options);
  if (!isPlainObject(value)) {
    report(
      [],
      "diag.not-object",
      `each line must be a JSON object {"id", "ability", "context", "question", "choices", "answer"}; found ${typeName(value)}`,
    );
    return undefined;
  }
  for (const key in value) if (!(DIAGNOSTIC_FIELDS as readonly string[]).includes(key)) unknownFieldWarning(key, report);
  let ok = true;
  const fail: Fail = (path, code, message, data) => {
    report(path, code, message, data ? { data } : {});
    ok = false;
  };
  for (const field of REQUIRED_FIELDS)
    if (!(field in value)) fail([], "diag.missing-field", `missing field \`${field}\`: add ${FIELD_HINTS[field]}`, { field });

  for (const field of ["id", "ability"] as const) {
    const v = value[field];
    if (v === undefined) continue;
    if (typeof v !== "string")
      fail(
        [field],
        "diag.wrong-type",
        `\`${field}\` must be a string${typeof v === "number" ? ` (write "${v}")` : ""}; found ${typeName(v)}`,
        { field },
      );
    else if (v.trim() === "") fail([field], "diag.empty-field", `\`${field}\` is empty: write ${FIELD_HINTS[field]}`, { field });
  }
  for (const field of ["context", "question"] as const) {
    const v = value[field];
    if (v !== undefined && typeof v !== "string")
      fail([field], "diag.wrong-type", `\`${field}\` must be a string (${FIELD_HINTS[field]}); found ${typeName(v)}`, { field });
  }
  const choicesOk = value.choices === undefined || checkChoices(value.choices, fail);
  if (value.answer !== undefined)
    checkAnswer(value.answer, choicesOk && Array.isArray(value.choices) ? value.choices.length : undefined, fail);
  if (value.meta !== undefined && !isPlainObject(value.meta))
    fail(["meta"], "diag.wrong-type", `\`meta\` must be an object of extra data; found ${typeName(value.meta)}`, { field: "meta" });
  if (!ok || value.choices === undefined || value.answer === undefined) return undefined;
  return placedItem(value as unknown as DiagnosticItemFields, 0);
}

/**
 * An item with its line, built by one of two literals: checks loop over 20,000 items a keystroke,
 * and objects made by spreading (`{...item, line}`) are several times slower to read.
 */
export function placedItem(i: DiagnosticItemFields, line: number): DiagnosticItem {
  return i.meta === undefined
    ? { id: i.id, ability: i.ability, context: i.context, question: i.question, choices: i.choices, answer: i.answer, line }
    : { id: i.id, ability: i.ability, context: i.context, question: i.question, choices: i.choices, answer: i.answer, meta: i.meta, line };
}

function unknownFieldWarning(key: string, report: ReportItemProblem): void {
  const suggestion = nearestWord(key, DIAGNOSTIC_FIELDS);
  const hint = suggestion ? `did you mean \`${suggestion}\`? Extra data belongs under \`meta\`` : "put extra data under `meta`";
  report([key], "diag.unknown-field", `unknown field \`${key}\`: ${hint}`, {
    on: "key",
    once: true,
    ...(suggestion ? { data: { suggestion } } : {}),
  });
}

/** Reports what is wrong with `choices`; true when they are usable. */
function checkChoices(choices: unknown, fail: Fail): boolean {
  if (!Array.isArray(choices)) {
    fail(["choices"], "diag.wrong-type", `\`choices\` must be ${FIELD_HINTS.choices}; found ${typeName(choices)}`, { field: "choices" });
    return false;
  }
  let ok = true;
  if (choices.length < MIN_CHOICES || choices.length > MAX_CHOICES) {
    fail(
      ["choices"],
      "diag.choice-count",
      `\`choices\` has ${choices.length} choice${choices.length === 1 ? "" : "s"}; give between ${MIN_CHOICES} and ${MAX_CHOICES}`,
    );
    ok = false;
  }
  const firstIndexOf = new Map<string, number>();
  for (let i = 0; i < choices.length; i++) {
    const c: unknown = choices[i];
    if (typeof c !== "string")
      fail(["choices", i], "diag.wrong-type", `choice ${i} must be a string; found ${typeName(c)}`, { field: "choices" });
    if (typeof c !== "string" || !choiceOk(c, i, firstIndexOf, fail)) ok = false;
  }
  return ok;
}

/** Reports an empty choice or a repeat of an earlier one; true when the choice is fine. */
function choiceOk(choice: string, i: number, firstIndexOf: Map<string, number>, fail: Fail): boolean {
  const folded = choice.trim().toLowerCase();
  if (folded === "") {
    fail(["choices", i], "diag.choice-empty", `choice ${i} is empty: write its text`);
    return false;
  }
  const first = firstIndexOf.get(folded);
  if (first === undefined) {
    firstIndexOf.set(folded, i);
    return true;
  }
  fail(
    ["choices", i],
    "diag.choice-repeated",
    `choice ${i} repeats choice ${first} (ignoring case and surrounding spaces): make every choice different`,
  );
  return false;
}

function checkAnswer(answer: unknown, choiceCount: number | undefined, fail: Fail): void {
  if (typeof answer !== "number" || !Number.isInteger(answer)) {
    const hint = typeof answer === "string" ? " (a number, not the choice's text or letter)" : "";
    fail(
      ["answer"],
      "diag.answer-not-index",
      `\`answer\` must be an integer index into \`choices\`, 0 for the first${hint}; found ${typeName(answer)} ${JSON.stringify(answer)}`,
      choiceCount !== undefined ? { choices: choiceCount } : undefined,
    );
    return;
  }
  if (choiceCount === undefined) return;
  if (answer < 0 || answer >= choiceCount) {
    fail(
      ["answer"],
      "diag.answer-out-of-range",
      `\`answer\` ${answer} is out of range: with ${choiceCount} choices it must be 0 to ${choiceCount - 1} (0-based)`,
      { choices: choiceCount },
    );
  }
}
