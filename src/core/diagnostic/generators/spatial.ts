// Spatial Reasoning: where one thing is from another, given where the other is from the first
// (the converse relation), on a table, or on a map where two compass steps (the same way or at
// right angles) are composed and turned around. Answers come from coordinates given to the things;
// the choices are directions of the item's frame.
import type { AbilityGenerator, ItemDraft } from "./generate";
import type { Rng } from "./rng";
import { NAMES } from "./words";

const TEMPLATES = ["table", "map"] as const;

export const OBJECTS = [
  "cup",
  "bowl",
  "lamp",
  "box",
  "book",
  "vase",
  "clock",
  "plant",
  "phone",
  "shoe",
  "jar",
  "bell",
  "hat",
  "key",
  "mug",
  "doll",
  "fork",
  "radio",
] as const;

/** Relations on a table, with the offset (x right, y up, z towards the viewer) from the second thing to the first. */
export const TABLE_RELATIONS: Record<string, [number, number, number]> = {
  "left of": [-1, 0, 0],
  "right of": [1, 0, 0],
  above: [0, 1, 0],
  below: [0, -1, 0],
  "in front of": [0, 0, 1],
  behind: [0, 0, -1],
};
/** The choices of table items: where a thing is, as a bare answer. */
export const TABLE_ANSWERS: Record<string, string> = {
  "left of": "to the left",
  "right of": "to the right",
  above: "above",
  below: "below",
  "in front of": "in front",
  behind: "behind",
};

export const COMPASS: Record<string, [number, number, number]> = { north: [0, 1, 0], south: [0, -1, 0], east: [1, 0, 0], west: [-1, 0, 0] };

type Vector = [number, number, number];

function directionOf(offset: Vector, names: Record<string, Vector>): string {
  const found = Object.entries(names).find(([, v]) => v.every((x, i) => x === Math.sign(offset[i]!)));
  if (!found) throw new Error(`no single direction for offset ${offset.join(",")}`);
  return found[0];
}

function minus(a: Vector, b: Vector): Vector {
  return [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
}

/** The stated relation of the first thing to the second; the question asks the second from the first. */
function table(rng: Rng): ItemDraft {
  const [first, second] = rng.sample(OBJECTS, 2) as [string, string];
  const relation = rng.pick(Object.keys(TABLE_RELATIONS));
  const where: Record<string, Vector> = { [second]: [0, 0, 0], [first]: TABLE_RELATIONS[relation]! };
  const answer = TABLE_ANSWERS[directionOf(minus(where[second]!, where[first]!), TABLE_RELATIONS)]!;
  return {
    template: "table",
    context: `The ${first} is ${relation} the ${second}.`,
    question: rng.pick([`Where is the ${second} from the ${first}?`, `From the ${first}, where is the ${second}?`]),
    answer,
    distractors: rng.sampleExcept(Object.values(TABLE_ANSWERS), 3, [answer]),
  };
}

/** Points of the compass between the four: where two steps at right angles lead. */
export const COMPASS_POINTS: Record<string, [number, number, number]> = {
  ...COMPASS,
  northeast: [1, 1, 0],
  northwest: [-1, 1, 0],
  southeast: [1, -1, 0],
  southwest: [-1, -1, 0],
};

/**
 * Three people on the map, two relations stated; asked: the last from the first. The relations go
 * the same way (the answer is the opposite direction) or at right angles (a point between two
 * directions), so the model must compose both steps and turn them around, not copy a word.
 */
function map(rng: Rng): ItemDraft {
  const [a, b, c] = rng.sample(NAMES.spatial, 3) as [string, string, string];
  const first = rng.pick(Object.keys(COMPASS));
  const second = rng.pick(Object.keys(COMPASS).filter((d) => COMPASS[d]!.some((x, i) => x !== -COMPASS[first]![i]!)));
  // a is `first` of b, and b is `second` of c.
  const position: Record<string, Vector> = { [c]: [0, 0, 0], [b]: COMPASS[second]!, [a]: plus(COMPASS[first]!, COMPASS[second]!) };
  const answer = directionOf(minus(position[c]!, position[a]!), COMPASS_POINTS);
  // Not turned around, and each single step turned around: the mistakes of a half-done composition.
  const mistakes = [
    directionOf(minus(position[a]!, position[c]!), COMPASS_POINTS),
    directionOf(minus([0, 0, 0], COMPASS[first]!), COMPASS_POINTS),
    directionOf(minus([0, 0, 0], COMPASS[second]!), COMPASS_POINTS),
  ];
  const distractors = [...new Set(mistakes)].filter((d) => d !== answer);
  return {
    template: "map",
    context: `${a} is ${first} of ${b}. ${b} is ${second} of ${c}.`,
    question: `In which direction is ${c} from ${a}?`,
    answer,
    distractors: [...distractors, ...rng.sampleExcept(Object.keys(COMPASS_POINTS), 3 - distractors.length, [answer, ...distractors])],
  };
}

function plus(a: Vector, b: Vector): Vector {
  return [a[0] + b[0], a[1] + b[1], a[2] + b[2]];
}

export const spatial: AbilityGenerator = {
  ability: "Spatial Reasoning",
  slug: "spatial",
  summary: "where a thing is from another, given the converse relation (table) or two compass steps composed (map)",
  templates: TEMPLATES,
  draft: (rng) => (rng.pick(TEMPLATES) === "table" ? table(rng) : map(rng)),
};
