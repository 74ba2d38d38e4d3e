// The demo's validity check: ablating an ability should hurt its own held-out benchmark more than
// any other benchmark. In the AIS matrix (abilities down, benchmarks across) at one k, the cell of
// an ability and its single-ability benchmark (the "diagonal") should be the largest of its row.
import type { Metric } from "../analysis/ais";
import type { ModelResults } from "../results/store";

export interface DiagonalRow {
  ability: string;
  /** The ability's own benchmark. */
  benchmark: string;
  /** AIS of the ability on its own benchmark; null when undefined (baseline at or below chance). */
  diagonal: number | null;
  /** The largest AIS of the row on another benchmark, and which one. */
  largestOther: { benchmark: string; ais: number } | null;
  /** The diagonal is defined and strictly larger than every other defined cell of the row. */
  largest: boolean;
}

export interface DiagonalCheck {
  k: number;
  metric: Metric;
  rows: DiagonalRow[];
  /** Rows whose diagonal is the largest. */
  count: number;
}

/**
 * The diagonal check of a profile at `k` (its `top` variants): `ownBenchmark` names each
 * ability's single-ability benchmark; abilities without one are left out.
 */
export function diagonalCheck(model: ModelResults, k: number, ownBenchmark: (ability: string) => string | undefined, metric: Metric = "acc"): DiagonalCheck {
  const variants = model.profile?.variants.filter((v) => v.selection === "top" && v.k === k && v.ability !== null) ?? [];
  const rows: DiagonalRow[] = [];
  for (const v of variants) {
    const benchmark = ownBenchmark(v.ability!);
    if (benchmark === undefined) continue;
    const own = v.benchmarks.find((b) => b.name === benchmark);
    const diagonal = own?.[metric]?.ais ?? null;
    let largestOther: DiagonalRow["largestOther"] = null;
    for (const b of v.benchmarks) {
      const ais = b[metric]?.ais ?? null;
      if (b.name === benchmark || ais === null) continue;
      if (!largestOther || ais > largestOther.ais) largestOther = { benchmark: b.name, ais };
    }
    const largest = diagonal !== null && (largestOther === null || diagonal > largestOther.ais);
    rows.push({ ability: v.ability!, benchmark, diagonal, largestOther, largest });
  }
  return { k, metric, rows, count: rows.filter((r) => r.largest).length };
}

export function formatDiagonalCheck(check: DiagonalCheck): string {
  const lines = [
    `validity at k = ${check.k} (${check.metric}): ablating an ability hurts its own benchmark most for ${check.count} of ${check.rows.length} abilities`,
  ];
  const width = Math.max(...check.rows.map((r) => r.ability.length));
  for (const r of check.rows) {
    const own = r.diagonal === null ? "n/a" : r.diagonal.toFixed(3);
    const other = r.largestOther ? `${r.largestOther.ais.toFixed(3)} (${r.largestOther.benchmark})` : "-";
    lines.push(`  ${r.largest ? "yes" : "no "}  ${r.ability.padEnd(width)}  own ${own}  largest other ${other}`);
  }
  return lines.join("\n") + "\n";
}
