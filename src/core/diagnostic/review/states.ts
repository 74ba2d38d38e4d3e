// Where each item of a dataset stands in its review: open, decided (and how), or changed since its
// decision. What the decisions say of the labels is analysis/labelAccuracy.ts's.
import type { DiagnosticItem } from "../item";
import { itemHash, type ReviewDecision, type ReviewFile } from "./reviewFile";

/** `changed`: decided, but the item's content is not what was reviewed; it is open again. */
export type ReviewState = "open" | "accepted" | "rejected" | "corrected" | "flagged" | "changed";

const STATE_OF_DECISION = { accept: "accepted", reject: "rejected", correct: "corrected", flag: "flagged" } as const;

export interface ItemReview {
  item: DiagnosticItem;
  state: ReviewState;
  /** The decision that holds (absent for open and changed items). */
  decision?: ReviewDecision;
  /** In the review's random sample (true for every item when there is none). */
  sampled: boolean;
}

/** Each item's state, in file order. */
export function itemReviews(items: readonly DiagnosticItem[], review: ReviewFile): ItemReview[] {
  const sampled = review.sample ? new Set(review.sample.ids) : undefined;
  return items.map((item) => {
    const d = review.decisions.get(item.id);
    const inSample = sampled ? sampled.has(item.id) : true;
    if (!d) return { item, state: "open", sampled: inSample };
    if (d.hash !== itemHash(item)) return { item, state: "changed", sampled: inSample };
    return { item, state: STATE_OF_DECISION[d.decision], decision: d, sampled: inSample };
  });
}

/** Still to review: undecided, or changed since its decision (and in the sample, when there is one). A flag is a decision to come back to, not open. */
export function isOpen(r: ItemReview): boolean {
  return r.sampled && (r.state === "open" || r.state === "changed");
}

/** A judgement of the label: accepted (right), rejected or corrected (wrong). Flags are undecided. */
export function judgesLabel(r: ItemReview): boolean {
  return r.state === "accepted" || r.state === "rejected" || r.state === "corrected";
}
