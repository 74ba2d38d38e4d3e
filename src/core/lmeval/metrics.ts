// The metrics a benchmark is scored by, by lm-eval's names: what a task's `metric_list` and a
// group's `aggregate_metric_list` may name, and what every result and report lists per cell.

/** The metrics of multiple-choice benchmarks (lm-eval's loglikelihood scoring). */
export type ChoiceMetric = "acc" | "acc_norm";

/** Which lm-eval metric a benchmark is scored by: acc or acc_norm for multiple choice, exact_match for generate_until. */
export type Metric = ChoiceMetric | "exact_match";

/** Every metric a cell can have, in the order results and reports list them. */
export const ALL_METRICS: readonly Metric[] = ["acc", "acc_norm", "exact_match"];

/** The metrics a benchmark of this output type is scored by; the first is its main one. */
export function metricsOf(outputType: "multiple_choice" | "generate_until" | undefined, ownScore = false): Metric[] {
  if (outputType === "generate_until") return ["exact_match"];
  return ownScore ? ["acc"] : ["acc", "acc_norm"];
}
