// What the review panel and the extension say to each other (both sides import this file).
import type { ReviewCard } from "../src/core/language/reviewCard";

export const REVIEW_VIEW_TYPE = "benchmarkProfiler.review";

/** accept, reject, flag (asks for a note), undo: the current item; the moves: to the next or previous open item, or any item. */
export type ReviewAction = "accept" | "reject" | "flag" | "undo" | "next" | "previous" | "nextItem" | "previousItem";

/** From the panel: a key or a button. */
export type FromReviewView = { type: "ready" } | { type: "action"; action: ReviewAction } | { type: "correct"; answer: number };

/** To the panel: the item to show, or why there is none. */
export type ToReviewView =
  { type: "card"; card: ReviewCard; dataset: string; reviewFile: string; allDone: boolean } | { type: "empty"; message: string };
