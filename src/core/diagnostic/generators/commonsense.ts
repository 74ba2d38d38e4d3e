// Commonsense & Causal Reasoning: what most likely follows from an everyday cause, and what most
// likely caused an everyday effect, from a causal table written for this project. Wrong choices
// are effects (or causes) of other rows about the same kind of subject (a thing, "It ...", or the
// person), minus the rows marked as also plausible for this one.
import type { AbilityGenerator, ItemDraft } from "./generate";
import type { Rng } from "./rng";
import { NAMES } from "./words";

export interface CausalRow {
  /** What the person did, after their name: "left ice cream in the sun". */
  cause: string;
  /** What followed: about the thing ("It melted.") or the person ("{name} felt sick."). */
  effect: string;
  /** Indices of rows whose effect could also follow this cause: never a wrong choice here. */
  alsoPlausible?: number[];
}

/**
 * Causes are at most seven words and questions at most five, so that no run of 13 words of an
 * item (the contamination test's n-gram) is fixed text plus a name: two items of the table share
 * one only when they are nearly the same item.
 *
 * Rows 0-19 are about a thing, rows 20 and on about the person ({name} stands for the name). */
export const CAUSAL: readonly CausalRow[] = [
  /* 0 */ { cause: "left ice cream in the sun", effect: "It melted." },
  /* 1 */ { cause: "dropped a glass on the stone floor", effect: "It broke.", alsoPlausible: [16] },
  /* 2 */ { cause: "forgot to water the plant for weeks", effect: "It wilted.", alsoPlausible: [18] },
  /* 3 */ { cause: "left bread out for two weeks", effect: "It grew mold.", alsoPlausible: [10] },
  /* 4 */ { cause: "blew too much air into a balloon", effect: "It popped." },
  /* 5 */ { cause: "left an iron nail in water", effect: "It rusted." },
  /* 6 */ { cause: "heated a pot of water", effect: "It boiled." },
  /* 7 */ { cause: "put water in the freezer", effect: "It froze." },
  /* 8 */ { cause: "dropped a stone into a pond", effect: "It sank." },
  /* 9 */ { cause: "let go of a helium balloon", effect: "It floated away.", alsoPlausible: [4] },
  /* 10 */ { cause: "left the milk out all week", effect: "It went sour.", alsoPlausible: [3] },
  /* 11 */ { cause: "kicked the ball as hard as possible", effect: "It flew far." },
  /* 12 */ { cause: "planted a seed and watered it", effect: "It sprouted." },
  /* 13 */ { cause: "spilled juice on the white rug", effect: "It got a stain." },
  /* 14 */ { cause: "left the car lights on all night", effect: "The battery died." },
  /* 15 */ { cause: "forgot to add wood to the fire", effect: "It went out." },
  /* 16 */ { cause: "tapped an egg on the bowl", effect: "It cracked.", alsoPlausible: [1] },
  /* 17 */ { cause: "shook a soda bottle and opened it", effect: "It fizzed over." },
  /* 18 */ { cause: "hung the wet towel in the sun", effect: "It dried." },
  /* 19 */ { cause: "painted the old fence", effect: "It looked new." },
  /* 20 */ { cause: "touched the hot stove", effect: "{name} burned a finger." },
  /* 21 */ { cause: "stayed up all night", effect: "{name} felt sleepy.", alsoPlausible: [34] },
  /* 22 */ { cause: "skipped breakfast and lunch", effect: "{name} felt hungry." },
  /* 23 */ { cause: "walked in the rain without a coat", effect: "{name} got wet.", alsoPlausible: [25] },
  /* 24 */ { cause: "studied hard for the test", effect: "{name} passed the test." },
  /* 25 */ { cause: "ate far too much cake", effect: "{name} felt sick." },
  /* 26 */ { cause: "ran a long race in the heat", effect: "{name} felt thirsty.", alsoPlausible: [21, 29, 33] },
  /* 27 */ { cause: "practised the violin every day", effect: "{name} played much better." },
  /* 28 */ { cause: "stepped on a sharp nail", effect: "{name} hurt a foot." },
  /* 29 */ { cause: "sat in the sun without a hat", effect: "{name} got sunburned.", alsoPlausible: [26] },
  /* 30 */ { cause: "missed the last bus", effect: "{name} walked home.", alsoPlausible: [34] },
  /* 31 */ { cause: "lost the house key", effect: "{name} could not get in." },
  /* 32 */ { cause: "wore a thick coat in the snow", effect: "{name} stayed warm." },
  /* 33 */ { cause: "won the race", effect: "{name} got a medal." },
  /* 34 */ { cause: "overslept", effect: "{name} was late for school." },
  /* 35 */ { cause: "saved money every week for a year", effect: "{name} bought a new bike." },
  /* 36 */ { cause: "heard a loud bang behind the door", effect: "{name} jumped." },
];

/** Rows before this one are about a thing; this one and after, about the person. */
export const FIRST_PERSON_ROW = 20;

const TEMPLATES = ["effect", "cause"] as const;

/** Whether rows i and j could explain each other's effect (either marks the other). */
export function plausibleTogether(i: number, j: number): boolean {
  return i === j || (CAUSAL[i]!.alsoPlausible ?? []).includes(j) || (CAUSAL[j]!.alsoPlausible ?? []).includes(i);
}

function isPersonRow(i: number): boolean {
  return i >= FIRST_PERSON_ROW;
}

/** Rows about the same kind of subject as row i that are no answer to it. */
function wrongRows(rng: Rng, i: number): number[] {
  const candidates = CAUSAL.map((_, j) => j).filter((j) => isPersonRow(j) === isPersonRow(i) && !plausibleTogether(i, j));
  return rng.sample(candidates, 3);
}

function draft(rng: Rng): ItemDraft {
  // Effects about a thing name no one, so asking for their cause would not say whose: causes
  // are asked of the person rows only.
  const template = rng.pick(TEMPLATES);
  const row = template === "effect" ? rng.below(CAUSAL.length) : rng.int(FIRST_PERSON_ROW, CAUSAL.length - 1);
  const name = rng.pick(NAMES.commonsense);
  const effect = (i: number) => CAUSAL[i]!.effect.replace("{name}", name);
  const cause = (i: number) => `${name} ${CAUSAL[i]!.cause}.`;
  const wrong = wrongRows(rng, row);
  if (template === "effect") {
    return {
      template,
      context: cause(row),
      question: rng.pick(["What happened next?", "What was the result?"]),
      answer: effect(row),
      distractors: wrong.map(effect),
    };
  }
  return {
    template,
    context: effect(row),
    question: rng.pick(["What most likely caused this?", "Why did this most likely happen?"]),
    answer: cause(row),
    distractors: wrong.map(cause),
  };
}

export const commonsense: AbilityGenerator = {
  ability: "Commonsense & Causal Reasoning",
  slug: "commonsense",
  summary: "the likely effect of an everyday cause, and the likely cause of an everyday effect, from the project's causal table",
  templates: TEMPLATES,
  draft,
};
