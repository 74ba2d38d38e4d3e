// What a review says of a dataset's labels: the share found right, per ability and overall, with
// Wilson intervals (the figure the paper reports for its own sets, 92.2%), and two reviewers'
// agreement (Cohen's kappa), from the items' states (diagnostic/review/states.ts).
import { cohensKappa, wilsonProportion, type Kappa, type Proportion } from "./agreement";
import type { DiagnosticItem } from "../diagnostic/item";
import type { ReviewDecision, ReviewFile } from "../diagnostic/review/reviewFile";
import { itemReviews, judgesLabel, type ItemReview, type ReviewState } from "../diagnostic/review/states";

export interface LabelAccuracy {
  ability: string;
  /** Items in scope: the sample's, or all. */
  items: number;
  /** Scope items whose label a reviewer judged, and how many were right, with its Wilson interval. */
  accuracy: Proportion;
  counts: Record<ReviewState, number>;
}

export interface ReviewSummary {
  /** The random sample's size and seed; absent: every item is in scope, not a random sample. */
  sample?: { n: number; seed: number };
  abilities: LabelAccuracy[];
  overall: LabelAccuracy;
  /** Decisions of ids no item of the dataset has (deleted or renamed since). */
  unknownIds: string[];
}

/** The label accuracy of a review, per ability (in first-appearance order) and overall, at `confidence`. */
export function reviewSummary(items: readonly DiagnosticItem[], review: ReviewFile, confidence = 0.95): ReviewSummary {
  const reviews = itemReviews(items, review).filter((r) => r.sampled);
  const byAbility = new Map<string, ItemReview[]>();
  for (const r of reviews) {
    const group = byAbility.get(r.item.ability);
    if (group) group.push(r);
    else byAbility.set(r.item.ability, [r]);
  }
  const ids = new Set(items.map((i) => i.id));
  return {
    ...(review.sample ? { sample: { n: review.sample.ids.length, seed: review.sample.seed } } : {}),
    abilities: [...byAbility].map(([ability, rs]) => labelAccuracy(ability, rs, confidence)),
    overall: labelAccuracy("all", reviews, confidence),
    unknownIds: [...review.decisions.keys()].filter((id) => !ids.has(id)),
  };
}

/** The label accuracy of these reviews (the scope is the caller's: an ability's items, the sample's). */
export function labelAccuracy(ability: string, reviews: readonly ItemReview[], confidence = 0.95): LabelAccuracy {
  const counts: Record<ReviewState, number> = { open: 0, accepted: 0, rejected: 0, corrected: 0, flagged: 0, changed: 0 };
  for (const r of reviews) counts[r.state]++;
  const judged = reviews.filter(judgesLabel).length;
  return { ability, items: reviews.length, accuracy: wilsonProportion(counts.accepted, judged, confidence), counts };
}

export interface Disagreement {
  item: DiagnosticItem;
  a: ReviewDecision;
  b: ReviewDecision;
}

export interface ReviewAgreement {
  abilities: ({ ability: string } & Kappa)[];
  overall: Kappa;
  disagreements: Disagreement[];
}

/**
 * Cohen's kappa of two reviews over the items both judged (accept, reject, or correct to a given
 * choice: two corrections to different answers disagree), per ability and overall, and the items
 * they judged differently, in file order.
 */
export function reviewAgreement(items: readonly DiagnosticItem[], a: ReviewFile, b: ReviewFile): ReviewAgreement {
  const judgedA = itemReviews(items, a);
  const judgedB = itemReviews(items, b);
  const both = judgedA.flatMap((ra, i) => {
    const rb = judgedB[i]!;
    return judgesLabel(ra) && judgesLabel(rb) ? [{ item: ra.item, a: ra.decision!, b: rb.decision! }] : [];
  });
  const pair = (p: (typeof both)[number]) => [category(p.a), category(p.b)] as const;
  const abilities = [...new Set(both.map((p) => p.item.ability))].map((ability) => ({
    ability,
    ...cohensKappa(both.filter((p) => p.item.ability === ability).map(pair)),
  }));
  return {
    abilities,
    overall: cohensKappa(both.map(pair)),
    disagreements: both.filter((p) => category(p.a) !== category(p.b)),
  };
}

function category(d: ReviewDecision): string {
  return d.decision === "correct" ? `correct:${d.answer}` : d.decision;
}
