// The config's ability labels of benchmarks (a benchmark's `ability`) against the measured AIS
// (docs/method.md): a label holds at one k when ablating the labelled ability's top set hurts the
// benchmark more than it hurts any benchmark without that label.
import type { ModelResults } from "../results/schema";
import type { LabelCheck, ReportRow } from "./types";

/** The checks of the labelled benchmarks, in benchmark order, from the rows of one k. */
export function labelChecks(model: ModelResults, rows: readonly ReportRow[]): LabelCheck[] {
  const labelOf = new Map(model.benchmarks.map((b) => [b.name, b.ability]));
  return model.benchmarks.flatMap((b) => {
    if (b.ability === undefined) return [];
    const row = rows.find((r) => r.selection === "top" && r.ability === b.ability);
    const ais = row?.cells.find((c) => c.benchmark === b.name)?.ais ?? null;
    let largestOther: LabelCheck["largestOther"] = null;
    for (const c of row?.cells ?? []) {
      // A group holds the labelled benchmark itself, so it is no other benchmark.
      if (c.ais === null || c.group || labelOf.get(c.benchmark) === b.ability) continue;
      if (largestOther === null || c.ais > largestOther.ais) largestOther = { benchmark: c.benchmark, ais: c.ais };
    }
    return [
      {
        benchmark: b.name,
        ability: b.ability,
        ais,
        largestOther,
        holds: ais !== null && (largestOther === null || ais > largestOther.ais),
      },
    ];
  });
}
