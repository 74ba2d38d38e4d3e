// The difference heatmap of two profiles (report/compare.ts): abilities down, benchmarks across,
// each cell AIS(A) - AIS(B) on the same diverging scale as the AIS heatmaps, so the HTML report,
// the results view and an exported SVG draw it with the code that draws a profile.
import type { AbilityImpact } from "../analysis/ais";
import type { Comparison, ComparisonCell } from "./compare";
import { divergingColour, formatConfidence, formatFixed, MINUS, scaleLimit, textColourOn, UNDEFINED_FILL } from "./format";
import { divergingScale, undefinedCell } from "./heatmap";
import type { Heatmap, HeatmapCell } from "./types";

/** What marks a cell whose two AIS have opposite signs, in every format that has room for a glyph. */
export const SIGN_DIFFERS_MARK = "⇄";

/** The caption-sized name of side A or B: its model and run. */
export function sideName(side: Comparison["a"]): string {
  return `${side.model} (run ${side.run})`;
}

/** The difference heatmap; `id` names its canvas in a page. */
export function comparisonHeatmap(c: Comparison, id = "comparison"): Heatmap {
  const limit = scaleLimit(c.cells.map((cell) => cell.difference));
  const columns = c.benchmarks.map((b) => b.benchmark);
  const cells: HeatmapCell[] = [];
  c.abilities.forEach((ability, row) => {
    columns.forEach((benchmark, column) => {
      const cell = c.cells.find((x) => x.ability === ability && x.benchmark === benchmark);
      if (cell) cells.push(heatmapCell(c, cell, row, column, limit));
    });
  });
  return {
    id,
    title: `AIS(A) ${MINUS} AIS(B), k = ${c.k}: A ${sideName(c.a)}, B ${sideName(c.b)}`,
    rows: [...c.abilities],
    columns,
    groupStarts: [],
    cells,
    scale: divergingScale(limit, `AIS(A) ${MINUS} AIS(B)`),
    undefinedFill: UNDEFINED_FILL,
  };
}

function heatmapCell(c: Comparison, cell: ComparisonCell, row: number, column: number, limit: number): HeatmapCell {
  const pct = formatConfidence(c.confidence);
  const sides = `A ${impactText(cell.a)}, B ${impactText(cell.b)}`;
  const flip = cell.signDiffers ? [`${SIGN_DIFFERS_MARK} the two AIS have opposite signs`] : [];
  if (cell.difference === null) return undefinedCell(row, column, ["AIS is undefined on one side (a baseline at or below chance)", sides]);
  const fill = divergingColour(cell.difference, limit);
  const interval = cell.interval
    ? `  (${pct} CI ${signed(cell.interval.low)} to ${signed(cell.interval.high)}, ${cell.paired ? "paired" : "unpaired"})`
    : "";
  return {
    row,
    column,
    value: cell.difference,
    label: signed(cell.difference, 2) + (cell.significant ? "*" : "") + (cell.signDiffers ? ` ${SIGN_DIFFERS_MARK}` : ""),
    fill,
    text: textColourOn(fill),
    significant: cell.significant,
    tooltip: [
      `AIS(A) ${MINUS} AIS(B) ${signed(cell.difference)}${interval}`,
      cell.significant ? `significant: the ${pct} CI excludes 0` : `not significant: the ${pct} CI includes 0`,
      sides,
      ...flip,
    ],
  };
}

function signed(value: number, digits = 3): string {
  const text = formatFixed(value, digits, MINUS);
  return text.startsWith(MINUS) || Number(value.toFixed(digits)) === 0 ? text : `+${text}`;
}

function impactText(x: AbilityImpact): string {
  return x.defined ? signed(x.value) : "undefined";
}

/** What the results view shows of a comparison: its figures and the heatmap drawn from them. */
export interface ComparisonView {
  comparison: Comparison;
  heatmap: Heatmap;
}

export function comparisonView(comparison: Comparison): ComparisonView {
  return { comparison, heatmap: comparisonHeatmap(comparison) };
}
