// Draws one AIS heatmap (abilities x benchmarks) with chart.js and chartjs-chart-matrix, from a
// Heatmap of the core's report model: colours, labels and tooltips come computed, so the HTML
// report and the VS Code webview draw the same figure. Runs in the browser; nothing here evaluates
// strings as code, so it works under a Content Security Policy without 'unsafe-eval'.
import { CategoryScale, Chart, Tooltip, type Plugin } from "chart.js";
import { MatrixController, MatrixElement } from "chartjs-chart-matrix";
import { HEATMAP_AXES } from "../src/core/report/axes";
import type { Heatmap, HeatmapCell } from "../src/core/report/types";

Chart.register(MatrixController, MatrixElement, CategoryScale, Tooltip);

export interface HeatmapTheme {
  /** Axis labels and titles. */
  text: string;
  /** Secondary text (colour bar ticks, footnote numbers). */
  muted: string;
  /** Group separators and the colour bar's frame. */
  rule: string;
  /** Fill behind the figure (also in a saved PNG); null leaves it transparent. */
  background: string | null;
  fontFamily: string;
  /** Stroke of the hatching of undefined cells. */
  hatch: string;
}

const FONT_SIZE = 12;
const CELL_HEIGHT = 34;
const MIN_CELL_WIDTH = 52;
/** Room an axis title takes (its line and padding). */
const AXIS_TITLE = FONT_SIZE + 12;
const MAX_CELL_WIDTH = 96;
const GAP = 2;
const BAR_WIDTH = 14;
/** Room right of the cells for the colour bar, its ticks and its title (at least). */
const BAR_SPACE = 104;
const MIN_BAR_HEIGHT = 150;

interface Layout {
  /** Room right of the cells for the colour bar. */
  barSpace: number;
  /** Width of the row labels' axis (chart.js would cap it at a share of the canvas). */
  rowAxis: number;
  width: number;
  height: number;
  rotate: number;
  bottomPadding: number;
  barHeight: number;
}

/**
 * Canvas size and spacing: cells wide enough for their column labels (rotated when they are not),
 * narrowed down to MIN_CELL_WIDTH to fit `available` pixels; wider figures scroll.
 */
function layout(ctx: CanvasRenderingContext2D, heatmap: Heatmap, theme: HeatmapTheme, available: number): Layout {
  ctx.font = `${FONT_SIZE}px ${theme.fontFamily}`;
  const widest = (labels: string[]) => Math.max(0, ...labels.map((l) => ctx.measureText(l).width));
  const rowLabels = widest(heatmap.rows);
  const columnLabels = widest(heatmap.columns);
  ctx.font = `bold ${FONT_SIZE}px ${theme.fontFamily}`;
  const barSpace = Math.ceil(Math.max(BAR_SPACE, 24 + ctx.measureText(heatmap.scale.title).width + 12));
  const fits = Math.floor((available - AXIS_TITLE - rowLabels - 22 - barSpace) / Math.max(1, heatmap.columns.length));
  const cellWidth = Math.max(MIN_CELL_WIDTH, Math.min(MAX_CELL_WIDTH, columnLabels + 14, fits));
  const rotate = columnLabels + 8 > cellWidth ? 40 : 0;
  const xLabels = rotate ? Math.ceil(columnLabels * Math.sin((rotate * Math.PI) / 180) + FONT_SIZE * 1.6) : FONT_SIZE + 14;
  const area = heatmap.rows.length * CELL_HEIGHT;
  const barHeight = Math.max(MIN_BAR_HEIGHT, Math.min(area, 260));
  // Room below the bar for its n/a swatch; extra height goes to padding so cells keep their size.
  const natural = 16 + area + xLabels + AXIS_TITLE;
  const needed = 16 + barHeight + 46;
  return {
    barSpace,
    rowAxis: Math.ceil(AXIS_TITLE + rowLabels + 16),
    width: Math.ceil(AXIS_TITLE + rowLabels + 22 + heatmap.columns.length * cellWidth + barSpace),
    height: Math.max(natural, needed),
    rotate,
    bottomPadding: Math.max(0, needed - natural),
    barHeight,
  };
}

function hatchPattern(ctx: CanvasRenderingContext2D, fill: string, stroke: string): CanvasPattern | string {
  const tile = document.createElement("canvas");
  tile.width = 8;
  tile.height = 8;
  const t = tile.getContext("2d");
  if (!t) return fill;
  t.fillStyle = fill;
  t.fillRect(0, 0, 8, 8);
  t.strokeStyle = stroke;
  t.lineWidth = 1;
  t.beginPath();
  t.moveTo(-1, 9);
  t.lineTo(9, -1);
  t.moveTo(-1, 1);
  t.lineTo(1, -1);
  t.moveTo(7, 9);
  t.lineTo(9, 7);
  t.stroke();
  return ctx.createPattern(tile, "repeat") ?? fill;
}

