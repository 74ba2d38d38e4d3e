// A comparison of two profiles (report/compare.ts) in the formats of the profile reports:
// Markdown, CSV, JSON and LaTeX here, HTML in compareHtml.ts.
import type { AbilityImpact } from "../analysis/ais";
import type { Comparison, ComparisonCell } from "./compare";
import { SIGN_DIFFERS_MARK, sideName } from "./compareFigure";
import { renderComparisonHtml } from "./compareHtml";
import { csvField } from "./csv";
import { formatConfidence, formatFixed } from "./format";
import { REPORT_FORMATS, type ReportFormat } from "./index";
import { jsonText } from "./json";
import { escapeLatex } from "./latex";
import { differenceMarkdown, escapeMarkdown } from "./markdown";

export const COMPARE_FORMATS = REPORT_FORMATS;
export type CompareFormat = ReportFormat;

export function isCompareFormat(format: string): format is CompareFormat {
  return (COMPARE_FORMATS as readonly string[]).includes(format);
}

/** `script`: html only, the heatmap bundle (dist/report.js). */
export function renderComparison(comparison: Comparison, format: CompareFormat, options: { script?: string } = {}): string {
  switch (format) {
    case "json":
      return jsonText(comparisonJson(comparison));
    case "csv":
      return comparisonCsv(comparison);
    case "latex":
      return comparisonLatex(comparison);
    case "html":
      if (options.script === undefined) throw new Error("the HTML comparison needs the heatmap bundle (dist/report.js)");
      return renderComparisonHtml(comparison, { script: options.script });
    case "md":
      return comparisonMarkdown(comparison);
  }
}

/**
 * Two booktabs tables ready to \\input: the differences (a star where the interval excludes 0, a
 * dagger where the two AIS have opposite signs) and the rank correlation per benchmark.
 */
function comparisonLatex(c: Comparison): string {
  const latexSigned = (x: number) => (x > 0 && Number(x.toFixed(2)) !== 0 ? "+" : "") + formatFixed(x, 2);
  const cellText = (cell: ComparisonCell | undefined) => {
    if (!cell || cell.difference === null) return "n/a";
    const marks = [cell.significant ? "*" : "", cell.signDiffers ? "\\dagger" : ""].filter(Boolean).join("");
    return `$${latexSigned(cell.difference)}${marks ? `^{${marks}}` : ""}$`;
  };
  const sides = `A: ${escapeLatex(sideName(c.a))}; B: ${escapeLatex(sideName(c.b))}`;
  const lines = [
    `% Benchmark Profiler: AIS(A) - AIS(B) at k = ${escapeLatex(String(c.k))}. Needs \\usepackage{booktabs}.`,
    "\\begin{table}[t]",
    "\\centering",
    "\\small",
    `\\begin{tabular}{l${"r".repeat(c.benchmarks.length)}}`,
    "\\toprule",
    `Ability & ${c.benchmarks.map((b) => escapeLatex(b.benchmark)).join(" & ")} \\\\`,
    "\\midrule",
    ...c.abilities.map(
      (ability) =>
        `${escapeLatex(ability)} & ${c.benchmarks
          .map((b) => cellText(c.cells.find((cell) => cell.ability === ability && cell.benchmark === b.benchmark)))
          .join(" & ")} \\\\`,
    ),
    "\\midrule",
    `Spearman's $\\rho$ & ${c.benchmarks.map((b) => (b.rankCorrelation === null ? "n/a" : `$${formatFixed(b.rankCorrelation, 2)}$`)).join(" & ")} \\\\`,
    "\\bottomrule",
    "\\end{tabular}",
    `\\caption{AIS(A) $-$ AIS(B) at $k = ${escapeLatex(String(c.k))}$ (${sides}). ` +
      `$^{*}$: the ${escapeLatex(formatConfidence(c.confidence))} bootstrap CI (${escapeLatex(String(c.resamples))} resamples, paired where both scored the same documents) excludes 0, each cell on its own (a difference of two profiles is not corrected over the table). ` +
      `$^{\\dagger}$: the two AIS have opposite signs. $\\rho$: Spearman's rank correlation of the two profiles over the abilities.}`,
    "\\label{tab:ais-comparison}",
    "\\end{table}",
  ];
  return lines.join("\n") + "\n";
}

