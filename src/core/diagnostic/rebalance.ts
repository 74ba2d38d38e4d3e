// Answer positions rebalanced with as few changed items as possible: an item's answer moves from
// a position that holds more answers than its share to one that holds fewer, by swapping the two
// choices (the item asks the same question with the same choices, in another order).
//
// Position p's share is sum over items with more than p choices of 1/n_i (the expected count the
// health check tests against), rounded to whole items by largest remainders so the shares add up
// to the number of items. Each move takes one answer off an over-full position and gives it to an
// under-full one, so the number of moves is the total excess: no fewer items can reach the shares.
import type { HealthItem } from "./health";

export interface AnswerMove {
  /** The item's line in its file. */
  line: number;
  from: number;
  to: number;
}

/** The moves that bring every position to its share, fewest items first. */
export function answerRebalance(items: readonly HealthItem[]): AnswerMove[] {
  const positions = items.reduce((m, it) => Math.max(m, it.choices.length), 0);
  const target = shares(items, positions);
  const count = new Array<number>(positions).fill(0);
  for (const it of items) count[it.answer]!++;
  const excess = count.map((c, p) => c - target[p]!);

  // Candidates of each over-full position, spread over the file rather than bunched at its start.
  const order = items.map((_, i) => i).sort((a, b) => spread(a) - spread(b));
  const moves: AnswerMove[] = [];
  for (const i of order) {
    const item = items[i]!;
    const from = item.answer;
    if (excess[from]! <= 0) continue;
    let to = -1;
    for (let q = 0; q < item.choices.length; q++) if (excess[q]! < 0 && (to === -1 || excess[q]! < excess[to]!)) to = q;
    if (to === -1) continue;
    excess[from]!--;
    excess[to]!++;
    moves.push({ line: item.line, from, to });
  }
  return moves.sort((a, b) => a.line - b.line);
}

/** A low-discrepancy order of indexes (the golden-ratio sequence). */
function spread(i: number): number {
  return (i * 0.6180339887498949) % 1;
}

/** Whole-item shares of each position that add up to the number of items. */
function shares(items: readonly HealthItem[], positions: number): number[] {
  const expected = new Array<number>(positions).fill(0);
  for (const it of items) for (let p = 0; p < it.choices.length; p++) expected[p]! += 1 / it.choices.length;
  const whole = expected.map(Math.floor);
  let missing = items.length - whole.reduce((a, b) => a + b, 0);
  const byRemainder = expected.map((e, p) => ({ p, r: e - Math.floor(e) })).sort((a, b) => b.r - a.r || a.p - b.p);
  for (const { p } of byRemainder) {
    if (missing <= 0) break;
    whole[p]!++;
    missing--;
  }
  return whole;
}
