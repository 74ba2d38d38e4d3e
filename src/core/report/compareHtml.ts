// A comparison of two profiles as one self-contained HTML page: the profile report's style, tables
// and heatmap bundle (html.ts, webview/report.ts), with the difference heatmap (compareFigure.ts)
// in place of the AIS ones.
import type { Comparison, ComparisonCell } from "./compare";
import { comparisonHeatmap, SIGN_DIFFERS_MARK, sideName } from "./compareFigure";
import { formatConfidence, MINUS } from "./format";
import { CLOSE_TABLE, escapeHtml as esc, htmlPage, metaTable, openTable, signedNum, tableHtml } from "./html";
import { agreementTable, differenceTable } from "./tables";

export interface ComparisonHtmlOptions {
  /** The browser bundle that draws heatmaps (dist/report.js). */
  script: string;
  generated?: Date;
}

export function renderComparisonHtml(c: Comparison, options: ComparisonHtmlOptions): string {
  const heatmap = comparisonHeatmap(c);
  const pct = esc(formatConfidence(c.confidence));
  const significant = c.cells.filter((cell) => cell.significant).length;
  const flipped = c.cells.filter((cell) => cell.signDiffers);
  const body = [
    `<header><p class="kicker">Benchmark Profiler comparison</p><h1>Two profiles compared</h1>`,
    `<p class="lede">Each cell is AIS(A) ${MINUS} AIS(B) for one ability and one benchmark, with its ${pct} bootstrap interval over the ` +
      `benchmark's documents (${esc(String(c.resamples))} resamples): paired where both profiles scored the same documents, unpaired where they did not. ` +
      `Red: the benchmark depends on the ability more under A; blue: more under B.</p>`,
    metaTable([
      ["A", esc(sideName(c.a))],
      ["B", esc(sideName(c.b))],
      ["importance", `A: ${esc(c.a.method)}; B: ${esc(c.b.method)}`],
      ["k", `${esc(String(c.k))}, top selection`],
    ]),
    "</header>",
    `<section class="k"><figure class="heatmap"><div class="canvas-wrap"><canvas id="${esc(heatmap.id)}" role="img" ` +
      `aria-label="${esc(`Difference heatmap: ${heatmap.title}`)}"></canvas></div>`,
    `<noscript><p class="muted">The heatmap is drawn by the page's script; Table 1 holds the same numbers.</p></noscript>`,
    `<figcaption><span class="label">Figure 1.</span> AIS(A) ${MINUS} AIS(B) at <i>k</i> = ${esc(String(c.k))}: abilities (rows) by benchmarks (columns). ` +
      `<b>*</b> marks the ${significant} cell${significant === 1 ? "" : "s"} whose ${pct} CI excludes 0 (each cell on its own: a difference of two profiles is not corrected over the table); ${SIGN_DIFFERS_MARK} marks ` +
      `the ${flipped.length} whose two AIS have opposite signs; n/a: AIS is undefined on one side.</figcaption></figure>`,
    `<div class="tables">`,
    openTable("booktabs cells", "Table 1.", `AIS(A) ${MINUS} AIS(B) with ${pct} CI bounds [low, high]; <b>*</b> = the CI excludes 0.`),
    ...tableHtml(differenceTable(c)),
    CLOSE_TABLE,
    openTable(
      "booktabs",
      "Table 2.",
      "How alike the two profiles rank the abilities, per benchmark: Spearman's ρ of the two AIS rows over the abilities defined on both sides.",
    ),
    ...tableHtml(agreementTable(c)),
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
  return htmlPage({
    generator: "bprof compare",
    title: `Two profiles compared · ${esc(c.a.model)} and ${esc(c.b.model)}`,
    body,
    heatmaps: [heatmap],
    script: options.script,
  });
}

function impact(x: ComparisonCell["a"]): string {
  return x.defined ? signedNum(x.value) : "undefined";
}
