// The AIS tables `bprof run` prints after the accuracies: per model and k, abilities down,
// benchmarks across, each cell the AIS and its interval, `*` where the interval excludes 0,
// `n/a` with a numbered reason where the AIS is undefined.
import type { Metric } from "../core/analysis/ais";
import type { CellMetric, ModelResults, VariantResult } from "../core/results/store";

export function formatAisTables(model: ModelResults, metric: Metric = "acc"): string {
  const profile = model.profile;
  if (!profile) return "";
  const benchmarks = model.benchmarks.map((b) => b.name);
  const blocks: string[] = [];
  for (const k of profile.k) {
    const variants = profile.variants.filter((v) => v.k === k);
    if (variants.length === 0) continue;
    const n = variants[0]!.n;
    const confidence = Math.round(100 * profile.bootstrap.confidence);
    const reasons: string[] = [];
    const cellText = (cell: CellMetric | undefined): string => {
      if (!cell) return "-";
      if (cell.ais === null) {
        const reason = cell.reason ?? "AIS is undefined";
        const at = reasons.indexOf(reason);
        return `n/a (${(at >= 0 ? at : reasons.push(reason) - 1) + 1})`;
      }
      const interval = cell.ci ? ` [${cell.ci.low.toFixed(3)}, ${cell.ci.high.toFixed(3)}]` : "";
      return `${fixed(cell.ais)}${interval}${cell.significant ? " *" : ""}`;
    };
    const rows = [["ability", ...benchmarks]];
    for (const v of variants) rows.push([rowLabel(v), ...benchmarks.map((b) => cellText(v.benchmarks.find((x) => x.name === b)?.[metric]))]);
    const title = `${model.name}: AIS (${metric}) at k = ${k} (n = ${n} of ${profile.parameters} parameters), ${confidence}% CI; * = the CI excludes 0`;
    blocks.push([title, ...alignColumns(rows), ...reasons.map((r, i) => `  (${i + 1}) ${r}`)].join("\n"));
  }
  return blocks.join("\n\n") + (blocks.length > 0 ? "\n" : "");
}

function rowLabel(v: VariantResult): string {
  if (v.selection === "random") return "random (control)";
  return v.selection === "top" ? v.ability! : `${v.ability} (bottom)`;
}

function fixed(value: number): string {
  return (value >= 0 ? " " : "") + value.toFixed(3);
}

function alignColumns(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? "").length)));
  return rows.map((r) => r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]!))).join("  ").trimEnd());
}
