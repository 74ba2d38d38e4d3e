// Inductive Reasoning: find the rule behind a few examples and apply it once more. Number
// sequences with a constant step up or down, and word patterns that repeat with a period of two or three.
// The answer is the rule's next term; wrong choices are the next term of a near rule (off by one,
// a step too far, the last term again) or the pattern's other words.
import type { AbilityGenerator, ItemDraft } from "./generate";
import type { Rng } from "./rng";

const TEMPLATES = ["numbers", "pattern"] as const;

export const PATTERN_WORDS = ["star", "moon", "sun", "tree", "fish", "bird", "ship", "rock", "leaf", "frog", "ring", "wave"] as const;

function numbers(rng: Rng): ItemDraft {
  const step = rng.int(2, 12) * (rng.chance(0.5) ? 1 : -1);
  const shown = rng.int(4, 5);
  // Every term and the answer have two digits.
  const [low, high] = step > 0 ? [10, 99 - shown * step] : [10 - shown * step, 99];
  const start = rng.int(low, high);
  const terms = Array.from({ length: shown }, (_, i) => start + i * step);
  const answer = start + shown * step;
  const last = terms[shown - 1]!;
  const tooFar = answer + step;
  // Always one larger wrong choice, so the answer is never the only longest one.
  const wrong = new Set<number>([rng.pick([answer + 1, step > 0 ? tooFar : last])]);
  for (const v of rng.shuffled([answer - 1, answer + 1, tooFar, last])) {
    if (wrong.size === 3) break;
    if (v !== answer && v >= 0) wrong.add(v);
  }
  return {
    template: "numbers",
    context: `The numbers go ${terms.join(", ")}.`,
    question: rng.pick(["Which number comes next?", "What is the next number?"]),
    answer: String(answer),
    distractors: [...wrong].map(String),
  };
}

function pattern(rng: Rng): ItemDraft {
  const period = rng.int(2, 3);
  const words = rng.sample(PATTERN_WORDS, 4);
  const unit = words.slice(0, period);
  // Repeats of one unit have the same word 3-grams whatever their length, except at the end: two
  // items differ in more than the end only when their lengths differ by less than a period.
  const shown = 2 * period + rng.below(period);
  const sequence = Array.from({ length: shown }, (_, i) => unit[i % period]!);
  const answer = unit[shown % period]!;
  return {
    template: "pattern",
    context: `The pattern goes ${sequence.join(", ")}.`,
    question: rng.pick(["Which word comes next?", "What is the next word?"]),
    answer,
    distractors: words.filter((w) => w !== answer),
  };
}

export const inductive: AbilityGenerator = {
  ability: "Inductive Reasoning",
  slug: "inductive",
  summary: "number sequences with a constant step; word patterns repeating with period two or three",
  templates: TEMPLATES,
  draft: (rng) => (rng.pick(TEMPLATES) === "numbers" ? numbers(rng) : pattern(rng)),
};
