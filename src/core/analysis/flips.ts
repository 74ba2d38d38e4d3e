// The benchmark items behind a cell's AIS: which documents the ablation turned from right to
// wrong and from wrong to right. A negative AIS is a claim about interference, and the editor
// shows these items so a reader can judge it on the documents themselves.
import type { ScoredItem } from "./accuracy";
import { alignedVariant, predictionOf, type Metric } from "./ais";

export interface ItemScores {
  /** The choice the metric picks (argmax of log-likelihood, or of log-likelihood per byte for acc_norm). */
  prediction: number;
  /** Summed log-probability of each choice's continuation. */
  logprobs: number[];
}

export interface ItemFlip {
  /** Document index in the benchmark. */
  index: number;
  target: number;
  /** UTF-8 length of each choice, so a view can show the per-byte scores acc_norm compares. */
  choiceBytes: number[];
  before: ItemScores;
  after: ItemScores;
}

export interface CellFlips {
  metric: Metric;
  /** Right before the ablation, wrong after: the ability's contribution. */
  rightToWrong: ItemFlip[];
  /** Wrong before, right after: interference, what makes AIS negative. */
  wrongToRight: ItemFlip[];
}

/** Every item whose correctness under `metric` differs between baseline and ablated, in baseline order. */
export function cellFlips(baseline: readonly ScoredItem[], ablated: readonly ScoredItem[], metric: Metric): CellFlips {
  const after = alignedVariant(baseline, ablated);
  const flips: CellFlips = { metric, rightToWrong: [], wrongToRight: [] };
  baseline.forEach((item, i) => {
    const variant = after[i]!;
    const wasRight = predictionOf(item, metric) === item.target;
    const isRight = predictionOf(variant, metric) === item.target;
    if (wasRight === isRight) return;
    (wasRight ? flips.rightToWrong : flips.wrongToRight).push(itemFlip(item, variant, metric));
  });
  return flips;
}

function itemFlip(before: ScoredItem, after: ScoredItem, metric: Metric): ItemFlip {
  return {
    index: before.index,
    target: before.target,
    choiceBytes: before.choiceBytes,
    before: itemScores(before, metric),
    after: itemScores(after, metric),
  };
}

function itemScores(item: ScoredItem, metric: Metric): ItemScores {
  return { prediction: predictionOf(item, metric), logprobs: item.choices.map((choice) => choice.logprob) };
}
