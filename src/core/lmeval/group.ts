// lm-eval's group files (`group: <name>` with a `task:` list) can say how lm-eval scores the group
// as a whole: `aggregate_metric_list`, one entry per metric, e.g.
//
//     aggregate_metric_list:
//       - metric: acc
//         aggregation: mean
//         weight_by_size: true
//
// lm-eval reports the group's `metric,filter` as the mean of that score over every task under the
// group (nested groups flattened) that reports it, weighted by each task's number of documents when
// weight_by_size is true; a group without the key gets no score of its own. Defaults are lm-eval
// 0.4's: weight_by_size false, filter_list `none` (the filter of every multiple-choice metric).
import { ALL_METRICS, type Metric } from "./metrics";
import type { TextFiles } from "../base/fsutil";
import { errorsOf, fileProblem, notUtf8Problem, problemAt, type Problem, type ProblemPlace } from "../base/problems";
import { FUNCTION_TAG, parseYamlSource, type YamlSource } from "../base/yamlSource";
import type { Task } from "./task";

/** One entry of aggregate_metric_list as the group file writes it. */
export interface AggregateSpec {
  metric: string;
  /** filter_list: the filter pipelines whose `metric,filter` scores are aggregated. */
  filters: string[];
  weightBySize: boolean;
  /** Where the entry's `metric` is, for what is said about the entry. */
  place: ProblemPlace;
}

/** A score the profiler computes for a group: one metric under one filter, over the tasks that report it. */
export interface GroupAggregate {
  metric: Metric;
  /** The filter pipeline (lm-eval's `metric,filter`): `none` for multiple choice. */
  filter: string;
  weightBySize: boolean;
  /** The group's tasks scored by this metric under this filter (benchmark names): what the mean is over. */
  tasks: string[];
}

/** A group of the config's benchmarks that lm-eval scores as a whole. */
export interface ResolvedGroup {
  name: string;
  /** The group's file. */
  file: string;
  /** Every task under the group, nested groups flattened, by benchmark name, each once. */
  tasks: string[];
  /** One per metric, in aggregate_metric_list order; never empty. */
  aggregates: GroupAggregate[];
}

const ENTRY_KEYS = ["metric", "aggregation", "weight_by_size", "filter_list"];

/** The aggregate_metric_list of a group file, checked; problems point into the file. */
export async function readAggregateSpecs(file: string, files: TextFiles): Promise<{ specs: AggregateSpec[]; problems: Problem[] }> {
  let text: string;
  try {
    text = await files.read(file);
  } catch (e) {
    return {
      specs: [],
      problems: [notUtf8Problem(file, e, "the group file") ?? fileProblem(file, "file.unreadable", `cannot read the group file: ${file}`)],
    };
  }
  const source = parseYamlSource(text, file);
  if (errorsOf(source.problems).length > 0 || !isRecord(source.value)) return { specs: [], problems: source.problems };
  const read = aggregateSpecsOf(source.value.aggregate_metric_list, source);
  return { specs: read.specs, problems: [...source.problems, ...read.problems] };
}

/** lm-eval takes one mapping or a list of them; each entry as lm-eval's AggMetricConfig reads it. */
function aggregateSpecsOf(raw: unknown, source: YamlSource): { specs: AggregateSpec[]; problems: Problem[] } {
  const problems: Problem[] = [];
  if (raw === undefined || raw === null) return { specs: [], problems };
  const listed = Array.isArray(raw);
  const entries = listed ? raw : [raw];
  const specs: AggregateSpec[] = [];
  entries.forEach((entry, i) => {
    const at = listed ? ["aggregate_metric_list", i] : ["aggregate_metric_list"];
    const invalid = (key: string[], message: string) => problems.push(source.at([...at, ...key], "task.invalid-value", message));
    if (!isRecord(entry))
      return void invalid([], "an aggregate_metric_list entry must be a mapping {metric, aggregation, weight_by_size, filter_list}");
    for (const key of Object.keys(entry)) {
      if (!ENTRY_KEYS.includes(key))
        problems.push(
          source.at(
            [...at, key],
            "task.invalid-value",
            `\`${key}\` is not a key of an aggregate_metric_list entry (${ENTRY_KEYS.join(", ")})`,
            { on: "key" },
          ),
        );
    }
    const { metric, aggregation = "mean", weight_by_size: weightBySize = false, filter_list: filterList = "none" } = entry;
    if (metric === undefined) problems.push(source.at(at, "task.missing-key", "an aggregate_metric_list entry needs `metric`"));
    else if (typeof metric !== "string") invalid(["metric"], "`metric` must be a metric's name");
    if (isRecord(aggregation) && FUNCTION_TAG in aggregation) {
      problems.push(
        source.at(
          [...at, "aggregation"],
          "task.python-function",
          "a `!function` aggregation of a group does not run here: only `mean` is computed",
        ),
      );
    } else if (aggregation !== "mean")
      invalid(["aggregation"], "only `aggregation: mean` is supported (lm-eval's only predefined aggregation of a group)");
    if (typeof weightBySize !== "boolean") invalid(["weight_by_size"], "`weight_by_size` must be true or false");
    const filters =
      typeof filterList === "string"
        ? [filterList]
        : Array.isArray(filterList) && filterList.every((f) => typeof f === "string")
          ? (filterList as string[])
          : undefined;
    if (!filters || filters.length === 0) invalid(["filter_list"], "`filter_list` must be a filter's name or a list of names");
    if (typeof metric === "string" && aggregation === "mean" && typeof weightBySize === "boolean" && filters && filters.length > 0) {
      specs.push({ metric, filters, weightBySize, place: source.place([...at, "metric"]) });
    }
  });
  return { specs, problems };
}

/**
 * The group's scores: per entry and filter, the tasks that report `metric,filter` (lm-eval
 * aggregates over those only). One score per metric: a later filter, or a repeated metric, of
 * the same metric gets a warning. So does an entry no task reports, which has no score.
 */
export function groupAggregates(
  name: string,
  specs: readonly AggregateSpec[],
  tasks: readonly { name: string; task: Task }[],
): { aggregates: GroupAggregate[]; problems: Problem[] } {
  const aggregates: GroupAggregate[] = [];
  const problems: Problem[] = [];
  for (const spec of specs) {
    for (const filter of spec.filters) {
      const scored = tasks.filter((t) => reports(t.task, spec.metric, filter)).map((t) => t.name);
      const key = `\`${spec.metric},${filter}\``;
      if (scored.length === 0) {
        problems.push(
          problemAt(
            spec.place,
            "task.group-aggregate",
            `no task of group \`${name}\` here reports ${key}, so the group has no ${key} score`,
          ),
        );
        continue;
      }
      const same = aggregates.find((a) => a.metric === spec.metric);
      if (same) {
        problems.push(
          problemAt(
            spec.place,
            "task.group-aggregate",
            `group \`${name}\` is scored by \`${same.metric},${same.filter}\` already; ${key} is left out (one score per metric)`,
          ),
        );
        continue;
      }
      aggregates.push({ metric: spec.metric as Metric, filter, weightBySize: spec.weightBySize, tasks: scored });
    }
  }
  return { aggregates, problems };
}

/** Whether lm-eval's results of the task have `metric,filter`: a multiple-choice metric under `none`, exact_match under one of its filters. */
function reports(task: Task, metric: string, filter: string): boolean {
  if (!(ALL_METRICS as readonly string[]).includes(metric)) return false;
  if (task.outputType === "generate_until") return metric === "exact_match" && task.filters.some((f) => f.name === filter);
  return metric !== "exact_match" && filter === "none" && task.metrics.includes(metric);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
