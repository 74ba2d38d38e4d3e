// Quantitative Reasoning: one-step word problems with small numbers (adding or taking away up to
// five, comparing two amounts that differ by up to five). The answer is computed from the numbers in the text; the wrong choices
// are the mistakes people make: off by one or two, or the other operation.
import type { AbilityGenerator, ItemDraft } from "./generate";
import type { Rng } from "./rng";
import { NAMES } from "./words";

/** Things counted, as plurals. */
export const COUNTED = [
  "pens",
  "apples",
  "cards",
  "beads",
  "nuts",
  "shells",
  "stamps",
  "eggs",
  "buttons",
  "pears",
  "marbles",
  "plums",
] as const;

const TEMPLATES = ["add", "take", "compare"] as const;

/**
 * Three wrong numbers near `answer`, always one of them larger (so the answer is never the only
 * longest choice), the other operation's result among them when it is a different, positive number.
 */
export function numericDistractors(rng: Rng, answer: number, otherOperation?: number): string[] {
  const larger = rng.pick([answer + 1, answer + 2]);
  const picked = new Set<number>([larger]);
  if (otherOperation !== undefined && otherOperation > 0 && otherOperation !== answer && rng.chance(0.5)) picked.add(otherOperation);
  const near = rng.shuffled([answer - 2, answer - 1, answer + 1, answer + 2, answer + 3].filter((v) => v >= 0 && v !== answer));
  for (const v of near) {
    if (picked.size === 3) break;
    picked.add(v);
  }
  return [...picked].map(String);
}

function draft(rng: Rng): ItemDraft {
  const template = rng.pick(TEMPLATES);
  const [a, b] = rng.sample(NAMES.quantitative, 2) as [string, string];
  const thing = rng.pick(COUNTED);
  switch (template) {
    case "add": {
      const x = rng.int(2, 9);
      const y = rng.int(1, 5);
      return {
        template,
        context: `${a} has ${x} ${thing} and gets ${y} more.`,
        question: `How many ${thing} does ${a} have now?`,
        answer: String(x + y),
        distractors: numericDistractors(rng, x + y, Math.abs(x - y)),
      };
    }
    case "take": {
      const x = rng.int(4, 12);
      const y = rng.int(1, Math.min(5, x - 2));
      return {
        template,
        context: `${a} has ${x} ${thing} and gives away ${y}.`,
        question: `How many ${thing} does ${a} have now?`,
        answer: String(x - y),
        distractors: numericDistractors(rng, x - y, x + y),
      };
    }
    case "compare": {
      const x = rng.int(4, 12);
      const y = x - rng.int(1, Math.min(5, x - 1));
      return {
        template,
        context: `${a} has ${x} ${thing}. ${b} has ${y} ${thing}.`,
        question: `How many more ${thing} does ${a} have than ${b}?`,
        answer: String(x - y),
        distractors: numericDistractors(rng, x - y, x + y),
      };
    }
  }
}

export const quantitative: AbilityGenerator = {
  ability: "Quantitative Reasoning",
  slug: "quantitative",
  summary: "one-step word problems: adding, taking away, comparing amounts",
  templates: TEMPLATES,
  draft,
};
