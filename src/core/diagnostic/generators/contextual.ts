// Contextual Recall: a short passage binds two people to things or jobs, then one binding is
// asked for. Everything needed is in the passage and nowhere else (the bindings are random), and
// the other bindings of the passage are among the wrong choices, so only recalling the right
// sentence answers it.
import type { AbilityGenerator, ItemDraft } from "./generate";
import type { Rng } from "./rng";
import { COLORS, NAMES } from "./words";

const TEMPLATES = ["color", "owner", "job"] as const;

/** Things that take "a" before a colour. */
export const THINGS = [
  "kite",
  "ball",
  "bag",
  "bike",
  "boat",
  "sock",
  "coat",
  "drum",
  "scarf",
  "tent",
  "flag",
  "glove",
  "sled",
  "rope",
] as const;
/** Jobs that take "a". */
export const JOBS = [
  "baker",
  "nurse",
  "pilot",
  "farmer",
  "tailor",
  "judge",
  "miner",
  "chef",
  "guard",
  "clerk",
  "dancer",
  "singer",
  "potter",
  "barber",
  "plumber",
] as const;

/** People in a passage; the other wrong choices are of the same kind but not in the passage. */
const BOUND = 2;

function owned(rng: Rng, template: "color" | "owner"): ItemDraft {
  const people = rng.sample(NAMES.contextual, 4);
  const colors = rng.sample(COLORS, 4);
  const things = rng.sample(THINGS, BOUND);
  const context = things.map((thing, i) => `${people[i]} has a ${colors[i]} ${thing}.`).join(" ");
  const asked = rng.below(BOUND);
  if (template === "color") {
    return {
      template,
      context,
      question: `What color is ${people[asked]}'s ${things[asked]}?`,
      answer: colors[asked]!,
      distractors: colors.filter((_, i) => i !== asked),
    };
  }
  return {
    template,
    context,
    question: `Who has the ${colors[asked]} ${things[asked]}?`,
    answer: people[asked]!,
    distractors: people.filter((_, i) => i !== asked),
  };
}

function job(rng: Rng): ItemDraft {
  const people = rng.sample(NAMES.contextual, BOUND);
  const jobs = rng.sample(JOBS, 4);
  const asked = rng.below(BOUND);
  return {
    template: "job",
    context: people.map((p, i) => `${p} works as a ${jobs[i]}.`).join(" "),
    question: `What is ${people[asked]}'s job?`,
    answer: jobs[asked]!,
    distractors: jobs.filter((_, i) => i !== asked),
  };
}

export const contextual: AbilityGenerator = {
  ability: "Contextual Recall",
  slug: "contextual",
  summary: "two people bound to coloured things or jobs in a passage; one binding asked back",
  templates: TEMPLATES,
  draft: (rng) => {
    const template = rng.pick(TEMPLATES);
    return template === "job" ? job(rng) : owned(rng, template);
  },
};
