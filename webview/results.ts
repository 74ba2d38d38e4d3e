// Browser side of the results view: renders the report model the host sends it
// (src/core/report/model.ts; messages in ./protocol.ts): per model the baseline accuracies and, for a profile run, the AIS
// heatmap per k, drawn by the same code as the HTML report's. Only textContent is used for data,
// so names from user files cannot inject markup.
import type { KSection, ModelReport, Report } from "../src/core/report/model";
import { drawHeatmap, type HeatmapTheme } from "./heatmap";
import type { FromResultsView, ResultsViewState, ToResultsView } from "./protocol";

function element<K extends keyof HTMLElementTagNameMap>(tag: K, text?: string, className?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (className) e.className = className;
  return e;
}

function row(cells: HTMLElement[]): HTMLTableRowElement {
  const tr = document.createElement("tr");
  tr.append(...cells);
  return tr;
}

/** VS Code's theme, from the variables it sets on the webview. */
function theme(): HeatmapTheme {
  const style = getComputedStyle(document.body);
  const variable = (name: string, fallback: string) => style.getPropertyValue(name).trim() || fallback;
  return {
    text: variable("--vscode-foreground", "#cccccc"),
    muted: variable("--vscode-descriptionForeground", "#999999"),
    rule: variable("--vscode-foreground", "#cccccc"),
    background: null,
    fontFamily: variable("--vscode-font-family", "sans-serif"),
    hatch: "#a8a8a8",
  };
}

function baselineTable(model: ModelReport): HTMLTableElement {
  const table = element("table");
  const generation = model.hasGeneration;
  const score = (v: number | null) => (v === null ? "–" : v.toFixed(4));
  table.append(row((generation ? ["benchmark", "items", "acc", "acc_norm", "exact_match", "chance"] : ["benchmark", "items", "acc", "acc_norm", "chance"])
    .map((h) => element("th", h))));
  for (const b of model.baseline) {
    const main = b.outputType === "generate_until" ? b.exact_match : b.acc;
    const aboveChance = main !== null && main > b.chance ? "above-chance" : "at-chance";
    const cells = [
      element("td", b.name), element("td", String(b.items), "num"),
      element("td", score(b.acc), `num${b.outputType === "generate_until" ? "" : ` ${aboveChance}`}`), element("td", score(b.acc_norm), "num"),
    ];
    if (generation) {
      const exact = element("td", score(b.exact_match), `num${b.outputType === "generate_until" ? ` ${aboveChance}` : ""}`);
      if (b.filter) exact.title = `filter: ${b.filter}`;
      cells.push(exact);
    }
    cells.push(element("td", b.chance.toFixed(4), "num"));
    table.append(row(cells));
  }
  return table;
}

/** The config's ability labels against one k: a summary line and a row per labelled benchmark. */
function labelChecks(section: KSection): HTMLElement[] {
  const held = section.labels.filter((l) => l.holds).length;
  const summary = element("p", `Ability labels: ablating the labelled ability hurts the benchmark most for ${held} of ${section.labels.length} labelled benchmarks`);
  const table = element("table");
  table.append(row(["benchmark", "label", "AIS", "largest other", "holds"].map((h) => element("th", h))));
  for (const l of section.labels) {
    const other = l.largestOther ? `${l.largestOther.ais.toFixed(3)} (${l.largestOther.benchmark})` : "–";
    table.append(row([element("td", l.benchmark), element("td", l.ability), element("td", l.ais === null ? "n/a" : l.ais.toFixed(3), "num"),
      element("td", other, "num"), element("td", l.holds ? "yes" : "no")]));
  }
  return [summary, table];
}

function render(report: Report): void {
  const root = document.getElementById("root")!;
  root.replaceChildren(element("h2", `Run ${report.run.id}`));
  const look = theme();
  const pending: (() => void)[] = [];
  for (const model of report.models) {
    root.append(element("h3", model.name), baselineTable(model));
    const profile = model.profile;
    if (!profile) continue;
    for (const section of profile.sections) {
      const n = `n = ${section.n.toLocaleString("en-US")} of ${profile.parameters.toLocaleString("en-US")} parameters, ${profile.method} importance`;
      root.append(element("h4", `AIS (${section.metricLabel}) at k = ${section.k} (${n}); * = the ${Math.round(profile.bootstrap.confidence * 100)}% CI excludes 0`));
      const canvas = element("canvas");
      canvas.setAttribute("role", "img");
      canvas.setAttribute("aria-label", section.heatmap.title);
      const wrap = element("div", undefined, "heatmap");
      wrap.append(canvas);
      root.append(wrap);
      if (section.reasons.length > 0) {
        const list = element("ol", undefined, "reasons");
        list.append(...section.reasons.map((r) => element("li", r)));
        root.append(list);
      }
      if (section.labels.length > 0) root.append(...labelChecks(section));
      pending.push(() => drawHeatmap(canvas, section.heatmap, look));
    }
  }
  // Draw once the canvases are in the document, so text measures with the page's fonts.
  for (const draw of pending) draw();
}

// The host's channel; the state survives a reload of the window, so the panel can be restored.
declare function acquireVsCodeApi(): { postMessage(message: FromResultsView): void; setState(state: ResultsViewState): void };
const host = acquireVsCodeApi();
const initial = document.body.dataset.state;
if (initial) host.setState(JSON.parse(initial) as ResultsViewState);
window.addEventListener("message", (event: MessageEvent<ToResultsView>) => {
  if (event.data.type === "report") render(event.data.report);
});
host.postMessage({ type: "ready" });
