// Browser side of the results view. The extension sends the view model of a run for the query the
// controls make (model, metric, k, what the cells show; src/core/report/view.ts); this page draws
// it: the heatmap (select a cell for its flipped documents), a table of the same numbers for
// screen readers, and tabs for the baselines, the ability overlap, the label check and the method.
// Messages are in ./protocol.ts. Data goes in with textContent only, so names from user files
// cannot inject markup. The figure is drawn again when the colour theme changes.
import "@vscode-elements/elements/dist/vscode-button/index.js";
import "@vscode-elements/elements/dist/vscode-option/index.js";
import "@vscode-elements/elements/dist/vscode-single-select/index.js";
import "@vscode-elements/elements/dist/vscode-tab-header/index.js";
import "@vscode-elements/elements/dist/vscode-tab-panel/index.js";
import "@vscode-elements/elements/dist/vscode-tabs/index.js";
import type { Chart } from "chart.js";
import type { CellCases } from "../src/core/report/cases";
import type { ComparisonView } from "../src/core/report/compareFigure";
import type { HeatmapCell } from "../src/core/report/types";
import type { BenchmarkSort, CandidateChoice, CellsShown, ResultsQuery, ResultsView } from "../src/core/report/view";
import type { ImportanceMethod } from "../src/core/config/types";
import { casesList } from "./cases";
import { element, table } from "./dom";
import { findingsHeader } from "./findings";
import { fluencyRow } from "./fluency";
import { drawHeatmap, type HeatmapTheme } from "./heatmap";
import type { ExportTheme, FromResultsView, ResultsViewState, ToResultsView } from "./protocol";

declare function acquireVsCodeApi(): {
  postMessage(message: FromResultsView): void;
  getState(): ResultsViewState | undefined;
  setState(state: ResultsViewState): void;
};
const host = acquireVsCodeApi();
// A page loaded again after its panel was hidden finds what it kept; a new panel starts from the
// extension's state in the page.
const state = host.getState() ?? (JSON.parse(document.body.dataset.state ?? "{}") as ResultsViewState);
host.setState(state);

let view: ResultsView | undefined;
/** Two profiles compared: shown instead of a run's view. */
let comparison: ComparisonView | undefined;
let chart: Chart | undefined;
/** The Pairs tab's interference heatmap. */
let pairsChart: Chart | undefined;
let selected: { row: number; column: number } | undefined;
let selectedTab = state.tab ?? 0;
/** The cell whose documents were listed before the page was discarded: listed again once its view is drawn. */
let cellToRestore = state.cell;

const CELLS_LABELS: Record<CellsShown, string> = {
  top: "AIS of the top sets",
  top_chunked: "AIS of the chunked top sets (released code)",
  bottom: "AIS of the bottom sets",
  random: "AIS of the random control",
  specificity: "specificity (top minus random)",
};

const SORT_LABELS: Record<BenchmarkSort, string> = {
  config: "config order",
  snr: "by snr (signal over noise)",
};

/** VS Code's theme, from the variables it sets on the webview. */
function theme(): HeatmapTheme & ExportTheme {
  const style = getComputedStyle(document.body);
  const variable = (name: string, fallback: string) => style.getPropertyValue(name).trim() || fallback;
  return {
    text: variable("--vscode-foreground", "#cccccc"),
    muted: variable("--vscode-descriptionForeground", "#999999"),
    rule: variable("--vscode-foreground", "#cccccc"),
    background: variable("--vscode-editor-background", "#1e1e1e"),
    fontFamily: variable("--vscode-font-family", "sans-serif"),
    hatch: "#a8a8a8",
  };
}

function query(change: ResultsQuery): void {
  const next = { ...view?.query, ...change } as ResultsQuery;
  selected = undefined;
  state.query = next;
  delete state.cell;
  host.setState(state);
  host.postMessage({ type: "query", query: next });
}

