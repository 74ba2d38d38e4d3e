// Failure signatures: the ways a profile goes wrong that the paper's analyses name, found in a
// finished run's report model and explained with the figures that trigger them, the threshold and
// the remedy (docs/method.md, "Reading a profile that went wrong").
//
// Each is read at the largest k the report shows, the k of the paper's main result: smaller k of
// a sweep are expected to be quieter, so judging them would only repeat what the largest says.
// Only the abilities' top sets are read (not the controls) and only tasks' cells (a group's cell
// repeats its tasks').
import { PAPER_K_RANGE } from "../config/parse";
import { STABLE_RANKING_JACCARD } from "../diagnostic/health";
import { PAPER_K_SWEEP } from "../config/parse";
import { formatFixed, formatK } from "./format";
import type { Finding, KSection, ProfileReport, ReportCell } from "./types";

/**
 * |AIS| below which a cell counts as no effect. The paper's smallest per-ability AIS on
 * Llama-3.1-8B-Instruct is about 0.08; on a benchmark of a few hundred items one or two documents
 * that flip move an AIS by about 0.01 to 0.03, so 0.05 is above that noise and below the paper's
 * smallest real effect. The same margin says when two abilities' AIS are the same and when a
 * negative AIS is more than noise.
 */
export const NO_EFFECT_AIS = 0.05;

/** "Most benchmarks": more than this share of a row's defined cells. */
export const MOST_BENCHMARKS = 0.5;

/** The k after `k` in the paper's sweep (each step x4); null from the paper's largest on. */
export function nextPaperK(k: number): number | null {
  return PAPER_K_SWEEP.find((s) => s > k * (1 + 1e-9)) ?? null;
}

/** Every signature found in a model's profiles (one per importance rule), in rule order. */
export function findSignatures(profiles: readonly ProfileReport[]): Finding[] {
  return profiles.flatMap((p) => {
    const s = p.sections.at(-1);
    return s ? signaturesAt(p, s) : [];
  });
}

interface TopRow {
  ability: string;
  cells: ReportCell[];
}

/** Each ability's top row with its tasks' defined cells. */
function topRows(s: KSection): TopRow[] {
  return s.rows
    .filter((r) => r.selection === "top" && r.ability !== null)
    .map((r) => ({ ability: r.ability!, cells: r.cells.filter((c) => c.ais !== null && !c.group) }));
}

function signaturesAt(p: ProfileReport, s: KSection): Finding[] {
  const rows = topRows(s);
  const base = { method: p.method, k: s.k, ...(p.candidate_set ? { candidate_set: p.candidate_set } : {}) };
  const nearZero = allNearZero(rows, s, base);
  return [
    ...fluencyCollapse(p, s, base),
    ...(nearZero ? [nearZero] : [...sameAis(rows, s, base), ...mostlyNegative(rows, base)]),
    ...unstableRankings(s, base),
    ...failingLabels(s, base),
  ];
}

type Base = Pick<Finding, "method" | "k">;

/**
 * Top sets whose zeroing cost the model its fluency (docs/method.md, "Fluency"): their AIS
 * measures broken text more than lost abilities. The paper's own reading: the wrong weights
 * (attention) were ablated, or k is too large.
 */
