// The heatmap of a section's rows as the figures draw it: per cell its colour on the diverging scale,
// its printed label and footnote, and its tooltip lines; the scale's ticks. The HTML page and the
// results view receive it as JSON and only draw it.
import { DIVERGING_STOPS, divergingColour, formatFixed, MINUS, scaleTicks, textColourOn, UNDEFINED_FILL } from "./format";
import { groupDescription } from "./names";
import type { Heatmap, HeatmapCell, HeatmapMeasure, ReportCell, ReportRow } from "./types";

/** The figure of some rows of a section; colours on the diverging scale over [-limit, limit], centred at 0. */
export function heatmapOf(
  id: string,
  title: string,
  rows: readonly ReportRow[],
  columns: string[],
  reasons: string[],
  metricLabel: string,
  limit: number,
  confidence: number,
  measure: HeatmapMeasure = "ais",
): Heatmap {
  const frame = { id, title, rows, columns, reasons, metricLabel, limit, confidence };
  return measure === "specificity" ? specificityHeatmap(frame) : aisHeatmap(frame);
}

/** What a heatmap of some rows of a section is drawn from (heatmapOf's arguments). */
interface HeatmapFrame {
  id: string;
  title: string;
  rows: readonly ReportRow[];
  columns: string[];
  reasons: string[];
  metricLabel: string;
  limit: number;
  confidence: number;
}

function aisHeatmap({ id, title, rows, columns, reasons, metricLabel, limit, confidence }: HeatmapFrame): Heatmap {
  const cells: HeatmapCell[] = [];
  const pct = `${Math.round(confidence * 100)}%`;
  rows.forEach((row, r) => {
    row.cells.forEach((cell, c) => {
      if (cell.ais === null) {
        cells.push({
          row: r,
          column: c,
          value: null,
          label: "n/a",
          footnote: String(cell.reason ?? ""),
          fill: UNDEFINED_FILL,
          text: "#4d4d4d",
          significant: false,
          tooltip: [...wrap(reasons[(cell.reason ?? 1) - 1] ?? "AIS is undefined", 64), scoreLine(cell)],
        });
        return;
      }
      const fill = divergingColour(cell.ais, limit);
      const tooltip = [
        `AIS ${signed(cell.ais, 3)}` + (cell.ci ? `  (${pct} CI ${signed(cell.ci.low, 3)} to ${signed(cell.ci.high, 3)})` : ""),
        cell.significant ? `significant: the ${pct} CI excludes 0` : `not significant: the ${pct} CI includes 0`,
        scoreLine(cell),
        `flips: ${cell.flips.rightToWrong} right\u2192wrong, ${cell.flips.wrongToRight} wrong\u2192right`,
      ];
      if (cell.specificity) {
        const s = cell.specificity;
        tooltip.push(
          s.value === null
            ? "specificity vs random: undefined"
            : `specificity vs random: ${signed(s.value, 3)}` +
                (s.ci ? ` (CI ${signed(s.ci.low, 3)} to ${signed(s.ci.high, 3)})` : "") +
                (s.significant ? " *" : ""),
        );
      }
      if (cell.note) tooltip.push(...wrap(cell.note, 64));
      if (cell.group) tooltip.push(...wrap(`group: ${groupDescription(cell.group)}`, 64));
      cells.push({
        row: r,
        column: c,
        value: cell.ais,
        label: signed(cell.ais, 2) + (cell.significant ? "*" : ""),
        fill,
        text: textColourOn(fill),
        significant: cell.significant,
        tooltip,
      });
    });
  });
  const groupStarts = rows.map((row, i) => (i > 0 && row.selection !== rows[i - 1]!.selection ? i : -1)).filter((i) => i > 0);
  return {
    id,
    title,
    rows: rows.map((r) => r.label),
    columns,
    groupStarts,
    cells,
    scale: divergingScale(limit, `AIS (${metricLabel})`),
    undefinedFill: UNDEFINED_FILL,
  };
}

/** Specificity: a top variant's AIS minus the random control's at the same k (how much of the damage is the ability's own). */
function specificityHeatmap({ id, title, rows, columns, reasons, metricLabel, limit, confidence }: HeatmapFrame): Heatmap {
  const cells: HeatmapCell[] = [];
  const pct = `${Math.round(confidence * 100)}%`;
  rows.forEach((row, r) => {
    row.cells.forEach((cell, c) => {
      const s = cell.specificity;
      if (!s || s.value === null) {
        const reason = s?.reason ?? cell.reason;
        cells.push({
          row: r,
          column: c,
          value: null,
          label: "n/a",
          footnote: String(reason ?? ""),
          fill: UNDEFINED_FILL,
          text: "#4d4d4d",
          significant: false,
          tooltip: [
            ...wrap(reason ? (reasons[reason - 1] ?? "specificity is undefined") : "no random control ran at this k", 64),
            scoreLine(cell),
          ],
        });
        return;
      }
      const fill = divergingColour(s.value, limit);
      cells.push({
        row: r,
        column: c,
        value: s.value,
        label: signed(s.value, 2) + (s.significant ? "*" : ""),
        fill,
        text: textColourOn(fill),
        significant: s.significant,
        tooltip: [
          `specificity ${signed(s.value, 3)}` + (s.ci ? `  (${pct} CI ${signed(s.ci.low, 3)} to ${signed(s.ci.high, 3)})` : ""),
          `AIS ${cell.ais === null ? "n/a" : signed(cell.ais, 3)} minus the random control's`,
          s.significant ? `significant: the ${pct} CI excludes 0` : `not significant: the ${pct} CI includes 0`,
          scoreLine(cell),
        ],
      });
    });
  });
  return {
    id,
    title,
    rows: rows.map((r) => r.label),
    columns,
    groupStarts: [],
    cells,
    scale: divergingScale(limit, `specificity (${metricLabel})`),
    undefinedFill: UNDEFINED_FILL,
  };
}

/** The diverging colour scale over [-limit, limit] with its ticks, as every heatmap of the reports draws it. */
/** A cell whose figure is undefined (a baseline at or below chance), grey, its tooltip saying why. */
export function undefinedCell(row: number, column: number, tooltip: string[]): HeatmapCell {
  return { row, column, value: null, label: "n/a", fill: UNDEFINED_FILL, text: "#4d4d4d", significant: false, tooltip };
}

export function divergingScale(limit: number, title: string): Heatmap["scale"] {
  const ticks = scaleTicks(limit);
  return { limit, ticks, tickLabels: ticks.map((t) => signed(t, limit < 0.1 ? 3 : 2)), stops: [...DIVERGING_STOPS], title };
}

function scoreLine(cell: ReportCell): string {
  return `${cell.metric}: baseline ${cell.baseline.toFixed(3)} \u2192 ablated ${cell.ablated.toFixed(3)}; chance ${cell.chance.toFixed(3)}`;
}

/** With the typographic minus, as the figures print numbers. */
function signed(value: number, digits: number): string {
  return formatFixed(value, digits, MINUS);
}

/** Greedy word wrap for tooltip lines (canvas text does not wrap). */
export function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}
