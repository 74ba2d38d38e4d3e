// A heatmap of the report model as a standalone SVG (the results view's "Export SVG"): the same
// cells, colours, labels, significance marks and colour bar as the drawn figure, in vector form
// for a paper. Text is escaped; nothing of the user's files becomes markup.
import { HEATMAP_AXES } from "./axes";
import { visibleControls } from "./format";
import type { Heatmap } from "./types";

export interface SvgTheme {
  text: string;
  muted: string;
  background: string | null;
  fontFamily: string;
}

const CELL_W = 78;
const CELL_H = 30;
const GAP = 2;
const FONT = 12;
/** Rough width of a character at 12 px, for the room labels take (an SVG has no text measure). */
const CHAR_W = 6.6;
/** Room for an axis title (left of the row labels, below the column labels). */
const AXIS_TITLE = 22;

/** Markup characters as references; control characters visible (XML allows none but tab and line feed, which tooltips' lines use). */
function escape(text: string): string {
  return visibleControls(text.replace(/\r\n?/g, "\n"), /[\t\n]/).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function heatmapSvg(heatmap: Heatmap, theme: SvgTheme): string {
  const left = AXIS_TITLE + Math.ceil(Math.max(...heatmap.rows.map((r) => r.length), 4) * CHAR_W) + 16;
  const labelRoom = Math.ceil(Math.max(...heatmap.columns.map((c) => c.length), 4) * CHAR_W * 0.72) + 20;
  const top = 34;
  const width = left + heatmap.columns.length * CELL_W + 140;
  const height = top + heatmap.rows.length * CELL_H + labelRoom + AXIS_TITLE + 10;
  const font = `font-family="${escape(theme.fontFamily)}" font-size="${FONT}"`;
  const parts: string[] = [`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">`];
  parts.push(`<title>${escape(heatmap.title)}</title>`);
  if (theme.background) parts.push(`<rect width="100%" height="100%" fill="${theme.background}"/>`);
  parts.push(
    `<defs><pattern id="na" width="8" height="8" patternUnits="userSpaceOnUse"><rect width="8" height="8" fill="${heatmap.undefinedFill}"/><path d="M-1,9 L9,-1 M-1,1 L1,-1 M7,9 L9,7" stroke="#a8a8a8" stroke-width="1"/></pattern>`,
  );
  parts.push(
    `<linearGradient id="scale" x1="0" y1="1" x2="0" y2="0">${heatmap.scale.stops.map((s, i) => `<stop offset="${i / (heatmap.scale.stops.length - 1)}" stop-color="${s}"/>`).join("")}</linearGradient></defs>`,
  );
  parts.push(`<text x="${left}" y="18" ${font} font-weight="bold" fill="${theme.text}">${escape(heatmap.title)}</text>`);
  heatmap.rows.forEach((row, r) => {
    parts.push(
      `<text x="${left - 8}" y="${top + r * CELL_H + CELL_H / 2}" ${font} fill="${theme.text}" text-anchor="end" dominant-baseline="middle">${escape(row)}</text>`,
    );
  });
  for (const cell of heatmap.cells) {
    const x = left + cell.column * CELL_W;
    const y = top + cell.row * CELL_H;
    const fill = cell.value === null ? "url(#na)" : cell.fill;
    parts.push(
      `<rect x="${x}" y="${y}" width="${CELL_W - GAP}" height="${CELL_H - GAP}" fill="${fill}"><title>${escape(cell.tooltip.join("\n"))}</title></rect>`,
    );
    const label = cell.label + (cell.footnote ? ` (${cell.footnote})` : "");
    parts.push(
      `<text x="${x + (CELL_W - GAP) / 2}" y="${y + (CELL_H - GAP) / 2}" ${font}${cell.significant ? ' font-weight="bold"' : ""} fill="${cell.text}" text-anchor="middle" dominant-baseline="middle">${escape(label)}</text>`,
    );
  }
  for (const start of heatmap.groupStarts) {
    const y = top + start * CELL_H - GAP / 2;
    parts.push(
      `<line x1="${left - 6}" y1="${y}" x2="${left + heatmap.columns.length * CELL_W}" y2="${y}" stroke="${theme.text}" stroke-width="1.25"/>`,
    );
  }
  const axisY = top + heatmap.rows.length * CELL_H + 8;
  heatmap.columns.forEach((column, c) => {
    const x = left + c * CELL_W + CELL_W / 2;
    parts.push(
      `<text x="${x}" y="${axisY}" ${font} fill="${theme.text}" text-anchor="end" transform="rotate(-40 ${x} ${axisY})">${escape(column)}</text>`,
    );
  });
  // The axis titles: the rows' up the left edge, the columns' under their labels.
  const rowsMid = top + (heatmap.rows.length * CELL_H) / 2;
  parts.push(
    `<text x="14" y="${rowsMid}" ${font} font-weight="bold" fill="${theme.text}" text-anchor="middle" transform="rotate(-90 14 ${rowsMid})">${escape(HEATMAP_AXES.rows)}</text>`,
  );
  const columnsMid = left + (heatmap.columns.length * CELL_W) / 2;
  parts.push(
    `<text x="${columnsMid}" y="${axisY + labelRoom + 4}" ${font} font-weight="bold" fill="${theme.text}" text-anchor="middle">${escape(HEATMAP_AXES.columns)}</text>`,
  );
  const barX = left + heatmap.columns.length * CELL_W + 24;
  const barH = Math.max(120, Math.min(heatmap.rows.length * CELL_H, 240));
  parts.push(`<text x="${barX - 2}" y="${top - 6}" ${font} font-weight="bold" fill="${theme.text}">${escape(heatmap.scale.title)}</text>`);
  parts.push(`<rect x="${barX}" y="${top}" width="14" height="${barH}" fill="url(#scale)" stroke="${theme.muted}" stroke-width="0.75"/>`);
  heatmap.scale.ticks.forEach((t, i) => {
    const y = top + ((heatmap.scale.limit - t) / (2 * heatmap.scale.limit)) * barH;
    parts.push(
      `<text x="${barX + 20}" y="${y}" font-family="${escape(theme.fontFamily)}" font-size="11" fill="${theme.muted}" dominant-baseline="middle">${escape(heatmap.scale.tickLabels[i] ?? String(t))}</text>`,
    );
  });
  parts.push("</svg>");
  return parts.join("\n") + "\n";
}