function select(
  id: string,
  label: string,
  options: { value: string; text: string }[],
  value: string,
  onChange: (value: string) => void,
): HTMLElement {
  const wrap = element("label", undefined, "control");
  wrap.append(element("span", label));
  const box = document.createElement("vscode-single-select") as HTMLElement & { value: string };
  box.id = id;
  box.setAttribute("aria-label", label);
  for (const o of options) {
    const option = document.createElement("vscode-option") as HTMLElement & { value: string };
    option.setAttribute("value", o.value);
    option.textContent = o.text;
    if (o.value === value) option.setAttribute("selected", "");
    box.append(option);
  }
  box.addEventListener("change", () => onChange(box.value));
  wrap.append(box);
  return wrap;
}

function button(label: string, onClick: () => void): HTMLElement {
  const b = document.createElement("vscode-button");
  b.setAttribute("secondary", "");
  b.textContent = label;
  b.addEventListener("click", onClick);
  return b;
}

function controls(v: ResultsView): HTMLElement {
  const bar = element("div", undefined, "controls");
  if (v.choices.models.length > 1)
    bar.append(
      select(
        "model",
        "Model",
        v.choices.models.map((m) => ({ value: m, text: m })),
        v.query.model,
        (model) => query({ model }),
      ),
    );
  bar.append(
    select(
      "metric",
      "Metric",
      v.choices.metrics.map((m) => ({ value: m, text: m })),
      v.query.metric,
      (metric) => query({ metric: metric as ResultsQuery["metric"] }),
    ),
  );
  if (v.choices.methods.length > 1)
    bar.append(
      select(
        "method",
        "Rule",
        v.choices.methods.map((m) => ({ value: m, text: m === "paper" ? "paper |θ·g|" : "signed −θ·g" })),
        v.query.method ?? v.choices.methods[0]!,
        (method) => query({ method: method as ImportanceMethod }),
      ),
    );
  if (v.choices.candidates.length > 1)
    bar.append(
      select(
        "candidates",
        "Candidates",
        v.choices.candidates.map((c) => ({ value: c, text: c === "all" ? "all layers (attention + MLP)" : "MLP (the paper's)" })),
        v.query.candidates ?? v.choices.candidates[0]!,
        (candidates) => query({ candidates: candidates as CandidateChoice }),
      ),
    );
  if (v.query.k !== null) {
    bar.append(
      select(
        "k",
        "k",
        v.choices.k.map((k) => ({ value: String(k), text: String(k) })),
        String(v.query.k),
        (k) => query({ k: Number(k) }),
      ),
    );
    bar.append(
      select(
        "cells",
        "Cells",
        v.choices.cells.map((c) => ({ value: c, text: CELLS_LABELS[c] })),
        v.query.cells,
        (cells) => query({ cells: cells as CellsShown }),
      ),
    );
    // the benchmarks by their snr, when the run measured their noise (the config's order by default)
    if (v.choices.sorts.length > 1)
      bar.append(
        select(
          "sort",
          "Benchmarks",
          v.choices.sorts.map((s) => ({ value: s, text: SORT_LABELS[s] })),
          v.query.sort,
          (sort) => query({ sort: sort as BenchmarkSort }),
        ),
      );
  }
  bar.append(exportButtons());
  return bar;
}

function exportButtons(): HTMLElement {
  const exports = element("span", undefined, "exports");
  exports.append(
    button("PNG", () => canvas() && host.postMessage({ type: "export", format: "png", dataUrl: canvas()!.toDataURL("image/png") })),
    button("SVG", () => host.postMessage({ type: "export", format: "svg", theme: theme() })),
    button("CSV", () => host.postMessage({ type: "export", format: "csv" })),
  );
  return exports;
}

function canvas(): HTMLCanvasElement | null {
  return document.querySelector<HTMLCanvasElement>("#heatmap canvas");
}

function tabs(pages: [string, HTMLElement][]): HTMLElement {
  const tabs = document.createElement("vscode-tabs") as HTMLElement & { selectedIndex: number };
  tabs.setAttribute("selected-index", String(selectedTab));
  for (const [title, content] of pages) {
    const header = document.createElement("vscode-tab-header");
    header.setAttribute("slot", "header");
    header.textContent = title;
    const panel = document.createElement("vscode-tab-panel");
    panel.append(content);
    tabs.append(header, panel);
  }
  tabs.addEventListener("vsc-tabs-select", (e) => {
    selectedTab = (e as CustomEvent<{ selectedIndex: number }>).detail.selectedIndex;
    state.tab = selectedTab;
    host.setState(state);
    // a hidden panel has no width: the Pairs tab's heatmap is laid out again once it shows
    drawPairs();
  });
  return tabs;
}

