// The heatmap of a section's rows as the figures draw it: per cell its colour on the diverging scale,
// its printed label and footnote, and its tooltip lines; the scale's ticks. The HTML page and the
// results view receive it as JSON and only draw it.
import { DIVERGING_STOPS, divergingColour, formatFixed, MINUS, scaleTicks, textColourOn, UNDEFINED_FILL } from "./format";
import { groupDescription } from "./names";
import { correctionName, formatP, SATURATED_MARK, testWords } from "./stars";
import type { ProfileStats } from "../results/schema";
import type { Heatmap, HeatmapCell, HeatmapMeasure, ReportCell, ReportRow } from "./types";

/** What a figure's tooltips say of its stars: the profile's stats (absent in runs before them) and the random control's draws at its k. */
export interface StarContext {
  stats?: ProfileStats | undefined;
  randomDraws?: number | null;
}

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
  stars: StarContext = {},
): Heatmap {
  const frame = { id, title, rows, columns, reasons, metricLabel, limit, confidence, stars };
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
  stars: StarContext;
}

/**
 * The tooltip lines of a cell's star: in a run with tests, whether it is starred by its q, its p
 * and test, and whether its interval excludes 0; before them, whether its interval excludes 0 (what
 * the star then meant).
 */
export function starLines(
  x: { significant: boolean; p?: number | null; q?: number | null; test?: ReportCell["test"]; ci: ReportCell["ci"] },
  pct: string,
  stars: StarContext,
  intervalExcludes0?: boolean,
): string[] {
  const excludes = intervalExcludes0 ?? (x.ci !== null && (x.ci.low > 0 || x.ci.high < 0));
  if (x.q === undefined && x.p === undefined)
    return [x.significant ? `significant: the ${pct} CI excludes 0` : `not significant: the ${pct} CI includes 0`];
  const threshold = stars.stats ? ` (${correctionName(stars.stats)}, threshold ${stars.stats.threshold})` : "";
  const q = x.q === null || x.q === undefined ? "q n/a" : `q ${formatP(x.q)}`;
  return [
    `${x.significant ? "starred" : "not starred"}: ${q}${threshold}`,
    `p ${x.p === null || x.p === undefined ? "n/a" : formatP(x.p)}${x.test ? `, ${testWords(x.test)}` : ""}`,
    `the ${pct} CI ${excludes ? "excludes" : "includes"} 0`,
  ];
}

/** The tooltip lines of a top cell's random null (ablation.random_draws > 1). */
function randomNullLines(cell: ReportCell): string[] {
  const r = cell.randomNull;
  if (!r) return [];
  const margin = r.margin === null ? "" : `, margin ${signed(r.margin, 2)} sd`;
  return [`random null (${r.draws} draws, mean ${signed(r.mean, 3)}): p ${formatP(r.p)}${margin}`];
}

function aisHeatmap({ id, title, rows, columns, reasons, metricLabel, limit, confidence, stars }: HeatmapFrame): Heatmap {
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
        ...starLines(cell, pct, stars, cell.intervalExcludes0),
        ...(cell.saturated ? wrap(`${SATURATED_MARK} saturated: the ablated score is at chance, the AIS at its ceiling`, 64) : []),
        ...randomNullLines(cell),
        scoreLine(cell),
        `flips: ${cell.flips.rightToWrong} right\u2192wrong, ${cell.flips.wrongToRight} wrong\u2192right`,
      ];
      if (cell.specificity) {
        const s = cell.specificity;
        const why = s.reason === undefined ? undefined : reasons[s.reason - 1];
        tooltip.push(
          ...(s.value === null
            ? wrap(`specificity vs random: undefined${why ? ` (${why})` : ""}`, 64)
            : [
                `specificity vs random: ${signed(s.value, 3)}` +
                  (s.ci ? ` (CI ${signed(s.ci.low, 3)} to ${signed(s.ci.high, 3)})` : "") +
                  (s.significant ? " *" : "") +
                  (s.q !== undefined && s.q !== null ? `, q ${formatP(s.q)}` : ""),
              ]),
        );
      }
      if (cell.note) tooltip.push(...wrap(cell.note, 64));
      if (cell.group) tooltip.push(...wrap(`group: ${groupDescription(cell.group)}`, 64));
      cells.push({
        row: r,
        column: c,
        value: cell.ais,
        label: signed(cell.ais, 2) + (cell.significant ? "*" : ""),
        ...(cell.saturated ? { footnote: SATURATED_MARK } : {}),
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
function specificityHeatmap({ id, title, rows, columns, reasons, metricLabel, limit, confidence, stars }: HeatmapFrame): Heatmap {
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
          ...starLines(s, pct, stars),
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
