// Semantic Relationship: opposites, synonyms, kinds (hypernyms) and parts (meronyms) over the
// project's lexicon (lexicon.ts). The answer is read from the table; wrong choices come from other
// entries of the same table, plus the classic trap: the synonym when asked for the opposite, and
// the opposite when asked for the synonym. A one-line scene with a name opens each item.
import type { AbilityGenerator, ItemDraft } from "./generate";
import { KINDS_OF, OPPOSITES, PART_OF } from "./lexicon";
import type { Rng } from "./rng";
import { NAMES } from "./words";

const TEMPLATES = ["opposite", "synonym", "kind", "part"] as const;

/** Short on purpose: a scene and a question stay under 13 words (the contamination test's n-gram). */
export const WORD_SCENES = [
  "is learning words.",
  "plays a word game.",
  "reads a dictionary.",
  "asks a teacher.",
  "is doing a quiz.",
] as const;

/** Every concept of the opposites table, each with the index of its pair. */
const CONCEPTS = OPPOSITES.flatMap(([a, b], pair) => [
  { words: a, pair },
  { words: b, pair },
]);

/** `count` words from concepts other than those of pair `pair`. */
function otherWords(rng: Rng, pair: number, count: number): string[] {
  const pool = CONCEPTS.filter((c) => c.pair !== pair).map((c) => rng.pick(c.words));
  return rng.sample([...new Set(pool)], count);
}

function scene(rng: Rng): string {
  return `${rng.pick(NAMES.semantic)} ${rng.pick(WORD_SCENES)}`;
}

function opposite(rng: Rng): ItemDraft {
  const pair = rng.below(OPPOSITES.length);
  const [cueConcept, answerConcept] = rng.shuffled(OPPOSITES[pair]!) as [readonly string[], readonly string[]];
  const cue = rng.pick(cueConcept);
  const synonym = cueConcept.filter((w) => w !== cue);
  const trap = synonym.length > 0 ? [rng.pick(synonym)] : [];
  return {
    template: "opposite",
    context: scene(rng),
    question: `What is the opposite of ${cue}?`,
    answer: rng.pick(answerConcept),
    distractors: [...trap, ...otherWords(rng, pair, 3 - trap.length)],
  };
}

function synonym(rng: Rng): ItemDraft {
  const withSynonyms = CONCEPTS.filter((c) => c.words.length >= 2);
  const { words, pair } = rng.pick(withSynonyms);
  const [cue, answer] = rng.sample(words, 2) as [string, string];
  const opposite = OPPOSITES[pair]!.find((c) => c !== words)!;
  return {
    template: "synonym",
    context: scene(rng),
    question: `Which word means the same as ${cue}?`,
    answer,
    distractors: [rng.pick(opposite), ...otherWords(rng, pair, 2)],
  };
}

function kind(rng: Rng): ItemDraft {
  const kinds = Object.keys(KINDS_OF);
  const answer = rng.pick(kinds);
  return {
    template: "kind",
    context: scene(rng),
    question: `What kind of thing is ${rng.pick(KINDS_OF[answer]!)}?`,
    answer,
    distractors: rng.sampleExcept(kinds, 3, [answer]),
  };
}

function part(rng: Rng): ItemDraft {
  const [piece, whole] = rng.pick(PART_OF);
  const wholes = [...new Set(PART_OF.map(([, w]) => w))];
  return {
    template: "part",
    context: scene(rng),
    question: `A ${piece} is part of what?`,
    answer: whole,
    distractors: rng.sampleExcept(wholes, 3, [whole]),
  };
}

export const semantic: AbilityGenerator = {
  ability: "Semantic Relationship",
  slug: "semantic",
  summary: "opposites, synonyms, kinds of things and parts of things, from the project's lexicon",
  templates: TEMPLATES,
  draft: (rng) => {
    switch (rng.pick(TEMPLATES)) {
      case "opposite":
        return opposite(rng);
      case "synonym":
        return synonym(rng);
      case "kind":
        return kind(rng);
      case "part":
        return part(rng);
    }
  },
};