function heatmapPage(v: ResultsView): HTMLElement {
  const page = element("div");
  const profile = v.profile!;
  const figure = element("div", undefined, "heatmap");
  figure.id = "heatmap";
  const c = element("canvas");
  c.setAttribute("role", "img");
  c.setAttribute("aria-label", `${profile.heatmap.title}; the same numbers are in the table below`);
  figure.append(c);
  page.append(figure, ...fluencyRow(profile));
  const legend = [
    `* = ${profile.legend.stars}.`,
    ...(profile.legend.saturated ? [`${profile.legend.saturated}.`] : []),
    ...(profile.legend.randomNull ? [`The hover's ${profile.legend.randomNull}.`] : []),
    profile.legend.tested
      ? "Hover a cell for its q, p and test; select it for the documents the ablation flipped."
      : "Select a cell for the documents the ablation flipped.",
  ];
  page.append(element("p", legend.join(" "), "hint"));
  if (profile.reasons.length > 0) {
    const list = element("ol", undefined, "reasons");
    list.append(...profile.reasons.map((r) => element("li", r)));
    page.append(list);
  }
  const cases = element("div", undefined, "cases");
  cases.id = "cases";
  page.append(cases);
  const details = element("details");
  details.append(element("summary", "The figure's numbers, as a table"), numbersTable(v));
  page.append(details);
  return page;
}

/** The figure as a table; each number is a button that selects its cell (the keyboard's way to the documents). */
function numbersTable(v: ResultsView): HTMLTableElement {
  const profile = v.profile!;
  const t = table(["", ...profile.table.columns], [], "numbers");
  t.setAttribute("aria-label", `${profile.heatmap.title}: the numbers of the heatmap`);
  const body = t.tBodies[0]!;
  profile.table.rows.forEach((r, rowIndex) => {
    const tr = document.createElement("tr");
    const th = element("th", r.label);
    th.scope = "row";
    tr.append(th);
    r.cells.forEach((text, column) => {
      const td = element("td", undefined, "num");
      const b = element("button", text, "cell");
      b.setAttribute("aria-label", `${r.label} × ${profile.table.columns[column]}: ${text}; list the flipped documents`);
      const cell = profile.heatmap.cells.find((c) => c.row === rowIndex && c.column === column);
      if (cell) b.addEventListener("click", () => selectCell(cell));
      td.append(b);
      tr.append(td);
    });
    body.append(tr);
  });
  return t;
}

function baselinePage(v: ResultsView): HTMLElement {
  const generation = v.baseline.some((b) => b.outputType === "generate_until");
  const score = (x: number | null) => (x === null ? "–" : x.toFixed(4));
  return table(
    generation ? ["benchmark", "items", "acc", "acc_norm", "exact_match", "chance"] : ["benchmark", "items", "acc", "acc_norm", "chance"],
    v.baseline.map((b) => [
      b.group ? `${b.name} (group: ${b.group.tasks} tasks)` : b.name,
      String(b.items),
      score(b.acc),
      score(b.acc_norm),
      ...(generation ? [score(b.exact_match)] : []),
      b.chance.toFixed(4),
    ]),
    "baseline",
  );
}

/** Each benchmark's signal, noise and snr at this k, snr descending, the benchmarks whose profile is noise said so. */
function noisePage(v: ResultsView): HTMLElement {
  const p = v.profile!;
  const noise = p.noise.filter((n) => n.isNoise);
  const page = element("div");
  page.append(
    element("p", `${p.noiseWords}.`),
    element(
      "p",
      noise.length === 0 ? "Every benchmark's snr is at least 1." : `The profile is noise on ${noise.map((n) => n.column).join(", ")}.`,
      noise.length === 0 ? "muted" : "error",
    ),
    table(
      ["benchmark", "signal", "noise", "snr", "profile"],
      p.noise.map((n) => [
        n.column,
        n.signal.toFixed(3),
        n.noise.toFixed(3),
        n.snr === null ? "–" : n.snr.toFixed(2),
        n.isNoise ? "noise (snr < 1)" : n.snr === null ? "no noise measured" : "signal",
      ]),
      "noise",
    ),
  );
  return page;
}