function comparisonMarkdown(c: Comparison): string {
  const side = (s: Comparison["a"]) => `${escapeMarkdown(s.model)} of run ${escapeMarkdown(s.run)} (${escapeMarkdown(s.method)} rule)`;
  const lines = [
    "# Two profiles compared",
    "",
    `A: ${side(c.a)}. B: ${side(c.b)}. k = ${escapeMarkdown(String(c.k))}, top selection.`,
    "",
    `Each cell is AIS(A) − AIS(B) with its ${Math.round(c.confidence * 100)}% bootstrap interval over the benchmark's documents ` +
      `(${escapeMarkdown(String(c.resamples))} resamples; paired where both scored the same documents). ` +
      `**Bold**: the interval excludes 0, each cell on its own (a difference of two profiles is not corrected over the table). ${SIGN_DIFFERS_MARK}: the two AIS have opposite signs.`,
    "",
    `| ability removed | ${c.benchmarks.map((b) => escapeMarkdown(b.benchmark)).join(" | ")} |`,
    `|---|${c.benchmarks.map(() => "---:").join("|")}|`,
  ];
  for (const ability of c.abilities) {
    const cells = c.benchmarks.map((b) =>
      differenceMarkdown(c.cells.find((cell) => cell.ability === ability && cell.benchmark === b.benchmark)!),
    );
    lines.push(`| ${escapeMarkdown(ability)} | ${cells.join(" | ")} |`);
  }
  lines.push(
    "",
    "## How alike the two profiles rank the abilities",
    "",
    "| benchmark | metric | documents | Spearman's ρ | abilities |",
    "|---|---|---|---:|---:|",
  );
  for (const b of c.benchmarks) {
    const rho = b.rankCorrelation === null ? "n/a" : b.rankCorrelation.toFixed(2);
    lines.push(
      `| ${escapeMarkdown(b.benchmark)} | ${escapeMarkdown(b.metric)} | ${b.paired ? "the same (paired)" : "different (unpaired)"} | ${rho} | ${escapeMarkdown(String(b.abilities))} |`,
    );
  }
  const flipped = c.cells.filter((cell) => cell.signDiffers);
  lines.push("", "## Cells whose sign differs", "");
  if (flipped.length === 0) lines.push("None.");
  for (const cell of flipped)
    lines.push(`- ${escapeMarkdown(cell.ability)} on ${escapeMarkdown(cell.benchmark)}: A ${impact(cell.a)}, B ${impact(cell.b)}`);
  if (c.unmatched.length > 0) {
    lines.push("", "## Not compared", "");
    for (const reason of c.unmatched) lines.push(`- ${escapeMarkdown(reason)}`);
  }
  return lines.join("\n") + "\n";
}

function comparisonCsv(c: Comparison): string {
  const header = [
    "ability",
    "benchmark",
    "metric",
    "paired",
    "ais_a",
    "ais_b",
    "difference",
    "ci_low",
    "ci_high",
    "significant",
    "sign_differs",
  ];
  const metricOf = new Map(c.benchmarks.map((b) => [b.benchmark, b.metric]));
  const rows = c.cells.map((cell) =>
    [
      cell.ability,
      cell.benchmark,
      metricOf.get(cell.benchmark) ?? "",
      cell.paired,
      cell.a.defined ? cell.a.value : null,
      cell.b.defined ? cell.b.value : null,
      cell.difference,
      cell.interval?.low ?? null,
      cell.interval?.high ?? null,
      cell.significant,
      cell.signDiffers,
    ].map(csvField),
  );
  return [header, ...rows].map((row) => row.join(",")).join("\n") + "\n";
}

function comparisonJson(c: Comparison): object {
  const value = (impact: AbilityImpact) => (impact.defined ? impact.value : null);
  return {
    schema: "bprof.comparison",
    schema_version: 1,
    a: c.a,
    b: c.b,
    k: c.k,
    resamples: c.resamples,
    confidence: c.confidence,
    abilities: c.abilities,
    benchmarks: c.benchmarks.map((b) => ({
      name: b.benchmark,
      metric: b.metric,
      paired: b.paired,
      rank_correlation: b.rankCorrelation,
      abilities: b.abilities,
    })),
    cells: c.cells.map((cell) => ({
      ability: cell.ability,
      benchmark: cell.benchmark,
      ais_a: value(cell.a),
      ais_b: value(cell.b),
      difference: cell.difference,
      ci: cell.interval,
      significant: cell.significant,
      sign_differs: cell.signDiffers,
    })),
    unmatched: c.unmatched,
  };
}

function signed(x: number): string {
  return (x >= 0 ? "+" : "−") + Math.abs(x).toFixed(2);
}

function impact(x: AbilityImpact): string {
  return x.defined ? signed(x.value) : "undefined";
}
