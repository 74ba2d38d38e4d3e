// The registry of diagnostic item generators: one per ability of the paper, keyed by the paper's
// ability name. Each makes English multiple-choice items whose answer it computes, so every
// label is right by construction (the paper's LLM-written items were 92.2% right).
import { nearMissAbility, PAPER_ABILITIES, type PaperAbility } from "../paperAbilities";
import { editDistance } from "../../base/nearest";
import { analogical } from "./analogical";
import { commonsense } from "./commonsense";
import { contextual } from "./contextual";
import { deductive } from "./deductive";
import type { DiagnosticItemFields } from "../item";
import { generateItems, type AbilityGenerator, type GenerateOptions } from "./generate";
import { inductive } from "./inductive";
import { knowledge } from "./knowledge";
import { quantitative } from "./quantitative";
import { semantic } from "./semantic";
import { spatial } from "./spatial";
import { temporal } from "./temporal";

export { GeneratorCapacityError, generateItems, itemKey, toJsonl, type AbilityGenerator, type GenerateOptions } from "./generate";

export const GENERATORS: Readonly<Record<PaperAbility, AbilityGenerator>> = {
  "Analogical Reasoning": analogical,
  "Commonsense & Causal Reasoning": commonsense,
  "Contextual Recall": contextual,
  "Deductive Reasoning": deductive,
  "Inductive Reasoning": inductive,
  "Long-term Knowledge": knowledge,
  "Quantitative Reasoning": quantitative,
  "Semantic Relationship": semantic,
  "Spatial Reasoning": spatial,
  "Temporal Reasoning": temporal,
};

/** The generators in the paper's order of abilities. */
export const ALL_GENERATORS: readonly AbilityGenerator[] = PAPER_ABILITIES.map((a) => GENERATORS[a]);

export type GeneratorLookup = { generator: AbilityGenerator } | { error: string };

/**
 * The generator for a name as a user types it: the paper's name ("Spatial Reasoning"), any case,
 * or the generator's slug ("spatial"); otherwise an error that suggests the nearest name.
 */
export function findGenerator(name: string): GeneratorLookup {
  const wanted = name.trim().toLowerCase();
  const found = ALL_GENERATORS.find((g) => g.ability.toLowerCase() === wanted || g.slug === wanted);
  if (found) return { generator: found };
  const slug = ALL_GENERATORS.find((g) => editDistance(wanted, g.slug, { swaps: true }) <= 2)?.slug;
  const suggestion = nearMissAbility(name) ?? slug;
  const known = ALL_GENERATORS.map((g) => `${g.slug} (${g.ability})`).join(", ");
  return { error: `no generator for \`${name}\`${suggestion ? `: did you mean \`${suggestion}\`?` : ""} (generators: ${known})` };
}

/** Items of several generators, one after the other, each from its own stream of `seed`. */
export function generateAbilities(generators: readonly AbilityGenerator[], options: GenerateOptions): DiagnosticItemFields[] {
  return generators.flatMap((g) => generateItems(g, options));
}