function overlapPage(v: ResultsView): HTMLElement {
  const o = v.profile?.overlap;
  if (!o) return element("p", "No overlap at this k (it needs two abilities with top sets).");
  const page = element("div");
  page.append(
    element(
      "p",
      `Jaccard overlap of the abilities' top sets at k = ${o.k} (n = ${o.n.toLocaleString("en-US")} weights each): the share of weights two abilities' ablations both zero.`,
    ),
  );
  page.append(
    table(
      ["", ...o.abilities],
      o.abilities.map((a, i) => [a, ...o.jaccard[i]!.map((j) => j.toFixed(3))]),
      "overlap",
    ),
  );
  return page;
}

function labelsPage(v: ResultsView): HTMLElement {
  const labels = v.profile?.labels ?? [];
  if (labels.length === 0) return element("p", "The config labels no benchmark with an ability (`benchmarks[].ability`).");
  const held = labels.filter((l) => l.holds).length;
  const page = element("div");
  page.append(element("p", `Ablating the labelled ability hurts the benchmark most for ${held} of ${labels.length} labelled benchmarks.`));
  page.append(
    table(
      ["benchmark", "label", "AIS", "largest other", "holds"],
      labels.map((l) => [
        l.benchmark,
        l.ability,
        l.ais === null ? "n/a" : l.ais.toFixed(3),
        l.largestOther ? `${l.largestOther.ais.toFixed(3)} (${l.largestOther.benchmark})` : "–",
        l.holds ? "yes" : "no",
      ]),
      "labels",
    ),
  );
  return page;
}

/** The config's `expects` per benchmark against the profile at this k. */
function expectationsPage(v: ResultsView): HTMLElement {
  const p = v.profile!;
  const page = element("div");
  page.append(
    element(
      "p",
      `Per benchmark: the abilities the config expects it to need (\`expects\`) with the AIS of their top sets, how many of them show ` +
        `(a positive starred AIS; * = ${p.legend.stars}), the abilities not expected that show, and where weights are given ` +
        `Spearman's ρ of the weights and the AIS.`,
    ),
    table(
      ["benchmark", "expected (AIS)", "expected that show", "unexpected that show", "ρ"],
      p.expectations.map((e) => [
        e.benchmark,
        e.expected
          .map(
            (x) =>
              `${x.ability}${x.weight === null ? "" : ` ×${x.weight}`} (${x.ais === null ? "n/a" : x.ais.toFixed(3)}${x.significant ? "*" : ""})`,
          )
          .join("; "),
        `${e.confirmed.length} of ${e.expected.length}`,
        e.unexpected.length === 0 ? "none" : e.unexpected.join("; "),
        e.rankCorrelation === null ? "–" : e.rankCorrelation.toFixed(2),
      ]),
      "expectations",
    ),
  );
  return page;
}

/** Abilities measured with a second diagnostic set (`of`): the two AIS rows compared at this k. */
function consistencyPage(v: ResultsView): HTMLElement {
  const p = v.profile!;
  const page = element("div");
  page.append(
    element(
      "p",
      `Abilities measured with a second diagnostic set: Spearman's ρ of the two sets' AIS across the benchmarks, and the benchmarks ` +
        `where one set's ${Math.round(p.bootstrap.confidence * 100)}% interval excludes the other's AIS.`,
    ),
    table(
      ["ability", "second set", "ρ", "benchmarks", "disagree"],
      p.consistency.map((c) => [
        c.ability,
        c.set,
        c.rankCorrelation === null ? "–" : c.rankCorrelation.toFixed(2),
        String(c.benchmarks),
        c.disagreements.length === 0
          ? "none"
          : c.disagreements.map((d) => `${d.benchmark} (${d.ais.toFixed(3)} vs ${d.setAis.toFixed(3)})`).join("; "),
      ]),
      "consistency",
    ),
  );
  return page;
}