/**
 * Category labels that are all distinct (a repeated name gets invisible zero-width spaces): the
 * category scale places a point by its label's text, so two equal labels would share a place.
 */
export function distinctLabels(labels: readonly string[]): string[] {
  const seen = new Set<string>();
  return labels.map((label) => {
    let text = label;
    while (seen.has(text)) text += "\u200b";
    seen.add(text);
    return text;
  });
}

/** Selecting cells, where the page lets the user pick one (the results view). */
export interface HeatmapSelection {
  /** The cell shown as selected (outlined). */
  selected?: { row: number; column: number };
  onSelect(cell: HeatmapCell): void;
}

export function drawHeatmap(
  canvas: HTMLCanvasElement,
  heatmap: Heatmap,
  theme: HeatmapTheme,
  selection?: HeatmapSelection,
): Chart<"matrix"> {
  const ctx = canvas.getContext("2d");
  if (!ctx) throw new Error("this browser has no 2D canvas");
  const size = layout(ctx, heatmap, theme, canvas.parentElement?.clientWidth || 960);
  canvas.width = size.width;
  canvas.height = size.height;
  const hatch = hatchPattern(ctx, heatmap.undefinedFill, theme.hatch);
  const font = (weight = "normal", px = FONT_SIZE) => `${weight} ${px}px ${theme.fontFamily}`;
  const nColumns = heatmap.columns.length;
  const nRows = heatmap.rows.length;
  const cellOf = (i: number): HeatmapCell => heatmap.cells[i]!;
  const rows = distinctLabels(heatmap.rows);
  const columns = distinctLabels(heatmap.columns);

  const background: Plugin<"matrix"> = {
    id: "bprofBackground",
    beforeDraw(chart) {
      if (!theme.background) return;
      const c = chart.ctx;
      c.save();
      c.fillStyle = theme.background;
      c.fillRect(0, 0, chart.width, chart.height);
      c.restore();
    },
  };

  const labels: Plugin<"matrix"> = {
    id: "bprofCellLabels",
    afterDatasetsDraw(chart) {
      const c = chart.ctx;
      const meta = chart.getDatasetMeta(0);
      c.save();
      c.textAlign = "center";
      c.textBaseline = "middle";
      meta.data.forEach((element, i) => {
        const cell = cellOf(i);
        const { x, y } = (element as unknown as MatrixElement).getCenterPoint();
        c.fillStyle = cell.text;
        c.font = font(cell.significant ? "bold" : "normal");
        if (cell.footnote) {
          const main = c.measureText(cell.label).width;
          c.font = font("normal", 9);
          const note = c.measureText(cell.footnote).width;
          const left = x - (main + 1 + note) / 2;
          c.textAlign = "left";
          c.font = font("normal");
          c.fillText(cell.label, left, y);
          c.font = font("normal", 9);
          c.fillText(cell.footnote, left + main + 1, y - 5);
          c.textAlign = "center";
        } else {
          c.fillText(cell.label, x, y);
        }
      });
      // Rules between groups of rows (top sets | bottom sets | random control).
      const { left, right } = chart.chartArea;
      const yScale = chart.scales.y!;
      c.strokeStyle = theme.rule;
      c.lineWidth = 1.25;
      for (const start of heatmap.groupStarts) {
        const y = (yScale.getPixelForValue(start - 1) + yScale.getPixelForValue(start)) / 2; // category values are indices here
        c.beginPath();
        c.moveTo(left - 6, Math.round(y) + 0.5);
        c.lineTo(right, Math.round(y) + 0.5);
        c.stroke();
      }
      c.restore();
    },
  };

  const colourBar: Plugin<"matrix"> = {
    id: "bprofColourBar",
    afterDraw(chart) {
      const c = chart.ctx;
      const { top, right } = chart.chartArea;
      const { limit, stops, ticks, tickLabels, title } = heatmap.scale;
      const x = right + 26;
      const y0 = top + 16;
      const h = size.barHeight - 16;
      c.save();
      c.font = font("bold");
      c.fillStyle = theme.text;
      c.textAlign = "left";
      c.textBaseline = "alphabetic";
      c.fillText(title, x - 2, top + 6);
      const gradient = c.createLinearGradient(0, y0, 0, y0 + h);
      // Top is +limit: the stops run from -limit to +limit, so they are laid out reversed.
      stops.forEach((stop, i) => gradient.addColorStop(1 - i / (stops.length - 1), stop));
      c.fillStyle = gradient;
      c.fillRect(x, y0, BAR_WIDTH, h);
      c.strokeStyle = theme.rule;
      c.lineWidth = 0.75;
      c.strokeRect(x + 0.5, y0 + 0.5, BAR_WIDTH - 1, h - 1);
      c.font = font("normal", 11);
      c.fillStyle = theme.muted;
      c.textBaseline = "middle";
      ticks.forEach((t, i) => {
        const y = y0 + ((limit - t) / (2 * limit)) * h;
        c.beginPath();
        c.moveTo(x + BAR_WIDTH, Math.round(y) + 0.5);
        c.lineTo(x + BAR_WIDTH + 4, Math.round(y) + 0.5);
        c.stroke();
        c.fillText(tickLabels[i] ?? String(t), x + BAR_WIDTH + 7, y);
      });
      // The n/a swatch, where some cell is undefined.
      if (!heatmap.cells.some((cell) => cell.value === null)) {
        c.restore();
        return;
      }
      const sy = y0 + h + 14;
      c.fillStyle = hatch;
      c.fillRect(x, sy, BAR_WIDTH, BAR_WIDTH);
      c.strokeRect(x + 0.5, sy + 0.5, BAR_WIDTH - 1, BAR_WIDTH - 1);
      c.fillStyle = theme.muted;
      c.fillText("n/a", x + BAR_WIDTH + 7, sy + BAR_WIDTH / 2);
      c.restore();
    },
  };

  return new Chart(canvas, {
    type: "matrix",
    data: {
      datasets: [
        {
          label: heatmap.title,
          // By label: a category scale reads a number as the point's position in the data, not as a column.
          data: heatmap.cells.map((cell) => ({ x: columns[cell.column]!, y: rows[cell.row]!, v: cell.value ?? undefined })),
          backgroundColor: (context) => {
            const cell = heatmap.cells[context.dataIndex];
            return !cell ? "transparent" : cell.value === null ? hatch : cell.fill;
          },
          borderWidth: (context) => {
            const cell = heatmap.cells[context.dataIndex];
            return cell && selection?.selected?.row === cell.row && selection.selected.column === cell.column ? 3 : 0;
          },
          borderColor: theme.text,
          width: ({ chart }) => Math.max(1, (chart.chartArea?.width ?? 0) / nColumns - GAP),
          height: ({ chart }) => Math.max(1, (chart.chartArea?.height ?? 0) / nRows - GAP),
          anchorX: "center",
          anchorY: "center",
        },
      ],
    },
    options: {
      responsive: false,
      animation: false,
      devicePixelRatio: Math.max(2, window.devicePixelRatio || 1),
      font: { family: theme.fontFamily, size: FONT_SIZE },
      color: theme.text,
      layout: { padding: { top: 16, right: size.barSpace, bottom: size.bottomPadding, left: 4 } },
      events: selection
        ? ["mousemove", "mouseout", "click", "touchstart", "touchmove"]
        : ["mousemove", "mouseout", "touchstart", "touchmove"],
      ...(selection
        ? {
            onClick: (_event: unknown, elements: { index: number }[]) => {
              const cell = elements[0] ? cellOf(elements[0].index) : undefined;
              if (cell) selection.onSelect(cell);
            },
            onHover: (event: { native: Event | null }, elements: unknown[]) => {
              const target = event.native?.target as HTMLElement | null;
              if (target) target.style.cursor = elements.length > 0 ? "pointer" : "default";
            },
          }
        : {}),
      scales: {
        x: {
          type: "category",
          labels: columns,
          offset: true,
          position: "bottom",
          grid: { display: false, drawTicks: false },
          border: { display: false },
          ticks: {
            color: theme.text,
            autoSkip: false,
            maxRotation: size.rotate,
            minRotation: size.rotate,
            padding: 4,
            font: { family: theme.fontFamily, size: FONT_SIZE },
          },
          title: {
            display: true,
            text: HEATMAP_AXES.columns,
            color: theme.text,
            padding: { top: 4, bottom: 0 },
            font: { family: theme.fontFamily, size: FONT_SIZE, weight: "bold" },
          },
        },
        y: {
          type: "category",
          labels: rows,
          offset: true,
          reverse: false,
          grid: { display: false, drawTicks: false },
          border: { display: false },
          ticks: { color: theme.text, autoSkip: false, padding: 8, font: { family: theme.fontFamily, size: FONT_SIZE } },
          title: {
            display: true,
            text: HEATMAP_AXES.rows,
            color: theme.text,
            padding: { top: 0, bottom: 4 },
            font: { family: theme.fontFamily, size: FONT_SIZE, weight: "bold" },
          },
          afterFit: (scale) => {
            scale.width = size.rowAxis;
          },
        },
      },
      plugins: {
        legend: { display: false },
        tooltip: {
          displayColors: false,
          backgroundColor: "rgba(24, 24, 24, 0.94)",
          titleFont: { family: theme.fontFamily, size: 12, weight: "bold" },
          bodyFont: { family: theme.fontFamily, size: 12 },
          padding: 10,
          callbacks: {
            title: (items) => {
              const cell = items[0] ? cellOf(items[0].dataIndex) : undefined;
              return cell ? `${heatmap.rows[cell.row]} \u00d7 ${heatmap.columns[cell.column]}` : "";
            },
            label: (item) => cellOf(item.dataIndex).tooltip,
          },
        },
      },
    },
    plugins: [background, labels, colourBar],
  });
}
