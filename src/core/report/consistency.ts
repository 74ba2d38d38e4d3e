// An ability measured with two diagnostic sets (a second entry with `of`; docs/method.md, "A
// second diagnostic set"): the two sets are ranked and ablated on their own, and their AIS rows
// are compared at one k: Spearman's rank correlation across the benchmarks, and the benchmarks
// where one set's interval excludes the other's AIS.
import { rankCorrelation } from "../analysis/compare";
import type { ModelProfile } from "../results/schema";
import type { ConsistencyCheck, ReportRow } from "./types";

/** One check per second set whose ability and set both have a top row at this k. */
export function consistencyChecks(abilities: ModelProfile["abilities"], rows: readonly ReportRow[]): ConsistencyCheck[] {
  const topOf = (name: string) => rows.find((r) => r.selection === "top" && r.ability === name);
  return abilities.flatMap((a) => {
    if (a.of === undefined) return [];
    const first = topOf(a.of);
    const second = topOf(a.name);
    if (!first || !second) return [];
    const pairs = first.cells.flatMap((cell, c) => {
      const other = second.cells[c]!;
      // A group's cell repeats its tasks': counting it would count them twice.
      return cell.ais === null || other.ais === null || cell.group ? [] : [{ cell, other }];
    });
    const excludes = (ci: { low: number; high: number } | null, value: number) => ci !== null && (value < ci.low || value > ci.high);
    return [
      {
        ability: a.of,
        set: a.name,
        benchmarks: pairs.length,
        rankCorrelation: rankCorrelation(
          pairs.map((p) => p.cell.ais!),
          pairs.map((p) => p.other.ais!),
        ),
        disagreements: pairs
          .filter(({ cell, other }) => excludes(cell.ci, other.ais!) || excludes(other.ci, cell.ais!))
          .map(({ cell, other }) => ({ benchmark: cell.benchmark, ais: cell.ais!, setAis: other.ais! })),
      },
    ];
  });
}