/** Two abilities ablated together (ablation.pairs): the interference per benchmark at this k. */
function pairsPage(v: ResultsView): HTMLElement {
  const p = v.profile!;
  const page = element("div");
  const number = (x: number) => x.toFixed(3);
  const figure = element("div", undefined, "heatmap");
  figure.id = "pairs-heatmap";
  const c = element("canvas");
  c.setAttribute("role", "img");
  c.setAttribute("aria-label", `${p.pairsHeatmap?.title ?? "interference"}; the same numbers are in the table below`);
  figure.append(c);
  page.append(
    figure,
    element(
      "p",
      `The interference AIS(A+B) − AIS(A) − AIS(B) of each pair with its ${Math.round(p.bootstrap.confidence * 100)}% interval ` +
        `(* = ${p.legend.stars}; 0 when the two effects add up, negative when the union removes less than both alone), then the AIS of the union of the two top sets.`,
    ),
    table(
      ["abilities", "n", ...p.pairs[0]!.cells.map((c) => c.benchmark)],
      p.pairs.map((pair) => [
        pair.abilities.join(" + "),
        pair.n.toLocaleString("en-US"),
        ...pair.cells.map((c) =>
          c.interference === null
            ? `n/a${c.reason !== undefined && p.reasons[c.reason - 1] ? ` (${p.reasons[c.reason - 1]})` : ""}`
            : `${number(c.interference)}${c.significant ? "*" : ""}${c.interferenceCi ? ` [${number(c.interferenceCi.low)}, ${number(c.interferenceCi.high)}]` : ""}; AIS ${number(c.ais!)}`,
        ),
      ]),
      "pairs",
    ),
  );
  return page;
}

/** A rule's name in the side-by-side table: its method, and "all layers" over every layer's weights. */
function ruleName(r: { method: ImportanceMethod; candidate_set?: "all" }): string {
  return r.candidate_set === "all" ? `${r.method}, all layers` : r.method;
}

function methodPage(v: ResultsView): HTMLElement {
  const p = v.profile!;
  const page = element("div");
  const rule =
    p.method === "signed"
      ? "signed: -θ × g (weights whose zeroing raises the ability's loss come first)"
      : "paper: |θ × g|, as the authors' released code ranks";
  page.append(
    table(
      ["", ""],
      [
        ["importance", rule],
        [
          "k",
          `${v.query.k} (n = ${p.n.toLocaleString("en-US")} of ${p.parameters.toLocaleString("en-US")} parameters; ${p.candidates.toLocaleString("en-US")} ${p.candidate_set === "all" ? "attention and MLP" : "MLP"} candidates)`,
        ],
        ["selections", p.selections.join(", ")],
        ["seed", String(p.seed)],
        ["bootstrap", `${p.bootstrap.resamples} paired resamples, ${Math.round(p.bootstrap.confidence * 100)}% percentile intervals`],
      ],
      "method",
    ),
  );
  if (p.rules) {
    // the run ranked by several rules: each one's label check and lowering share at this k
    const mean = (shares: (number | null)[]) => {
      const known = shares.filter((x): x is number => x !== null);
      return known.length > 0 ? `${((100 * known.reduce((a, b) => a + b, 0)) / known.length).toFixed(1)}%` : "–";
    };
    page.append(
      element("h3", "The rules side by side"),
      table(
        ["rule", "labels that hold", "top-set weights lowering their own ability's loss (mean)"],
        p.rules.rules.map((r) => [
          ruleName(r) + (r.method === p.method && r.candidate_set === p.candidate_set ? " (shown)" : ""),
          r.labelsChecked > 0 ? `${r.labelsHold} of ${r.labelsChecked}` : "–",
          mean(r.lowering.map((l) => l.share)),
        ]),
        "rules",
      ),
    );
  }
  // the ranking's stability is there only when the run measured it (ablation.stability)
  const measured = p.abilities.some((a) => a.stability !== null);
  page.append(
    table(
      [
        "ability",
        "diagnostic sequences",
        "top set lowering its own loss",
        ...(measured ? ["ranking stability (Jaccard of two halves)"] : []),
      ],
      p.abilities.map((a) => [
        a.name,
        String(a.sequences),
        a.lowering === null ? "–" : `${(100 * a.lowering).toFixed(1)}%`,
        ...(measured ? [a.stability === null ? "–" : a.stability.toFixed(3)] : []),
      ]),
      "abilities",
    ),
  );
  if (measured) {
    page.append(
      element(
        "p",
        `Ranking stability: the Jaccard index |A ∩ B| / |A ∪ B| of the top n at k = ${v.query.k} ranked from each of two halves ` +
          `of the ability's diagnostic items (split with the seed). Near 1, the items are enough for a stable ranking; far below, more items are needed.`,
        "muted",
      ),
    );
  }
  return page;
}