function fluencyCollapse(p: ProfileReport, s: KSection, base: Base): Finding[] {
  const model = p.fluency;
  const lost = s.rows.filter((r) => r.selection === "top" && r.ability !== null && r.fluency && !r.fluency.fluent);
  if (!model || lost.length === 0) return [];
  const all = p.candidate_set === "all";
  const previous = [...p.k].reverse().find((k) => k < s.k * (1 - 1e-9));
  return [
    {
      ...base,
      signature: "fluency-collapse",
      abilities: [],
      setting: ["ablation", all ? "candidates" : "k"],
      title: `Zeroing the top sets of ${lost.length} of ${s.rows.filter((r) => r.selection === "top" && r.ability !== null).length} abilities cost the model its fluency: their AIS measures broken text more than lost abilities.`,
      figures:
        `perplexity of the neutral text ${lost.map((r) => `${r.ability} ${formatFixed(r.fluency!.perplexity_ratio, 2)}x`).join(", ")} ` +
        `the unablated model's ${formatFixed(model.perplexity, 2)} at k = ${formatK(s.k)}${all ? " with candidates: all" : ""}`,
      threshold: `perplexity above ${model.max_perplexity_ratio} times the unablated model's (ablation.fluency.max_perplexity_ratio)`,
      remedy: all
        ? "ablate the MLP weights only (ablation.candidates: mlp), as the paper does: zeroing attention weights breaks the model"
        : `lower k${previous !== undefined ? ` (the sweep's previous, k = ${formatK(previous)}, is read the same way)` : ""}: this share of the MLP weights is too large for this model`,
    },
  ];
}

function allNearZero(rows: readonly TopRow[], s: KSection, base: Base): Finding | null {
  const cells = rows.flatMap((r) => r.cells.map((c) => ({ ability: r.ability, cell: c })));
  if (cells.length === 0) return null;
  const largest = cells.reduce((a, b) => (Math.abs(b.cell.ais!) > Math.abs(a.cell.ais!) ? b : a));
  if (Math.abs(largest.cell.ais!) >= NO_EFFECT_AIS) return null;
  const next = nextPaperK(s.k);
  return {
    ...base,
    signature: "ais-near-zero",
    abilities: [],
    title: "Every AIS is near zero: the ablation is too small to move any benchmark.",
    figures:
      `the largest |AIS| of ${rows.length} abilities' top sets on ${s.benchmarks.length} benchmarks at k = ${formatK(s.k)} ` +
      `(n = ${s.n}) is ${formatFixed(largest.cell.ais!, 3)} (${largest.ability} on ${largest.cell.benchmark})`,
    setting: ["ablation", "k"],
    threshold: `every |AIS| below ${NO_EFFECT_AIS}`,
    remedy:
      next !== null
        ? `raise k to the next of the paper's sweep, k = ${formatK(next)} (ablation.k)`
        : `k is already at the paper's largest (${formatK(PAPER_K_RANGE.max)}): the diagnostic datasets may not reach the weights the benchmarks use; check them with the diag.* codes`,
  };
}

/** The largest |AIS_a - AIS_b| over the benchmarks both define, how many they share, and on how many either has an effect. */
function difference(a: TopRow, b: TopRow): { largest: number; benchmark: string; shared: number; moved: number } {
  const of = new Map(b.cells.map((c) => [c.benchmark, c.ais!]));
  let largest = 0;
  let benchmark = "";
  let shared = 0;
  let moved = 0;
  for (const c of a.cells) {
    const other = of.get(c.benchmark);
    if (other === undefined) continue;
    shared++;
    if (Math.max(Math.abs(c.ais!), Math.abs(other)) >= NO_EFFECT_AIS) moved++;
    const d = Math.abs(c.ais! - other);
    if (d >= largest) [largest, benchmark] = [d, c.benchmark];
  }
  return { largest, benchmark, shared, moved };
}

/**
 * Abilities whose top sets move every benchmark alike, grouped (two abilities alike are in one
 * group; groups join through a shared ability). Rows near zero are the other signature's.
 */
function sameAis(rows: readonly TopRow[], s: KSection, base: Base): Finding[] {
  const group = rows.map((_, i) => i);
  const root = (i: number): number => (group[i] === i ? i : (group[i] = root(group[i]!)));
  for (let i = 0; i < rows.length; i++)
    for (let j = i + 1; j < rows.length; j++) {
      const d = difference(rows[i]!, rows[j]!);
      // alike on one benchmark they both move is a shared effect of that benchmark, not of two datasets
      if (d.moved < 2 || d.largest >= NO_EFFECT_AIS) continue;
      group[root(j)] = root(i);
    }
  const members = new Map<number, number[]>();
  rows.forEach((_, i) => members.set(root(i), [...(members.get(root(i)) ?? []), i]));
  return [...members.values()]
    .filter((m) => m.length > 1)
    .map((m) => {
      const names = m.map((i) => rows[i]!.ability);
      let widest = { largest: 0, benchmark: "", shared: 0 };
      for (const i of m) for (const j of m) if (i < j) widest = maxBy(widest, difference(rows[i]!, rows[j]!));
      const every = m.length === rows.length;
      return {
        ...base,
        signature: "same-ais" as const,
        abilities: names,
        title: every
          ? "Every ability has the same AIS: the diagnostic datasets are not specific to their abilities."
          : `${names.join(", ")} have the same AIS: their diagnostic datasets do not tell these abilities apart.`,
        figures:
          `on each of the ${widest.shared} benchmarks they share at k = ${formatK(s.k)} their AIS differ by at most ` +
          `${formatFixed(widest.largest, 3)} (on ${widest.benchmark})${overlapFigure(s, names)}`,
        threshold: `every difference below ${NO_EFFECT_AIS}, with an |AIS| of ${NO_EFFECT_AIS} or more on at least two benchmarks`,
        remedy:
          "make each dataset's items need its own ability and not the others' (docs/method.md, step 1); " +
          "check the datasets with the diag.* codes (near duplicates across abilities, surface cues)",
      };
    });
}

/** The wider of two differences; the later on a tie, so that a first pair replaces the empty start. */
function maxBy<T extends { largest: number }>(a: T, b: T): T {
  return b.largest >= a.largest ? b : a;
}

/** The smallest Jaccard index of the named abilities' top sets, when the run measured their overlap. */
function overlapFigure(s: KSection, names: readonly string[]): string {
  const o = s.overlap;
  if (!o) return "";
  const at = names.map((n) => o.abilities.indexOf(n));
  if (at.some((i) => i < 0)) return "";
  let least = 1;
  for (const i of at) for (const j of at) if (i !== j) least = Math.min(least, o.jaccard[i]![j]!);
  return `; their top sets share ${formatFixed(least, 3)} of their union or more (Jaccard index)`;
}

function mostlyNegative(rows: readonly TopRow[], base: Base): Finding[] {
  return rows.flatMap((r) => {
    // a cell whose bootstrap interval still holds 0 is noise: on a near-chance benchmark any top
    // set, and the random control, flip a few documents either way (the demo's contextual recall)
    // (the interval's own verdict: a star of a run with the tests is its q's, and never a saturated cell's)
    const negative = r.cells.filter((c) => c.ais! <= -NO_EFFECT_AIS && ((c.intervalExcludes0 ?? c.significant) || c.ci === null));
    if (r.cells.length < 2 || negative.length <= MOST_BENCHMARKS * r.cells.length) return [];
    const lowest = negative.reduce((a, b) => (b.ais! < a.ais! ? b : a));
    const helped = negative.reduce((sum, c) => sum + c.flips.wrongToRight, 0);
    return [
      {
        ...base,
        signature: "negative-ais" as const,
        abilities: [r.ability],
        title: `Removing ${r.ability} helps most benchmarks: its diagnostic dataset may carry a spurious correlation.`,
        figures:
          `AIS at or below -${NO_EFFECT_AIS} on ${negative.length} of ${r.cells.length} benchmarks at k = ${formatK(base.k)} ` +
          `(lowest ${formatFixed(lowest.ais!, 3)} on ${lowest.benchmark}; ${helped} documents flipped wrong to right)`,
        threshold: `AIS at or below -${NO_EFFECT_AIS}, its bootstrap interval below 0, on more than ${MOST_BENCHMARKS * 100}% of the benchmarks`,
        remedy:
          "look at the documents that flipped wrong to right in these cells (the report's negative cells); " +
          "check the dataset with the diag.* codes for answers that follow a surface cue (position, length) rather than the ability",
      },
    ];
  });
}

function unstableRankings(s: KSection, base: Base): Finding[] {
  return s.stability
    .filter((x) => x.jaccard < STABLE_RANKING_JACCARD)
    .map((x) => ({
      ...base,
      signature: "unstable-ranking" as const,
      abilities: [x.ability],
      title: `The ranking of ${x.ability} is unstable: which items were drawn decides much of its top set.`,
      figures:
        `the top n = ${x.n} ranked from two halves of its items (${x.halves[0]} + ${x.halves[1]}) share ${x.shared} weights, ` +
        `Jaccard index ${formatFixed(x.jaccard, 3)} at k = ${formatK(s.k)}`,
      threshold: `Jaccard index below ${STABLE_RANKING_JACCARD}`,
      remedy: "add items to the ability's diagnostic dataset (the paper has about 2,000 per ability) and run again",
    }));
}

function failingLabels(s: KSection, base: Base): Finding[] {
  return s.labels
    .filter((l) => !l.holds)
    .map((l) => ({
      ...base,
      signature: "label-fails" as const,
      abilities: [l.ability],
      benchmark: l.benchmark,
      title: `The label of ${l.benchmark} does not hold: ablating ${l.ability} hurts another benchmark more.`,
      figures:
        (l.ais === null ? `its AIS is undefined` : `AIS ${formatFixed(l.ais, 3)} on ${l.benchmark}`) +
        (l.largestOther ? `, ${formatFixed(l.largestOther.ais, 3)} on ${l.largestOther.benchmark}` : ""),
      threshold: `at k = ${formatK(s.k)} its AIS must exceed every AIS of the ${l.ability} row on a benchmark not labelled with it`,
      remedy:
        `either another ability drives ${l.benchmark} (change its label) or ${l.ability}'s dataset does not isolate it ` +
        "(check it with the diag.* codes); the benchmark's flipped documents show which items moved",
    }));
}
