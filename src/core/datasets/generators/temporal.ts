// Temporal Reasoning: counting days of the week forwards and backwards, and ordering people by
// the years they were born in. Answers are computed from the stated days and years; wrong choices
// are the day one off, the day counted the wrong way, or the other people of the passage.
import type { AbilityGenerator, ItemDraft } from "./generate";
import type { Rng } from "./rng";
import { NAMES, WEEKDAYS } from "./words";

const TEMPLATES = ["weekday", "born"] as const;

export const EVENTS = ["party", "game", "exam", "trip", "visit", "show", "match", "lesson"] as const;

/** Offsets in days and how the passage says them. */
export const DAY_OFFSETS: readonly [number, string][] = [
  [1, "one day later"], [2, "two days later"], [3, "three days later"], [-1, "one day earlier"], [-2, "two days earlier"],
];

export function weekdayAfter(day: string, offset: number): string {
  const index = WEEKDAYS.indexOf(day as (typeof WEEKDAYS)[number]);
  if (index < 0) throw new Error(`not a weekday: ${day}`);
  return WEEKDAYS[(((index + offset) % 7) + 7) % 7]!;
}

function weekday(rng: Rng): ItemDraft {
  const [a, b] = rng.sample(NAMES, 2) as [string, string];
  const [e1, e2] = rng.sample(EVENTS, 2) as [string, string];
  const day = rng.pick(WEEKDAYS);
  const [offset, words] = rng.pick(DAY_OFFSETS);
  const answer = weekdayAfter(day, offset);
  // The start day, one off either way, and the count in the wrong direction.
  const mistakes = [day, weekdayAfter(answer, 1), weekdayAfter(answer, -1), weekdayAfter(day, -offset)];
  const distractors = rng.shuffled([...new Set(mistakes)].filter((d) => d !== answer)).slice(0, 3);
  return {
    template: "weekday",
    context: `${a}'s ${e1} is on ${day}. ${b}'s ${e2} is ${words}.`,
    question: `On which day is ${b}'s ${e2}?`,
    answer, distractors,
  };
}

function born(rng: Rng): ItemDraft {
  const people = rng.sample(NAMES, 4);
  const years = new Set<number>();
  while (years.size < 4) years.add(rng.int(1950, 2010));
  const born = [...years];
  const oldest = rng.chance(0.5);
  const pick = oldest ? Math.min(...born) : Math.max(...born);
  const answer = people[born.indexOf(pick)]!;
  const listed = people.map((p, i) => (i === 0 ? `${p} was born in ${born[i]}` : `${p} in ${born[i]}`));
  return {
    template: "born",
    context: `${listed.slice(0, 3).join(", ")} and ${listed[3]}.`,
    question: oldest ? "Who is the oldest?" : "Who is the youngest?",
    answer,
    distractors: people.filter((p) => p !== answer),
  };
}

export const temporal: AbilityGenerator = {
  ability: "Temporal Reasoning",
  slug: "temporal",
  summary: "days of the week counted forwards and backwards; who is oldest or youngest from birth years",
  templates: TEMPLATES,
  draft: (rng) => (rng.pick(TEMPLATES) === "weekday" ? weekday(rng) : born(rng)),
};
