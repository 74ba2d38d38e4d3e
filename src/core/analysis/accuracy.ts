// Multiple-choice metrics with lm-eval's conventions (docs/method.md, step 4).

export interface ChoiceScore {
  logprob: number;
  tokens: number;
  greedy: boolean;
}

export interface ScoredItem {
  /** Never written: items without a kind are multiple choice (generated items say "generate_until"). */
  kind?: "multiple_choice";
  benchmark: string;
  index: number;
  target: number;
  choices: ChoiceScore[];
  /** UTF-8 length of each choice's text, the denominator of acc_norm. */
  choiceBytes: number[];
  /** argmax of the summed log-probability (ties to the lowest index). */
  prediction: number;
  /** argmax of the log-probability per byte. */
  predictionNorm: number;
  /**
   * The task's own score of the document (its Python process_results), in [0, 1]: it stands in
   * for correctness under acc. Absent for tasks lm-eval scores by acc and acc_norm.
   */
  score?: number;
  /** That score for a model that finds every choice equally likely: the document's chance. */
  chance?: number;
}

/** Index of the largest value; the first one wins ties, as numpy's argmax does in lm-eval. */
export function argmax(values: readonly number[]): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i]! > values[best]!) best = i;
  return best;
}

export function utf8Length(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

export function scoreItem(benchmark: string, index: number, target: number, choiceTexts: string[], choices: ChoiceScore[]): ScoredItem {
  const choiceBytes = choiceTexts.map(utf8Length);
  return {
    benchmark,
    index,
    target,
    choices,
    choiceBytes,
    prediction: argmax(choices.map((c) => c.logprob)),
    predictionNorm: argmax(choices.map((c, i) => c.logprob / Math.max(1, choiceBytes[i]!))),
  };
}

export interface BenchmarkAccuracy {
  items: number;
  acc: number;
  acc_norm: number;
  /** Mean over items of 1 / number of choices. */
  chance: number;
}

export function benchmarkAccuracy(items: readonly ScoredItem[]): BenchmarkAccuracy {
  const n = items.length;
  const mean = (f: (item: ScoredItem) => number) => (n === 0 ? 0 : items.reduce((s, item) => s + f(item), 0) / n);
  return {
    items: n,
    acc: mean((item) => item.score ?? (item.prediction === item.target ? 1 : 0)),
    acc_norm: mean((item) => (item.predictionNorm === item.target ? 1 : 0)),
    chance: mean((item) => item.chance ?? 1 / item.choices.length),
  };
}
