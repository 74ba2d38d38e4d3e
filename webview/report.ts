// The script of the self-contained HTML report (bundled into dist/report.js and inlined into the
// page by `bprof report --format html`): draws every heatmap the page's JSON block describes and
// adds a "Download PNG" link under each. Data is read from the page, never fetched.
import type { Heatmap } from "../src/core/report/types";
import { drawHeatmap, type HeatmapTheme } from "./heatmap";

const DATA_ID = "bprof-report-data";

function theme(): HeatmapTheme {
  const style = getComputedStyle(document.body);
  return {
    text: "#1b1b1b",
    muted: "#5c6066",
    rule: "#1b1b1b",
    background: "#ffffff",
    fontFamily: style.fontFamily || "sans-serif",
    hatch: "#a8a8a8",
  };
}

function downloadLink(canvas: HTMLCanvasElement, heatmap: Heatmap): HTMLElement {
  const p = document.createElement("p");
  p.className = "figure-tools";
  const a = document.createElement("a");
  a.textContent = "Download PNG";
  a.download = `${heatmap.title.replace(/[^A-Za-z0-9._=-]+/g, "_")}.png`;
  a.href = "#";
  a.addEventListener("click", () => {
    a.href = canvas.toDataURL("image/png");
  });
  p.append(a);
  return p;
}

function main(): void {
  const block = document.getElementById(DATA_ID);
  if (!block?.textContent) return;
  const data = JSON.parse(block.textContent) as { heatmaps: Heatmap[] };
  const look = theme();
  for (const heatmap of data.heatmaps) {
    const canvas = document.getElementById(heatmap.id);
    if (!(canvas instanceof HTMLCanvasElement)) continue;
    try {
      drawHeatmap(canvas, heatmap, look);
      (canvas.closest("figure") ?? canvas.parentElement)?.append(downloadLink(canvas, heatmap));
    } catch (e) {
      const message = document.createElement("p");
      message.className = "error";
      message.textContent = `The heatmap could not be drawn: ${e instanceof Error ? e.message : String(e)}`;
      canvas.replaceWith(message);
      throw e;
    }
  }
}

main();
