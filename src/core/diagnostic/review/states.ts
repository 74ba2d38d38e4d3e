// Where each item of a dataset stands in its review, and what the review says of the labels: the
// share found right, per ability and overall, with Wilson intervals (the figure the paper reports
// for its own sets, 92.2%), and two reviewers' agreement (Cohen's kappa).
import { cohensKappa, wilsonProportion, type Kappa, type Proportion } from "../../analysis/agreement";
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
function judgesLabel(r: ItemReview): boolean {
  return r.state === "accepted" || r.state === "rejected" || r.state === "corrected";
}

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
