// Deductive Reasoning: categorical syllogisms over made-up kinds (so no knowledge can stand in for
// the inference), and modus ponens over two conditionals. The passage always states two rules,
// so the wrong rule's conclusion is among the choices: copying the first property seen fails.
import type { AbilityGenerator, ItemDraft } from "./generate";
import type { Rng } from "./rng";
import { NAMES } from "./words";

const TEMPLATES = ["trait", "skill", "condition"] as const;

/** What a kind looks like; no other generator uses these words (colours are Contextual Recall's). */
export const TRAITS = ["furry", "spotted", "striped", "scaly", "fluffy", "shiny", "bumpy", "smooth", "slimy", "hairy"] as const;

/** Made-up kinds: they mean nothing outside the item. */
export const KINDS = [
  "blim",
  "zorp",
  "dax",
  "wug",
  "fep",
  "tove",
  "glim",
  "snib",
  "plon",
  "krat",
  "mip",
  "yorb",
  "trel",
  "quon",
  "bix",
  "lurp",
] as const;
export const SKILLS = ["swim", "fly", "climb", "dig", "jump", "sing", "glow", "hide"] as const;
export const CONDITIONS = ["it rains", "it is sunny", "it snows", "it is windy", "it is hot", "it is cold"] as const;
export const ACTIONS = ["reads", "swims", "runs", "sleeps", "paints", "cooks", "sings", "dances", "skates", "knits"] as const;

function syllogism(rng: Rng, template: "trait" | "skill"): ItemDraft {
  const [k1, k2] = rng.sample(KINDS, 2) as [string, string];
  const name = rng.pick(NAMES.deductive);
  const pool: readonly string[] = template === "trait" ? TRAITS : SKILLS;
  const [p1, p2, ...others] = rng.sample(pool, 4) as [string, string, string, string];
  const rule = (kind: string, p: string) => (template === "trait" ? `All ${kind}s are ${p}.` : `All ${kind}s can ${p}.`);
  const rules = rng.shuffled([rule(k1, p1), rule(k2, p2)]);
  // The individual belongs to one kind; the other kind's property is the tempting wrong answer.
  const [kind, answer, wrong] = rng.chance(0.5) ? [k1, p1, p2] : [k2, p2, p1];
  return {
    template,
    context: `${rules.join(" ")} ${name} is a ${kind}.`,
    question: template === "trait" ? `What is ${name} like?` : `What can ${name} do?`,
    answer,
    distractors: [wrong, ...others],
  };
}

function condition(rng: Rng): ItemDraft {
  const name = rng.pick(NAMES.deductive);
  const [c1, c2] = rng.sample(CONDITIONS, 2) as [string, string];
  const [a1, a2, ...others] = rng.sample(ACTIONS, 4) as [string, string, string, string];
  const rules = rng.shuffled([`If ${c1}, ${name} ${a1}.`, `If ${c2}, ${name} ${a2}.`]);
  const [fact, answer, wrong] = rng.chance(0.5) ? [c1, a1, a2] : [c2, a2, a1];
  const stated = fact.charAt(0).toUpperCase() + fact.slice(1);
  return {
    template: "condition",
    context: `${rules.join(" ")} ${stated}.`,
    question: `What does ${name} do?`,
    answer,
    distractors: [wrong, ...others],
  };
}

export const deductive: AbilityGenerator = {
  ability: "Deductive Reasoning",
  slug: "deductive",
  summary: "syllogisms over made-up kinds (looks, skills) and modus ponens over two conditionals",
  templates: TEMPLATES,
  draft: (rng) => {
    const template = rng.pick(TEMPLATES);
    return template === "condition" ? condition(rng) : syllogism(rng, template);
  },
};
