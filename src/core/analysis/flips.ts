// The benchmark items behind a cell's AIS: which documents the ablation turned from right to
// wrong and from wrong to right. A negative AIS is a claim about interference, and the editor
// shows these items so a reader can judge it on the documents themselves: for multiple choice
// the choices' scores before and after, for generation the generated text and its answer.
import type { ScoredItem } from "./accuracy";
import { alignedVariant, isCorrect, predictionOf, type Metric } from "./ais";
import { isGenerated, type BenchmarkItem, type GeneratedItem } from "./generation";

export interface ItemScores {
  /** The choice the metric picks (argmax of log-likelihood, or of log-likelihood per byte for acc_norm). */
  prediction: number;
  /** Summed log-probability of each choice's continuation. */
  logprobs: number[];
}

/** A multiple-choice document that flipped. */
export interface ItemFlip {
  /** Never set: flips without a kind are multiple choice. */
  kind?: "multiple_choice";
  /** Document index in the benchmark. */
  index: number;
  target: number;
  /** UTF-8 length of each choice, so a view can show the per-byte scores acc_norm compares. */
  choiceBytes: number[];
  before: ItemScores;
  after: ItemScores;
}

export interface GenerationOutcome {
  /** The generation cut at the first stop string. */
  response: string;
  /** What the benchmark's (first) filter extracted from it. */
  answer: string;
}

/** A generated document that flipped: its text and answer before and after the ablation. */
export interface GenerationFlip {
  kind: "generate_until";
  index: number;
  target: string;
  before: GenerationOutcome;
  after: GenerationOutcome;
}

export type AnyFlip = ItemFlip | GenerationFlip;

export interface CellFlips<F extends AnyFlip = ItemFlip> {
  metric: Metric;
  /** Right before the ablation, wrong after: the ability's contribution. */
  rightToWrong: F[];
  /** Wrong before, right after: interference, what makes AIS negative. */
  wrongToRight: F[];
}

/** Every item whose correctness under `metric` differs between baseline and ablated, in baseline order. */
export function cellFlips(baseline: readonly ScoredItem[], ablated: readonly ScoredItem[], metric: Metric): CellFlips<ItemFlip>;
export function cellFlips(baseline: readonly BenchmarkItem[], ablated: readonly BenchmarkItem[], metric: Metric): CellFlips<AnyFlip>;
export function cellFlips(baseline: readonly BenchmarkItem[], ablated: readonly BenchmarkItem[], metric: Metric): CellFlips<AnyFlip> {
  const after = alignedVariant(baseline, ablated);
  const flips: CellFlips<AnyFlip> = { metric, rightToWrong: [], wrongToRight: [] };
  baseline.forEach((item, i) => {
    const variant = after[i]!;
    const wasRight = isCorrect(item, metric);
    const isRight = isCorrect(variant, metric);
    if (wasRight === isRight) return;
    (wasRight ? flips.rightToWrong : flips.wrongToRight).push(itemFlip(item, variant, metric));
  });
  return flips;
}

function itemFlip(before: BenchmarkItem, after: BenchmarkItem, metric: Metric): AnyFlip {
  if (isGenerated(before) || isGenerated(after)) {
    const [b, a] = [before as GeneratedItem, after as GeneratedItem];
    return { kind: "generate_until", index: b.index, target: b.target, before: outcome(b), after: outcome(a) };
  }
  if (metric === "exact_match") throw new Error("exact_match flips need generated items");
  return {
    index: before.index,
    target: before.target,
    choiceBytes: before.choiceBytes,
    before: itemScores(before, metric),
    after: itemScores(after, metric),
  };
}

function outcome(item: GeneratedItem): GenerationOutcome {
  return { response: item.response, answer: item.answer };
}

function itemScores(item: ScoredItem, metric: "acc" | "acc_norm"): ItemScores {
  return { prediction: predictionOf(item, metric), logprobs: item.choices.map((choice) => choice.logprob) };
}
