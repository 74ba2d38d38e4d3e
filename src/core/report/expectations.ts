// What a benchmark was expected to need (the config's `expects`) against what its profile measured
// (docs/method.md, "Expected abilities"): per benchmark at one k, which expected abilities show
// (a positive starred AIS: its q over the table below the threshold, or before the tests its
// interval excluding 0; report/stars.ts), which unexpected ones do, and with weights how alike
// the weights and the AIS rank the abilities.
import { rankCorrelation } from "../analysis/compare";
import type { BenchmarkResult } from "../results/schema";
import type { ExpectationCheck, ReportRow } from "./types";

/**
 * The checks of the benchmarks that have `expects`, from the top rows of one k. A second
 * diagnostic set's row (`secondSets`) measures an ability already counted: it is neither expected
 * nor unexpected, and stays out of the weights' correlation.
 */
export function expectationChecks(
  benchmarks: readonly BenchmarkResult[],
  rows: readonly ReportRow[],
  secondSets: ReadonlySet<string> = new Set(),
): ExpectationCheck[] {
  const top = rows.filter((r) => r.selection === "top" && r.ability !== null && !secondSets.has(r.ability));
  return benchmarks.flatMap((b) => {
    if (!b.expects || b.expects.length === 0) return [];
    const cellOf = (ability: string) => top.find((r) => r.ability === ability)?.cells.find((c) => c.benchmark === b.name);
    const shows = (ability: string) => {
      const cell = cellOf(ability);
      return cell !== undefined && cell.ais !== null && cell.ais > 0 && cell.significant;
    };
    const expectedNames = new Set(b.expects.map((e) => e.ability));
    const weighted = b.expects.some((e) => e.weight !== undefined);
    const defined = top.flatMap((r) => {
      const ais = cellOf(r.ability!)?.ais ?? null;
      return ais === null ? [] : [{ ability: r.ability!, ais }];
    });
    const weightOf = new Map(b.expects.map((e) => [e.ability, e.weight ?? 0]));
    return [
      {
        benchmark: b.name,
        expected: b.expects.map((e) => {
          const cell = cellOf(e.ability);
          return { ability: e.ability, weight: e.weight ?? null, ais: cell?.ais ?? null, significant: cell?.significant ?? false };
        }),
        confirmed: b.expects.map((e) => e.ability).filter(shows),
        unexpected: top.map((r) => r.ability!).filter((a) => !expectedNames.has(a) && shows(a)),
        rankCorrelation: weighted
          ? rankCorrelation(
              defined.map((d) => weightOf.get(d.ability) ?? 0),
              defined.map((d) => d.ais),
            )
          : null,
      },
    ];
  });
}
