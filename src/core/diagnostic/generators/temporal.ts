// Temporal Reasoning: counting days of the week and months of the year forwards and backwards
// from a stated date. Answers are computed from the calendar; wrong choices are the start, the
// answer one off either way, or the count in the wrong direction.
import type { AbilityGenerator, ItemDraft } from "./generate";
import type { Rng } from "./rng";
import { NAMES, WEEKDAYS } from "./words";

const TEMPLATES = ["weekday", "month"] as const;

export const EVENTS = ["party", "game", "exam", "trip", "visit", "show", "match", "lesson"] as const;

/** Offsets in days and how the passage says them. */
export const DAY_OFFSETS: readonly [number, string][] = [
  [1, "one day later"],
  [2, "two days later"],
  [3, "three days later"],
  [-1, "one day earlier"],
  [-2, "two days earlier"],
];

export function weekdayAfter(day: string, offset: number): string {
  const index = WEEKDAYS.indexOf(day as (typeof WEEKDAYS)[number]);
  if (index < 0) throw new Error(`not a weekday: ${day}`);
  return WEEKDAYS[(((index + offset) % 7) + 7) % 7]!;
}

function weekday(rng: Rng): ItemDraft {
  const [a, b] = rng.sample(NAMES.temporal, 2) as [string, string];
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
    answer,
    distractors,
  };
}

export const MONTHS = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
] as const;
export const MONTH_OFFSETS: readonly [number, string][] = [
  [1, "one month later"],
  [2, "two months later"],
  [3, "three months later"],
  [-1, "one month earlier"],
  [-2, "two months earlier"],
];
export const FAIRS = ["fair", "show", "race", "festival", "market", "concert", "parade", "contest"] as const;

export function monthAfter(month: string, offset: number): string {
  const index = MONTHS.indexOf(month as (typeof MONTHS)[number]);
  if (index < 0) throw new Error(`not a month: ${month}`);
  return MONTHS[(((index + offset) % 12) + 12) % 12]!;
}

function month(rng: Rng): ItemDraft {
  const [e1, e2] = rng.sample(FAIRS, 2) as [string, string];
  const start = rng.pick(MONTHS);
  const [offset, words] = rng.pick(MONTH_OFFSETS);
  const answer = monthAfter(start, offset);
  const mistakes = [start, monthAfter(answer, 1), monthAfter(answer, -1), monthAfter(start, -offset)];
  return {
    template: "month",
    context: `The ${e1} is in ${start}. The ${e2} is ${words}.`,
    question: `In which month is the ${e2}?`,
    answer,
    distractors: rng.shuffled([...new Set(mistakes)].filter((m) => m !== answer)).slice(0, 3),
  };
}

export const temporal: AbilityGenerator = {
  ability: "Temporal Reasoning",
  slug: "temporal",
  summary: "days of the week and months of the year counted forwards and backwards",
  templates: TEMPLATES,
  draft: (rng) => (rng.pick(TEMPLATES) === "weekday" ? weekday(rng) : month(rng)),
};
