// Analogical Reasoning: A is to B as C is to what? over the relations of lexicon.ts (young
// animals, past tenses, plurals, female forms, comparatives, homes). The answer is C's partner in
// A:B's relation; wrong choices are B itself (the example's answer), C (copying the cue) and the
// partner of another word under the same relation.
import type { AbilityGenerator, ItemDraft } from "./generate";
import { ANALOGY_RELATIONS } from "./lexicon";
import type { Rng } from "./rng";

const TEMPLATES = ["forward", "reverse", "goes-with"] as const;

const QUESTIONS: Record<(typeof TEMPLATES)[number], (a: string, b: string, c: string) => string> = {
  forward: (a, b, c) => `${cap(a)} is to ${b} as ${c} is to what?`,
  reverse: (a, b, c) => `${cap(c)} is to what as ${a} is to ${b}?`,
  "goes-with": (a, b, c) => `If ${a} goes with ${b}, what goes with ${c}?`,
};

function draft(rng: Rng): ItemDraft {
  const relation = rng.pick(Object.keys(ANALOGY_RELATIONS));
  const pairs = ANALOGY_RELATIONS[relation]!;
  for (;;) {
    const [[a, b], [c, d]] = rng.sample(pairs, 2) as [[string, string], [string, string]];
    // Two first words with the same partner (bear and lion: cub) would make B the answer too.
    if (b.toLowerCase() === d.toLowerCase() || c.toLowerCase() === d.toLowerCase()) continue;
    const partners = pairs.map(([, w]) => w).filter((w) => ![b, c, d].some((x) => x.toLowerCase() === w.toLowerCase()));
    if (partners.length === 0) continue;
    // Derived words (kitten, smaller, princess) are longer than the cue: the third wrong choice
    // is at least as long as the answer where one can be, so length does not give the answer away.
    const long = partners.filter((w) => w.length >= d.length);
    const other = rng.pick(long.length > 0 ? long : partners);
    const template = rng.pick(TEMPLATES);
    return { template, context: "", question: QUESTIONS[template](a, b, c), answer: d, distractors: [b, c, other] };
  }
}

function cap(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

export const analogical: AbilityGenerator = {
  ability: "Analogical Reasoning",
  slug: "analogical",
  summary: "A is to B as C is to what? over young animals, past tenses, plurals, female forms, comparatives and homes",
  templates: TEMPLATES,
  draft,
};
