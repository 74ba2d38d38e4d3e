// The abilities of Benchmark Profiling (Kim et al., EMNLP 2025), spelt as the paper spells them.
// The set is open: users add their own. A name that is almost one of the known names is most
// likely a typo, and a typo silently splits one ability into two profiles, so it is worth a
// warning; a genuinely different name (Abductive Reasoning, Moral Reasoning) must not get one.

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
    const d = c === n ? 0 : typoDistance(n, c);
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
  return name.split(" ").map((w) => w[0] ?? "").join("");
}

/** Optimal string alignment distance: Levenshtein plus swaps of adjacent characters. */
export function typoDistance(a: string, b: string): number {
  const rows: number[][] = [Array.from({ length: b.length + 1 }, (_, j) => j)];
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(rows[i - 1]![j]! + 1, row[j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, rows[i - 2]![j - 2]! + 1);
      row.push(d);
    }
    rows.push(row);
  }
  return rows[a.length]![b.length]!;
}
