// The few-shot prompt a local instruction model drafts diagnostic items from, and what is read
// back from its output. The prompt states the ability (what it asks of a reader, in this
// project's words) and shows a few items of it, each as the JSON line a dataset holds; the model
// continues with one more line, which is parsed and checked as a dataset line would be.
import { createHash } from "node:crypto";
import { randomInt, seededRandom } from "../../base/random";
import { streamSeed } from "../generators/rng";
import { itemOf, type DiagnosticItemFields } from "../item";
import { parseJsonlLine } from "../jsonl";

/** What each of the paper's abilities asks of a reader, as the prompt states it. */
export const ABILITY_DEFINITIONS: Readonly<Record<string, string>> = {
  "Analogical Reasoning": "seeing that one pair of things relates as another pair does, and completing the second pair",
  "Commonsense & Causal Reasoning": "knowing how everyday situations unfold: what causes what, and what follows from an event",
  "Contextual Recall": "finding in a given passage the fact a question asks for, and only there",
  "Deductive Reasoning": "drawing the conclusion that must follow from the premises given",
  "Inductive Reasoning": "finding the rule behind a few examples and applying it to the next case",
  "Long-term Knowledge": "knowing facts about the world that the question does not state",
  "Quantitative Reasoning": "working out a number from the quantities a short problem gives",
  "Semantic Relationship": "knowing how the meanings of words relate: opposites, synonyms, kinds and parts",
  "Spatial Reasoning": "working out where things are relative to one another from a description",
  "Temporal Reasoning": "working out the order, duration or date of events from a description",
};

/** The prompt's version: a draft records it, with the prompt's hash, so its prompt can be rebuilt and told apart. */
export const DRAFT_TEMPLATE = "bprof-draft-1";

/** The few-shot prompt for one draft: the ability, what it asks, and the examples as dataset lines, then an open line. */
export function draftPrompt(ability: string, examples: readonly DiagnosticItemFields[]): string {
  const definition = ABILITY_DEFINITIONS[ability];
  const lines = [
    `Multiple-choice items that test ${ability}${definition ? `: ${definition}` : ""}.`,
    'Each item is one JSON object on one line, {"context", "question", "choices", "answer"}, where answer is the 0-based index of the right choice; every item is new.',
    ...examples.map(promptLine),
  ];
  return lines.join("\n") + "\n";
}

/** An example as the prompt shows it: its text fields only, in a fixed order. */
export function promptLine(item: Pick<DiagnosticItemFields, "context" | "question" | "choices" | "answer">): string {
  return JSON.stringify({ context: item.context, question: item.question, choices: item.choices, answer: item.answer });
}

export function promptHash(prompt: string): string {
  return createHash("sha256").update(prompt).digest("hex");
}

/**
 * `n` prompts, the i-th with `shots` examples drawn at random (seeded, per draft) from `pool`: with
 * greedy decoding one prompt gives one output, so each draft needs its own.
 */
export function draftPrompts(ability: string, pool: readonly DiagnosticItemFields[], n: number, shots: number, seed: number): string[] {
  if (pool.length === 0) throw new RangeError(`no example items of ${ability} to prompt with`);
  return Array.from({ length: n }, (_, i) => {
    const rand = seededRandom(streamSeed(seed, `${ability}#${i}`));
    const order = [...pool.keys()];
    for (let j = order.length - 1; j > 0; j--) {
      const k = randomInt(rand, j + 1);
      [order[j], order[k]] = [order[k]!, order[j]!];
    }
    return draftPrompt(
      ability,
      order.slice(0, Math.min(shots, pool.length)).map((j) => pool[j]!),
    );
  });
}

/** A model's output read as an item of `ability` (its first line, as JSON), or why it is not one. */
export function parseDraft(output: string, ability: string, id: string): { item: DiagnosticItemFields } | { reason: string } {
  const line = output.split("\n")[0]!.trim();
  if (line === "") return { reason: "the model wrote nothing on its line" };
  const parsed = parseJsonlLine(line);
  if ("error" in parsed) return { reason: `not a JSON object: ${parsed.error.reason}` };
  const value = parsed.value;
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { reason: "not a JSON object" };
  const fields = value as Record<string, unknown>;
  const reasons: string[] = [];
  const item = itemOf(
    { ...fields, id, ability },
    {
      report: (path, code, message) => {
        if (code !== "diag.unknown-field") reasons.push(message);
      },
    },
  );
  if (!item) return { reason: reasons.join("; ") || "not an item" };
  return { item: { id, ability, context: item.context, question: item.question, choices: item.choices, answer: item.answer } };
}