/** Two profiles compared: the difference heatmap, the rank correlation per benchmark, the cells whose sign differs. */
function renderComparison(v: ComparisonView): void {
  comparison = v;
  view = undefined;
  const c = v.comparison;
  const pct = `${Math.round(c.confidence * 100)}%`;
  const root = document.getElementById("root")!;
  const bar = element("div", undefined, "controls");
  bar.append(exportButtons());
  const figure = element("div", undefined, "heatmap");
  figure.id = "heatmap";
  const canvasElement = element("canvas");
  canvasElement.setAttribute("role", "img");
  canvasElement.setAttribute("aria-label", `${v.heatmap.title}; the same numbers are in the table below`);
  figure.append(canvasElement);
  const flipped = c.cells.filter((cell) => cell.signDiffers);
  const flips = element("ul", undefined, "sign-differs");
  flips.append(
    ...flipped.map((cell) => element("li", `${cell.ability} on ${cell.benchmark}: A ${impactText(cell.a)}, B ${impactText(cell.b)}`)),
  );
  const numbers = table(
    ["", ...c.benchmarks.map((b) => b.benchmark)],
    c.abilities.map((ability) => [
      ability,
      ...c.benchmarks.map((b) => differenceText(c.cells.find((cell) => cell.ability === ability && cell.benchmark === b.benchmark))),
    ]),
    "numbers comparison",
  );
  numbers.setAttribute("aria-label", `${v.heatmap.title}: the numbers of the heatmap`);
  const details = element("details");
  details.append(element("summary", "The figure's numbers, as a table"), numbers);
  root.replaceChildren(
    element("h2", "Two profiles compared"),
    element("p", `A: ${c.a.model} (run ${c.a.run}) · B: ${c.b.model} (run ${c.b.run}) · k = ${c.k}, top selection`, "muted"),
    bar,
    figure,
    element(
      "p",
      `Each cell: AIS(A) − AIS(B). * the ${pct} interval over the benchmark's documents excludes 0 (paired where both scored the same documents); ⇄ the two AIS have opposite signs.`,
      "hint",
    ),
    details,
    element("h3", "How alike the two profiles rank the abilities"),
    table(
      ["benchmark", "metric", "documents", "Spearman's ρ", "abilities"],
      c.benchmarks.map((b) => [
        b.benchmark,
        b.metric,
        b.paired ? "the same (paired)" : "different (unpaired)",
        b.rankCorrelation === null ? "n/a" : b.rankCorrelation.toFixed(2),
        String(b.abilities),
      ]),
      "agreement",
    ),
    element("h3", "Cells whose sign differs"),
    flipped.length > 0 ? flips : element("p", "None.", "muted"),
  );
  if (c.unmatched.length > 0) {
    const list = element("ul", undefined, "unmatched");
    list.append(...c.unmatched.map((u) => element("li", u)));
    root.append(element("h3", "Not compared"), list);
  }
  draw();
}

function impactText(x: ComparisonView["comparison"]["cells"][number]["a"]): string {
  return x.defined ? x.value.toFixed(3) : "undefined";
}

function differenceText(cell: ComparisonView["comparison"]["cells"][number] | undefined): string {
  if (!cell || cell.difference === null) return "n/a";
  const interval = cell.interval ? ` [${cell.interval.low.toFixed(3)}, ${cell.interval.high.toFixed(3)}]` : "";
  return `${cell.difference.toFixed(3)}${cell.significant ? "*" : ""}${cell.signDiffers ? " ⇄" : ""}${interval}`;
}

