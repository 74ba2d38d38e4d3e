// The interference heatmap of two abilities ablated together (`ablation.pairs`): pairs down,
// benchmarks across, each cell AIS(A+B) - AIS(A) - AIS(B) on the diverging scale of the AIS
// heatmaps (0: the two effects add up), its interval in the tooltip, so the results view draws it
// with the code that draws a profile, as the difference heatmap of two profiles is drawn.
import { divergingColour, formatConfidence, formatFixed, MINUS, scaleLimit, textColourOn, UNDEFINED_FILL } from "./format";
import { divergingScale, starLines, undefinedCell, type StarContext } from "./heatmap";
import type { Heatmap, HeatmapCell, PairReport } from "./types";

/** What the pairs' tooltips say beyond the cells: the section's reasons (a saturated pair's) and the profile's stats. */
export interface PairsContext extends StarContext {
  reasons?: readonly string[];
}

const INTERFERENCE = `AIS(A+B) ${MINUS} AIS(A) ${MINUS} AIS(B)`;

/** The interference heatmap of one k's pairs; null without pairs. `id` names its canvas in a page. */
export function interferenceHeatmap(
  pairs: readonly PairReport[],
  benchmarks: readonly string[],
  confidence: number,
  k: number,
  id = "pairs",
  context: PairsContext = {},
): Heatmap | null {
  if (pairs.length === 0) return null;
  const limit = scaleLimit(pairs.flatMap((p) => p.cells.map((c) => c.interference)));
  const columns = benchmarks.slice(0, pairs[0]!.cells.length);
  return {
    id,
    title: `Interference ${INTERFERENCE}, k = ${k}`,
    rows: pairs.map((p) => p.abilities.join(" + ")),
    columns,
    groupStarts: [],
    cells: pairs.flatMap((p, row) => p.cells.map((cell, column) => heatmapCell(p, cell, row, column, limit, confidence, context))),
    scale: divergingScale(limit, "interference"),
    undefinedFill: UNDEFINED_FILL,
  };
}

function heatmapCell(
  pair: PairReport,
  cell: PairReport["cells"][number],
  row: number,
  column: number,
  limit: number,
  confidence: number,
  context: PairsContext,
): HeatmapCell {
  const pct = formatConfidence(confidence);
  const union = `AIS of the union (${pair.n.toLocaleString("en-US")} weights): ${cell.ais === null ? "undefined" : signed(cell.ais)}`;
  if (cell.interference === null) {
    const reason = cell.reason === undefined ? undefined : context.reasons?.[cell.reason - 1];
    return {
      ...undefinedCell(row, column, [
        reason
          ? `the interference is undefined: ${reason}`
          : "the interference is undefined: an AIS of the pair or of one ability is (a baseline at or below chance)",
        union,
      ]),
      ...(cell.reason !== undefined ? { footnote: String(cell.reason) } : {}),
    };
  }
  const fill = divergingColour(cell.interference, limit);
  const interval = cell.interferenceCi ? `  (${pct} CI ${signed(cell.interferenceCi.low)} to ${signed(cell.interferenceCi.high)})` : "";
  return {
    row,
    column,
    value: cell.interference,
    label: signed(cell.interference, 2) + (cell.significant ? "*" : ""),
    fill,
    text: textColourOn(fill),
    significant: cell.significant,
    tooltip: [
      `${INTERFERENCE} ${signed(cell.interference)}${interval}`,
      ...(cell.q === undefined && cell.p === undefined
        ? [
            cell.significant
              ? `significant: the ${pct} CI excludes 0 (${cell.interference > 0 ? "the union removes more than both alone" : "the union removes less than both alone"})`
              : `not significant: the ${pct} CI includes 0 (the effects may add up)`,
          ]
        : starLines({ ...cell, ci: cell.interferenceCi, test: "bootstrap" }, pct, context)),
      union,
    ],
  };
}

function signed(value: number, digits = 3): string {
  const text = formatFixed(value, digits, MINUS);
  return text.startsWith(MINUS) || Number(value.toFixed(digits)) === 0 ? text : `+${text}`;
}
