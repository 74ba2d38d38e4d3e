// Spatial Reasoning: where one thing is relative to another, from one stated relation (read
// forwards or backwards) or from two relations chained on a map. Answers come from coordinates
// given to the things; the choices are always the four directions of the item's frame.
import type { AbilityGenerator, ItemDraft } from "./generate";
import type { Rng } from "./rng";
import { NAMES } from "./words";

const TEMPLATES = ["table", "map"] as const;

export const OBJECTS = [
  "cup", "bowl", "lamp", "box", "book", "vase", "clock", "plant", "phone", "shoe", "jar", "bell", "hat", "key", "mug", "doll", "fork", "radio",
] as const;

/** Relations on a table top, with the offset (x right, y up) from the second thing to the first. */
export const TABLE_RELATIONS: Record<string, [number, number]> = {
  "to the left of": [-1, 0], "to the right of": [1, 0], above: [0, 1], below: [0, -1],
};
/** The choices of table items: where a thing is, as a bare answer. */
export const TABLE_ANSWERS: Record<string, string> = {
  "to the left of": "to the left", "to the right of": "to the right", above: "above", below: "below",
};

export const COMPASS: Record<string, [number, number]> = { north: [0, 1], south: [0, -1], east: [1, 0], west: [-1, 0] };

function directionOf(offset: [number, number], names: Record<string, [number, number]>): string {
  const sign = (v: number) => Math.sign(v);
  const found = Object.entries(names).find(([, [x, y]]) => x === sign(offset[0]) && y === sign(offset[1]));
  if (!found) throw new Error(`no single direction for offset ${offset.join(",")}`);
  return found[0];
}

function table(rng: Rng): ItemDraft {
  const [first, second] = rng.sample(OBJECTS, 2) as [string, string];
  const relation = rng.pick(Object.keys(TABLE_RELATIONS));
  const where: Record<string, [number, number]> = { [second]: [0, 0], [first]: TABLE_RELATIONS[relation]! };
  // Asked about either thing: the stated relation or its converse.
  const [asked, from] = rng.chance(0.5) ? [first, second] : [second, first];
  const offset: [number, number] = [where[asked]![0] - where[from]![0], where[asked]![1] - where[from]![1]];
  const answer = TABLE_ANSWERS[directionOf(offset, TABLE_RELATIONS)]!;
  return {
    template: "table",
    context: `The ${first} is ${relation} the ${second}.`,
    question: `Where is the ${asked} from the ${from}?`,
    answer,
    distractors: Object.values(TABLE_ANSWERS).filter((a) => a !== answer),
  };
}

/**
 * Three people on one line of the map, the middle one named in both relations, so the relation
 * between the other two follows; each relation is stated from either end.
 */
function map(rng: Rng): ItemDraft {
  const [low, middle, high] = rng.sample(NAMES, 3) as [string, string, string];
  const [up, down] = rng.pick([["north", "south"], ["east", "west"]] as const);
  const state = (upper: string, lower: string) => (rng.chance(0.5) ? `${upper} is ${up} of ${lower}.` : `${lower} is ${down} of ${upper}.`);
  const sentences = rng.shuffled([state(high, middle), state(middle, low)]);
  const step = COMPASS[up]!;
  const position: Record<string, [number, number]> = { [low]: [0, 0], [middle]: step, [high]: [2 * step[0], 2 * step[1]] };
  const [asked, from] = rng.chance(0.5) ? [high, low] : [low, high];
  const answer = directionOf([position[asked]![0] - position[from]![0], position[asked]![1] - position[from]![1]], COMPASS);
  return {
    template: "map",
    context: sentences.join(" "),
    question: `In which direction is ${asked} from ${from}?`,
    answer,
    distractors: Object.keys(COMPASS).filter((d) => d !== answer),
  };
}

export const spatial: AbilityGenerator = {
  ability: "Spatial Reasoning",
  slug: "spatial",
  summary: "relative positions on a table (one relation, read either way) and on a map (two relations chained)",
  templates: TEMPLATES,
  draft: (rng) => (rng.pick(TEMPLATES) === "table" ? table(rng) : map(rng)),
};
