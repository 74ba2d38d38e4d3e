// Inductive Reasoning: find the rule behind a few examples and apply it once more. Letter
// sequences with a constant step up or down the alphabet, and word patterns that repeat with a
// period of two or three. The answer is the rule's next term; wrong choices are the next term of a
// near rule (off by one, a step too far, the last term again) or the pattern's other words.
import type { AbilityGenerator, ItemDraft } from "./generate";
import type { Rng } from "./rng";

const TEMPLATES = ["letters", "pattern"] as const;

export const PATTERN_WORDS = ["star", "moon", "sun", "tree", "fish", "bird", "ship", "rock", "leaf", "frog", "ring", "wave"] as const;

/** The letters of the alphabet in order: letter sequences stand for rule induction with no digit in sight. */
const ALPHABET = "abcdefghijklmnopqrstuvwxyz";

function letters(rng: Rng): ItemDraft {
  // Letters, not numbers: number sequences would share their digits with Quantitative Reasoning's
  // word problems, and a profile could not tell the two abilities' parameters apart.
  const step = rng.int(1, 3) * (rng.chance(0.5) ? 1 : -1);
  const shown = rng.int(4, 5);
  // Room for the answer and one step beyond it, both ways.
  const [low, high] = step > 0 ? [0, 25 - (shown + 1) * step] : [-step * (shown + 1), 25];
  const start = rng.int(low, high);
  const at = (i: number) => ALPHABET[start + i * step]!;
  const terms = Array.from({ length: shown }, (_, i) => at(i));
  const answer = at(shown);
  // The next letter of a near rule: a step too far, the last letter again, one or two off.
  const next = start + shown * step;
  const near = [next + step, next - step, next - 1, next + 1, next - 2, next + 2]
    .filter((i) => i >= 0 && i < 26 && i !== next)
    .map((i) => ALPHABET[i]!);
  const [tooFar, last, ...others] = [...new Set(near)];
  return {
    template: "letters",
    context: `The letters go ${terms.join(", ")}.`,
    question: rng.pick(["Which letter comes next?", "What is the next letter?"]),
    answer,
    distractors: [tooFar!, last!, rng.pick(others)],
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
  summary: "letter sequences with a constant step; word patterns repeating with period two or three",
  templates: TEMPLATES,
  draft: (rng) => (rng.pick(TEMPLATES) === "letters" ? letters(rng) : pattern(rng)),
};
