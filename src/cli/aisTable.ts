// The tables `bprof run` prints: the baseline scores, then the AIS tables, per model and k,
// abilities down, benchmarks across, each cell the AIS and its interval, `*` where the interval
// excludes 0, `n/a` with a numbered reason where the AIS is undefined. A benchmark's cells are
// under its own metric: `metric` (acc by default) for multiple choice, exact_match for
// generate_until; when a table mixes both, each column names its metric.
import type { ChoiceMetric, Metric } from "../core/analysis/ais";
import { isGenerationResult, type BenchmarkResult, type CellMetric, type ModelResults, type VariantResult } from "../core/results/store";

/** One benchmark's baseline line: acc, acc_norm and chance, or exact_match (its filter) and chance. */
export function formatBaseline(b: BenchmarkResult): string {
  if (isGenerationResult(b)) {
    const others = Object.entries(b.exact_match_by_filter).filter(([name]) => name !== b.filter).map(([name, v]) => `  ${name} ${v.toFixed(4)}`).join("");
    return `${b.name}  exact_match ${b.exact_match.toFixed(4)} (${b.filter})${others}  chance ${b.chance.toFixed(4)}  (${b.items} items)`;
  }
  return `${b.name}  acc ${b.acc.toFixed(4)}  acc_norm ${b.acc_norm.toFixed(4)}  chance ${b.chance.toFixed(4)}  (${b.items} items)`;
}

export function formatAisTables(model: ModelResults, metric: ChoiceMetric = "acc"): string {
  const profile = model.profile;
  if (!profile) return "";
  const benchmarks = model.benchmarks.map((b) => b.name);
  const metrics: Metric[] = model.benchmarks.map((b) => (isGenerationResult(b) ? "exact_match" : metric));
  const mixed = new Set(metrics).size > 1;
  const label = mixed ? `${metric}; exact_match for generate_until benchmarks` : (metrics[0] ?? metric);
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
    const rows = [["ability", ...benchmarks.map((b, c) => (mixed ? `${b} (${metrics[c]})` : b))]];
    for (const v of variants) rows.push([rowLabel(v), ...benchmarks.map((b, c) => cellText(v.benchmarks.find((x) => x.name === b)?.[metrics[c]!]))]);
    const title = `${model.name}: AIS (${label}) at k = ${k} (n = ${n} of ${profile.parameters} parameters), ${confidence}% CI; * = the CI excludes 0`;
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
