// What the review mode shows of one item (the editor's review panel draws it): the item as the
// importance loss reads it, its choices with the marked answer and any correction, its decision,
// and the review's progress; and the moves between items that are still open.
import { labelAccuracy } from "../analysis/labelAccuracy";
import { isOpen, type ItemReview, type ReviewState } from "../diagnostic/review/states";
import { renderDiagnosticItem } from "../prompts/diagnosticText";

export interface ReviewCard {
  id: string;
  ability: string;
  /** 1-based line of the item in its dataset. */
  line: number;
  /** 0-based position among the reviewed items (the sample's, or all). */
  position: number;
  total: number;
  context: string;
  question: string;
  choices: { letter: string; text: string; marked: boolean; corrected: boolean }[];
  /** The text the importance loss reads for the item (plain; a chat model reads it through its template). */
  prompt: string;
  state: ReviewState;
  note?: string;
  reviewer?: string;
  time?: string;
  progress: ReviewProgress;
}

export interface ReviewProgress {
  /** Items with a decision that holds, of those to review. */
  done: number;
  total: number;
  counts: Record<ReviewState, number>;
  /** The labels' accuracy so far ("46 of 50 right, 92.0%"), null before any label is judged. */
  accuracy: { right: number; judged: number; low: number | null; high: number | null } | null;
  /** On a random sample (its size and seed), or every item. */
  sample?: { n: number; seed: number };
}

/** The items a review goes through: the sample's where there is one, else all, in file order. */
export function reviewQueue(reviews: readonly ItemReview[]): ItemReview[] {
  return reviews.filter((r) => r.sampled);
}

export function reviewProgress(queue: readonly ItemReview[], sample?: { n: number; seed: number }): ReviewProgress {
  const all = labelAccuracy("all", queue);
  const a = all.accuracy;
  return {
    done: queue.filter((r) => !isOpen(r)).length,
    total: queue.length,
    counts: all.counts,
    accuracy: a.n === 0 ? null : { right: a.k, judged: a.n, low: a.low, high: a.high },
    ...(sample ? { sample } : {}),
  };
}

export function reviewCard(queue: readonly ItemReview[], position: number, progress: ReviewProgress): ReviewCard {
  const r = queue[position]!;
  const { item, decision } = r;
  const corrected = r.state === "corrected" ? decision!.answer : undefined;
  return {
    id: item.id,
    ability: item.ability,
    line: item.line,
    position,
    total: queue.length,
    context: item.context,
    question: item.question,
    choices: item.choices.map((text, i) => ({
      letter: String.fromCharCode(65 + i),
      text,
      marked: i === item.answer,
      corrected: i === corrected,
    })),
    prompt: renderDiagnosticItem(item),
    state: r.state,
    ...(decision?.note ? { note: decision.note } : {}),
    ...(decision?.reviewer ? { reviewer: decision.reviewer } : {}),
    ...(decision?.time ? { time: decision.time } : {}),
    progress,
  };
}

/**
 * The position of the next (`step` 1) or previous (-1) open item after `from`, going round the
 * end; `from` itself when it is the only open one, undefined when none is open.
 */
export function nextOpen(queue: readonly ItemReview[], from: number, step: 1 | -1): number | undefined {
  const n = queue.length;
  for (let i = 1; i <= n; i++) {
    const at = (((from + step * i) % n) + n) % n;
    if (isOpen(queue[at]!)) return at;
  }
  return undefined;
}
