// How reports name their rows and columns: a variant's row, a group's column and baseline row, the
// metrics of a section's title. Every format and the results view print these names alike.
import type { ChoiceMetric, Metric } from "../analysis/ais";
import type { VariantResult } from "../results/schema";
import type { BaselineRow, GroupMark } from "./types";

/** A group's name with how many tasks its score is over: "mmlu_stem (group: 19 tasks)", the metric after a semicolon when given. */
export function groupLabel(name: string, mark: GroupMark, metric?: Metric): string {
  return `${name} (group: ${taskCount(mark.tasks)}${metric ? `; ${metric}` : ""})`;
}

/** A baseline row's name as tables print it: a group's with its tasks and how they are averaged. */
export function baselineLabel(row: BaselineRow): string {
  return row.group ? `${row.name} (group: ${taskCount(row.group.tasks)}, ${row.group.averaging})` : row.name;
}

export function averagingOf(weightBySize: boolean): string {
  return weightBySize ? "weighted by documents" : "unweighted mean";
}

function taskCount(n: number): string {
  return `${n} task${n === 1 ? "" : "s"}`;
}

/** How a group's score is made, in words. */
export function groupDescription(mark: GroupMark): string {
  return `the mean of ${mark.tasks} tasks' scores, ${mark.weightBySize ? "weighted by their documents" : "each task counting once"}`;
}

/** Title text for the metrics of some columns. */
export function metricLabelOf(metrics: readonly Metric[], choiceMetric: ChoiceMetric): string {
  const distinct = [...new Set(metrics)];
  if (distinct.length === 0) return choiceMetric;
  if (distinct.length === 1) return distinct[0]!;
  return `${choiceMetric}; exact_match for generate_until benchmarks`;
}

/** Row name of a variant: the ability (top), "X (top, chunked)", "X (bottom)", "random (control)". */
export function variantLabel(v: Pick<VariantResult, "ability" | "selection">): string {
  if (v.selection === "random" || v.ability === null) return "random (control)";
  if (v.selection === "top_chunked") return `${v.ability} (top, chunked)`;
  return v.selection === "top" ? v.ability : `${v.ability} (bottom)`;
}