function render(v: ResultsView): void {
  view = v;
  comparison = undefined;
  const root = document.getElementById("root")!;
  const title = element("h2", `Run ${v.run.id}`);
  const meta = element("p", `${v.run.configFile} · ${new Date(v.run.created).toLocaleString()}`, "muted");
  root.replaceChildren(title, meta, controls(v));
  if (!v.profile) {
    root.append(element("h3", "Baseline"), baselinePage(v));
    return;
  }
  root.append(
    findingsHeader(v.profile.findings),
    tabs([
      ["Heatmap", heatmapPage(v)],
      ["Baselines", baselinePage(v)],
      ["Ability overlap", overlapPage(v)],
      ["Labels", labelsPage(v)],
      ...(v.profile.expectations.length > 0 ? ([["Expected", expectationsPage(v)]] as [string, HTMLElement][]) : []),
      ...(v.profile.consistency.length > 0 ? ([["Consistency", consistencyPage(v)]] as [string, HTMLElement][]) : []),
      ...(v.profile.pairs.length > 0 ? ([["Pairs", pairsPage(v)]] as [string, HTMLElement][]) : []),
      ...(v.profile.noise.length > 0 ? ([["Noise", noisePage(v)]] as [string, HTMLElement][]) : []),
      ["Method", methodPage(v)],
    ]),
  );
  draw();
  const restore = cellToRestore;
  cellToRestore = undefined;
  if (restore && restore.row < v.profile.rows.length && restore.column < v.profile.benchmarks.length) selectCell(restore);
}

/** The interference heatmap of the Pairs tab, when the run has pairs. */
function drawPairs(): void {
  const c = document.querySelector<HTMLCanvasElement>("#pairs-heatmap canvas");
  const heatmap = view?.profile?.pairsHeatmap;
  pairsChart?.destroy();
  pairsChart = undefined;
  if (c && heatmap && !comparison) pairsChart = drawHeatmap(c, heatmap, theme());
}

function draw(): void {
  drawPairs();
  const c = canvas();
  if (c && comparison) {
    chart?.destroy();
    chart = drawHeatmap(c, comparison.heatmap, theme());
    return;
  }
  if (!c || !view?.profile) return;
  chart?.destroy();
  const heatmap = view.profile.heatmap;
  chart = drawHeatmap(c, heatmap, theme(), { ...(selected ? { selected } : {}), onSelect: (cell) => selectCell(cell) });
}

function selectCell(cell: Pick<HeatmapCell, "row" | "column">): void {
  const profile = view?.profile;
  if (!view || !profile || view.query.k === null) return;
  selected = { row: cell.row, column: cell.column };
  state.cell = selected;
  host.setState(state);
  draw();
  const r = profile.rows[cell.row]!;
  const cases = document.getElementById("cases")!;
  cases.replaceChildren(element("p", `Loading the documents of ${r.label} × ${profile.benchmarks[cell.column]}…`, "muted"));
  host.postMessage({
    type: "cell",
    ref: {
      model: view.query.model,
      k: view.query.k,
      ability: r.ability,
      selection: r.selection,
      benchmark: profile.benchmarks[cell.column]!,
      ...(view.query.method ? { method: view.query.method } : {}),
      ...(view.choices.candidates.length > 1 && view.query.candidates ? { candidates: view.query.candidates } : {}),
    },
  });
}

function showCases(cases: CellCases): void {
  const target = document.getElementById("cases");
  if (!target) return;
  target.replaceChildren(casesList(cases, (file, line) => host.postMessage({ type: "open", file, line, ref: cases.ref })));
  target.scrollIntoView({ block: "nearest" });
}

window.addEventListener("message", (event: MessageEvent<ToResultsView>) => {
  const message = event.data;
  if (message.type === "view") render(message.view);
  else if (message.type === "comparison") renderComparison(message.view);
  else if (message.type === "cases") showCases(message.cases);
  else document.getElementById("root")!.append(element("p", message.message, "error"));
});

// VS Code changes the body's theme class and its colour variables: draw the figure in the new colours.
new MutationObserver(() => draw()).observe(document.body, { attributes: true, attributeFilter: ["class"] });

// The extension holds the query the page last sent (or the restored panel's): it answers with its view.
host.postMessage({ type: "ready" });
