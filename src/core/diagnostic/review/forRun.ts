// The items a run uses under a review (an ability's `review` in the config): corrected answers
// applied, rejected items left out, and with `accepted` only what a reviewer accepted or corrected.
import * as path from "node:path";
import { problemAt, type Problem } from "../../base/problems";
import { placedItem, type DiagnosticItem } from "../item";
import type { ReviewFile } from "./reviewFile";
import { itemReviews, type ItemReview } from "./states";

/**
 * `not_rejected` (the default where a review file exists): every item but the rejected ones;
 * `accepted`: the accepted and corrected ones only; `ignore`: the items as the dataset has them.
 */
export const REVIEW_USES = ["accepted", "not_rejected", "ignore"] as const;
export type ReviewUse = (typeof REVIEW_USES)[number];

export interface ReviewedItems {
  items: DiagnosticItem[];
  /** Each item's review, in file order (all of them, used or not). */
  reviews: ItemReview[];
  leftOut: number;
  corrected: number;
  /** A correction naming a choice the item does not have: an error at its line of the review file. */
  problems: Problem[];
}

export function reviewedItems(
  items: readonly DiagnosticItem[],
  review: ReviewFile,
  use: Exclude<ReviewUse, "ignore">,
  reviewFile: string,
): ReviewedItems {
  const reviews = itemReviews(items, review);
  const problems: Problem[] = [];
  const used: DiagnosticItem[] = [];
  let corrected = 0;
  for (const r of reviews) {
    if (r.state === "rejected") continue;
    if (use === "accepted" && r.state !== "accepted" && r.state !== "corrected") continue;
    if (r.state !== "corrected") {
      used.push(r.item);
      continue;
    }
    const answer = r.decision!.answer!;
    if (answer >= r.item.choices.length) {
      problems.push(
        problemAt(
          { file: reviewFile, line: r.decision!.line || 1, column: 1 },
          "review.answer-out-of-range",
          `${path.basename(reviewFile)} corrects item ${r.item.id} to answer ${answer}, but it has ${r.item.choices.length} choices (0 to ${r.item.choices.length - 1})`,
        ),
      );
      continue;
    }
    corrected++;
    used.push(placedItem({ ...r.item, answer }, r.item.line));
  }
  return { items: used, reviews, leftOut: items.length - used.length, corrected, problems };
}

/**
 * The reviews behind an ability's items as results.json records them (`abilities[].review`): how
 * they were used, which review files (by SHA-256 of their text), what they changed, and the label
 * accuracy they measured; the ability's `sequences` is the number of items used. Absent: no review
 * file, or `review: ignore`.
 */
export interface ReviewRecord {
  use: "accepted" | "not_rejected";
  files: { file: string; sha256: string }[];
  left_out: number;
  corrected: number;
  /** Labels found right of those reviewed, with a 95% Wilson interval (null bounds when none was reviewed); `sample`: on a random sample. */
  label_accuracy: { right: number; reviewed: number; low: number | null; high: number | null; sample: boolean };
}
