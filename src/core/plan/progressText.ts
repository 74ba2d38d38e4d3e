// The words of a run's progress, the same wherever it shows: the notification, the status bar and
// the Runs view (and the CLI). What the run does now, with the variant being scored named as the
// results name it ("Semantic Relationship · top · k 0.01024 · signed"); how far that step is; and the
// whole run's share and time left, only once a pace is measured (estimate.ts).
import type { Selection } from "../config/types";
import { describeOverall, type RunOverall } from "./estimate";

/** An ablation of a profile: an ability's top set (under a rule) at k, or the random control (ability null). */
export interface VariantRef {
  ability: string | null;
  /** The importance rule; absent for the random control. */
  method?: string;
  selection: Selection;
  k: number;
  /** The random control's draw (from 0) and how many the run draws, where it draws several (`ablation.random_draws`). */
  draw?: number;
  draws?: number;
}

export interface RunProgress {
  model: string;
  phase: string;
  done: number;
  total: number;
  /** The ability's name, in the `importance` and `rank` phases. */
  ability?: string;
  /** In the `score` phase of a profile: the variant being scored (the runner's `variant`, its ability by name). */
  variant?: VariantRef;
  /** The model's variants done and in all, as the runner last counted them. */
  variants?: { done: number; total: number };
  /** The whole run's share done and the time it has left (estimate.ts). */
  overall?: RunOverall;
}

export interface VariantDone extends VariantRef {
  model: string;
  n: number;
  /** Read back from an earlier, interrupted run of the same job. */
  resumed: boolean;
}

/** What the runner's phases are doing, in words; a phase not listed is shown as it is named. */
const PHASE_WORDS: Record<string, string> = {
  load: "loading the weights",
  baseline: "baseline",
  importance: "importance",
  rank: "ranking",
  score: "scoring",
  variants: "variants",
  merge: "merging the shards",
  results: "writing the results",
};

/** "Semantic Relationship · top · k 0.01024 · signed", "random control · k 0.01024", "random control · draw 2 of 5 · k 0.01024". */
export function variantName(v: VariantRef): string {
  if (v.ability === null)
    return v.draw !== undefined && v.draws !== undefined && v.draws > 1
      ? `random control · draw ${v.draw + 1} of ${v.draws} · k ${v.k}`
      : `random control · k ${v.k}`;
  return `${v.ability} · ${v.selection} · k ${v.k}${v.method ? ` · ${v.method}` : ""}`;
}

/** What the run does now: "importance · Spatial Reasoning", the variant being scored, "baseline". */
export function progressStep(p: Pick<RunProgress, "phase" | "ability" | "variant">): string {
  if (p.phase === "score" && p.variant) return variantName(p.variant);
  const phase = PHASE_WORDS[p.phase] ?? p.phase;
  return p.ability === undefined ? phase : `${phase} · ${p.ability}`;
}

/**
 * The one line of a run's progress: "demo-llama · variant 5/24: Semantic Relationship · top · k
 * 0.01024 · signed · 2144/2750 items · 34%, elapsed 1 min 02 s, about 2 min 10 s left". The share
 * stops at 99% until the run has ended, and is left out until a pace is measured.
 */
export function progressText(p: RunProgress): string {
  const count = p.total > 0 ? ` ${p.done}/${p.total}` : "";
  const variant = p.variant && p.phase === "score";
  const ordinal = variant && p.variants ? `variant ${Math.min(p.variants.done + 1, p.variants.total)}/${p.variants.total}: ` : "";
  const step = variant ? `${ordinal}${progressStep(p)} ·${count} items` : `${progressStep(p)}${count}`;
  if (!p.overall || p.phase === "results") return `${p.model} · ${step}`;
  const share = p.overall.remainingSeconds === undefined ? "" : `${Math.min(99, Math.floor(100 * p.overall.fraction))}%, `;
  return `${p.model} · ${step} · ${share}${describeOverall(p.overall)}`;
}

/** The run's share done: the whole run's when estimated, else the step's. */
export function runShare(p: RunProgress): number {
  return p.overall?.remainingSeconds !== undefined ? p.overall.fraction : p.total > 0 ? p.done / p.total : 0;
}

/** `variant Spatial Reasoning · top · k 0.01 · signed, n 351`, and whether an earlier run had finished it. */
export function finishedVariantLabel(v: VariantDone): string {
  return `variant ${variantName(v)}, n ${v.n}${v.resumed ? " (resumed)" : ""}`;
}
