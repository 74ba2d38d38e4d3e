// The abilities of Benchmark Profiling (Kim et al., EMNLP 2025), spelt as the paper spells them.
// The set is open: users add their own. A name that is almost one of the known names is most
// likely a typo, and a typo silently splits one ability into two profiles, so it is worth a
// warning; a genuinely different name (Abductive Reasoning, Moral Reasoning) must not get one.
import { editDistance } from "../base/nearest";

export const PAPER_ABILITIES = [
  "Analogical Reasoning",
  "Commonsense & Causal Reasoning",
  "Contextual Recall",
  "Deductive Reasoning",
  "Inductive Reasoning",
  "Long-term Knowledge",
  "Quantitative Reasoning",
  "Semantic Relationship",
  "Spatial Reasoning",
  "Temporal Reasoning",
] as const;

export type PaperAbility = (typeof PAPER_ABILITIES)[number];

/**
 * The known name that `name` nearly matches, when `name` is not itself known: the same words
 * up to case, spacing, punctuation and "&"/"and", or one typo (insertion, deletion, substitution
 * or swap of neighbours), or two typos in a long name whose words start with the same letters.
 * The first-letter rule keeps real names such as "Abductive Reasoning" (two edits from
 * "Deductive Reasoning") from being flagged: typos rarely hit the first letter of a word.
 */
export function nearMissAbility(name: string, known: readonly string[] = PAPER_ABILITIES): string | undefined {
  if (known.includes(name)) return undefined;
  const n = normalizedAbility(name);
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const c = normalizedAbility(candidate);
    const d = c === n ? 0 : editDistance(n, c, { swaps: true });
    if (d < bestDistance && isPlausibleTypo(n, c, d)) [best, bestDistance] = [candidate, d];
  }
  return best;
}

function isPlausibleTypo(name: string, known: string, distance: number): boolean {
  if (distance <= 1) return true;
  return distance === 2 && known.length >= 12 && wordInitials(name) === wordInitials(known);
}

function normalizedAbility(name: string): string {
  return name
    .toLowerCase()
    .replace(/&/g, " and ")
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();
}

function wordInitials(name: string): string {
  return name
    .split(" ")
    .map((w) => w[0] ?? "")
    .join("");
}
