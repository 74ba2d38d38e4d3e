// A comparison of two profiles as one self-contained HTML page: the profile report's style, tables
// and heatmap bundle (html.ts, webview/report.ts), with the difference heatmap (compareFigure.ts)
// in place of the AIS ones.
import { randomBytes } from "node:crypto";
import type { Comparison, ComparisonCell } from "./compare";
import { comparisonHeatmap, SIGN_DIFFERS_MARK, sideName } from "./compareFigure";
import { formatConfidence, formatFixed, formatInterval, MINUS } from "./format";
import { CLOSE_TABLE, escapeHtml as esc, jsonForScript, metaTable, openTable, REPORT_DATA_ID, scriptForInline, STYLE } from "./html";

export interface ComparisonHtmlOptions {
  /** The browser bundle that draws heatmaps (dist/report.js). */
  script: string;
  generated?: Date;
}

const num = (v: number, digits = 3) => formatFixed(v, digits, MINUS);
const signedNum = (v: number) => (v > 0 && Number(v.toFixed(3)) !== 0 ? "+" : "") + num(v);

export function renderComparisonHtml(c: Comparison, options: ComparisonHtmlOptions): string {
  const nonce = randomBytes(16).toString("base64");
  const heatmap = comparisonHeatmap(c);
  const pct = formatConfidence(c.confidence);
  const significant = c.cells.filter((cell) => cell.significant).length;
  const flipped = c.cells.filter((cell) => cell.signDiffers);
  const header = `<thead><tr><th>ability</th>${c.benchmarks.map((b) => `<th>${esc(b.benchmark)}</th>`).join("")}</tr></thead>`;
  const body = [
    `<header><p class="kicker">Benchmark Profiler comparison</p><h1>Two profiles compared</h1>`,
    `<p class="lede">Each cell is AIS(A) ${MINUS} AIS(B) for one ability and one benchmark, with its ${pct} bootstrap interval over the ` +
      `benchmark's documents (${c.resamples} resamples): paired where both profiles scored the same documents, unpaired where they did not. ` +
      `Red: the benchmark depends on the ability more under A; blue: more under B.</p>`,
    metaTable([
      ["A", esc(sideName(c.a))],
      ["B", esc(sideName(c.b))],
      ["importance", `A: ${esc(c.a.method)}; B: ${esc(c.b.method)}`],
      ["k", `${c.k}, top selection`],
    ]),
    "</header>",
    `<section class="k"><figure class="heatmap"><div class="canvas-wrap"><canvas id="${esc(heatmap.id)}" role="img" ` +
      `aria-label="${esc(`Difference heatmap: ${heatmap.title}`)}"></canvas></div>`,
    `<noscript><p class="muted">The heatmap is drawn by the page's script; Table 1 holds the same numbers.</p></noscript>`,
    `<figcaption><span class="label">Figure 1.</span> AIS(A) ${MINUS} AIS(B) at <i>k</i> = ${c.k}: abilities (rows) by benchmarks (columns). ` +
      `<b>*</b> marks the ${significant} cell${significant === 1 ? "" : "s"} whose ${pct} CI excludes 0; ${SIGN_DIFFERS_MARK} marks ` +
      `the ${flipped.length} whose two AIS have opposite signs; n/a: AIS is undefined on one side.</figcaption></figure>`,
    `<div class="tables">`,
    openTable("booktabs cells", "Table 1.", `AIS(A) ${MINUS} AIS(B) with ${pct} CI bounds [low, high]; <b>*</b> = the CI excludes 0.`),
    header,
    "<tbody>",
    ...c.abilities.map(
      (ability) =>
        `<tr><th scope="row">${esc(ability)}</th>${c.benchmarks
          .map((b) => differenceCell(c.cells.find((cell) => cell.ability === ability && cell.benchmark === b.benchmark)))
          .join("")}</tr>`,
    ),
    CLOSE_TABLE,
    openTable(
      "booktabs",
      "Table 2.",
      "How alike the two profiles rank the abilities, per benchmark: Spearman's ρ of the two AIS rows over the abilities defined on both sides.",
    ),
    `<thead><tr><th>benchmark</th><th class="text">metric</th><th class="text">documents</th><th>ρ</th><th>abilities</th></tr></thead><tbody>`,
    ...c.benchmarks.map(
      (b) =>
        `<tr><th scope="row">${esc(b.benchmark)}</th><td class="text">${esc(b.metric)}</td>` +
        `<td class="text">${b.paired ? "the same (paired)" : "different (unpaired)"}</td>` +
        `<td>${b.rankCorrelation === null ? "n/a" : num(b.rankCorrelation, 2)}</td><td>${b.abilities}</td></tr>`,
    ),
    CLOSE_TABLE,
    `</div>`,
    `<h3>Cells whose sign differs</h3>`,
    flipped.length === 0
      ? `<p class="muted">None.</p>`
      : `<ul>${flipped.map((cell) => `<li>${esc(cell.ability)} on ${esc(cell.benchmark)}: A ${impact(cell.a)}, B ${impact(cell.b)}</li>`).join("")}</ul>`,
    ...(c.unmatched.length > 0 ? [`<h3>Not compared</h3>`, `<ul>${c.unmatched.map((u) => `<li>${esc(u)}</li>`).join("")}</ul>`] : []),
    `</section>`,
    `<footer>Generated ${esc((options.generated ?? new Date()).toISOString())} by <code>bprof compare</code>. Method: docs/method.md, “Two profiles compared”.</footer>`,
  ];
  const csp = `default-src 'none'; style-src 'nonce-${nonce}'; script-src 'nonce-${nonce}'; img-src data:`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="Benchmark Profiler (bprof compare)">
<title>Two profiles compared · ${esc(c.a.model)} and ${esc(c.b.model)}</title>
<style nonce="${nonce}">${STYLE}</style>
</head>
<body>
<main>
${body.join("\n")}
</main>
<script type="application/json" id="${REPORT_DATA_ID}">${jsonForScript({ heatmaps: [heatmap] })}</script>
<script nonce="${nonce}">${scriptForInline(options.script)}</script>
</body>
</html>
`;
}

function differenceCell(cell: ComparisonCell | undefined): string {
  if (!cell || cell.difference === null) return `<td class="na">n/a</td>`;
  const ci = cell.interval ? `<span class="ci">${formatInterval(cell.interval, 3, MINUS)}</span>` : "";
  const mark = (cell.significant ? "*" : "") + (cell.signDiffers ? ` ${SIGN_DIFFERS_MARK}` : "");
  return `<td${cell.significant ? ' class="sig"' : ""}>${signedNum(cell.difference)}${mark}${ci}</td>`;
}

function impact(x: ComparisonCell["a"]): string {
  return x.defined ? signedNum(x.value) : "undefined";
}
