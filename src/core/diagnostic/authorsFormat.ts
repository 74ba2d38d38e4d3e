// The diagnostic items of the paper's released code, turned into this project's: `context`,
// `question`, `options` (the choices), `answer` as the right option's text, and `question_type`,
// the kind of question, which names the ability. The mapping (docs/config.md, "The authors' item
// format"):
//
//   question_type -> ability    the authors' types by the ability their folders file them under
//                               (logic_puzzle -> Deductive Reasoning, ...), or an ability's name
//   options       -> choices    as they are; a letter label on every option ("A. ", "(B) ") removed
//   answer        -> answer     the index of the option whose text it is (ignoring case and
//                               surrounding spaces), or of its letter ("B", "(B)")
//   id            -> id         kept; without one, `<question_type>-<line>`
//   anything else -> meta
import { nearMissAbility, PAPER_ABILITIES } from "./paperAbilities";
import { isPlainObject, MAX_CHOICES, MIN_CHOICES, type DiagnosticItemFields, type ReportItemProblem } from "./item";
import { isBlankLine, parseJsonlLine } from "./jsonl";

/** The released code's question types, by the ability its datasets' folders file each under. */
export const AUTHORS_QUESTION_TYPES: Readonly<Record<string, (typeof PAPER_ABILITIES)[number]>> = {
  single_fact_recall: "Contextual Recall",
  multi_hop_recall: "Contextual Recall",
  world_fact: "Long-term Knowledge",
  roles_and_relations: "Semantic Relationship",
  logic_puzzle: "Deductive Reasoning",
  pattern_completion: "Inductive Reasoning",
  analogy: "Analogical Reasoning",
  arithmetic_word_problem: "Quantitative Reasoning",
  temporal_order: "Temporal Reasoning",
  spatial_relation: "Spatial Reasoning",
  everyday_cause_effect: "Commonsense & Causal Reasoning",
};

const AUTHORS_FIELDS = new Set(["id", "context", "question", "options", "answer", "question_type"]);

/** A line in the authors' format: it has their `question_type` or `options`, and none of this format's `choices` and `ability`. */
export function isAuthorsItem(value: Record<string, unknown>): boolean {
  return ("question_type" in value || "options" in value) && !("choices" in value) && !("ability" in value);
}

/** A line in the released code's format: what it converts to, or what stops it converting, at that field. */
export function reportAuthorsItem(value: Record<string, unknown>, report: ReportItemProblem): void {
  const converted = convertAuthorsItem(value, 0);
  if ("error" in converted) {
    const { path, message } = converted.error;
    report(
      path,
      path[0] === "answer" ? "diag.answer-not-an-option" : "diag.authors-format",
      `an item in the released code's format that does not convert: ${message}`,
    );
    return;
  }
  const { item } = converted;
  report(
    [],
    "diag.authors-format",
    `this item is in the released code's format (\`question_type\`, \`options\`, \`answer\` as text), which runs do not read: convert it (the quick fix, or \`bprof convert\`) to ability "${item.ability}", choices from \`options\`, answer ${item.answer}`,
  );
}

/** Why a line does not convert, at the field to fix. */
export interface ConversionError {
  path: (string | number)[];
  message: string;
}

/** The item an authors' line is, in this format, or what stops it. `line` (1-based) names an item without an id. */
export function convertAuthorsItem(
  value: Record<string, unknown>,
  line: number,
): { item: DiagnosticItemFields } | { error: ConversionError } {
  const { context, question, options, answer, question_type: type, id } = value;
  const fail = (path: (string | number)[], message: string) => ({ error: { path, message } });
  if (typeof type !== "string" || type.trim() === "")
    return fail(["question_type"], '`question_type` must name the kind of question (e.g. "logic_puzzle"), which says the ability');
  const ability = abilityOfType(type);
  if (!ability)
    return fail(
      ["question_type"],
      `\`question_type\` ${JSON.stringify(type)} is none of the released code's types (${Object.keys(AUTHORS_QUESTION_TYPES).join(", ")}) nor an ability's name`,
    );
  if (typeof question !== "string") return fail(["question"], "`question` must be a string");
  if (context !== undefined && typeof context !== "string") return fail(["context"], "`context` must be a string");
  if (!Array.isArray(options) || !options.every((o) => typeof o === "string"))
    return fail(
      ["options"],
      "`options` must be the array of choice strings (an item without options has no wrong answers to rank against)",
    );
  if (options.length < MIN_CHOICES || options.length > MAX_CHOICES)
    return fail(["options"], `\`options\` has ${options.length}; an item needs ${MIN_CHOICES} to ${MAX_CHOICES}`);
  const choices = unlabelled(options as string[]);
  const index = answerIndex(answer, options as string[], choices);
  if (index === undefined)
    return fail(
      ["answer"],
      `\`answer\` ${JSON.stringify(answer)} is none of the options (${choices.map((c, i) => `${letter(i)}. ${c}`).join("; ")}): write the right option's text or letter`,
    );
  const meta = Object.fromEntries(Object.entries(value).filter(([key]) => !AUTHORS_FIELDS.has(key)));
  return {
    item: {
      id: typeof id === "string" && id.trim() !== "" ? id : `${type}-${line}`,
      ability,
      context: context ?? "",
      question,
      choices,
      answer: index,
      meta: { question_type: type, ...meta },
    },
  };
}

/** A line of a JSON Lines file converted, when it is an authors' item that converts; undefined otherwise. */
export function convertedLine(raw: string, line: number): string | undefined {
  if (isBlankLine(raw)) return undefined;
  const parsed = parseJsonlLine(raw);
  if ("error" in parsed || !isPlainObject(parsed.value) || !isAuthorsItem(parsed.value)) return undefined;
  const converted = convertAuthorsItem(parsed.value, line);
  return "item" in converted ? JSON.stringify(converted.item) : undefined;
}

function abilityOfType(type: string): string | undefined {
  const known = AUTHORS_QUESTION_TYPES[type.trim().toLowerCase()];
  if (known) return known;
  // the folders' names ("Long_Term_Knowledge", "Commonsense_Causal") and the abilities' own
  const spaced = type.replace(/_/g, " ").trim();
  return (
    (PAPER_ABILITIES as readonly string[]).find((a) => a.toLowerCase() === spaced.toLowerCase()) ?? nearMissAbility(spaced, PAPER_ABILITIES)
  );
}

const LABEL = /^\s*\(?([A-Za-z])[.):]\s+/;

/** The options without their letter labels, when every option has the label of its place (A, B, C, ...). */
function unlabelled(options: readonly string[]): string[] {
  const labelled = options.every((o, i) => LABEL.exec(o)?.[1]?.toUpperCase() === letter(i));
  return labelled ? options.map((o) => o.replace(LABEL, "")) : [...options];
}

/** The index of the option `answer` names: its text (as written, or without its label), else its letter. */
function answerIndex(answer: unknown, options: readonly string[], choices: readonly string[]): number | undefined {
  if (typeof answer !== "string") return undefined;
  const folded = (s: string) => s.trim().toLowerCase();
  const wanted = folded(answer);
  const byText = choices.findIndex((c, i) => folded(c) === wanted || folded(options[i]!) === wanted);
  if (byText >= 0) return byText;
  const byLetter = /^\(?([A-Za-z])\)?\.?$/.exec(answer.trim())?.[1]?.toUpperCase();
  if (byLetter === undefined) return undefined;
  const i = byLetter.charCodeAt(0) - 65;
  return i < choices.length ? i : undefined;
}

function letter(i: number): string {
  return String.fromCharCode(65 + i);
}
