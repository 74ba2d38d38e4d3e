// HTML report: one self-contained page (no network: its style, its data and the chart bundle are
// inlined, and its Content Security Policy allows nothing else), readable from file://. The
// tables are written here; the heatmaps are drawn in the page by the bundle (webview/report.ts,
// chart.js + chartjs-chart-matrix) from the heatmaps of the report model, embedded as JSON.
import { randomBytes } from "node:crypto";
import {
  candidatesWord,
  describeRule,
  formatConfidence,
  ruleLabel,
  formatCount,
  formatFixed,
  formatInterval,
  formatK,
  MINUS,
  visibleControls,
  abilityWords,
} from "./format";
import { ruleComparisons, rulesOf } from "./model";
import { SIGN_DIFFERS_MARK } from "./compareFigure";
import { fluencyText } from "./fluency";
import * as tables from "./tables";
import {
  writeInline,
  type EstimateCell,
  type Inline,
  type InlineStyle,
  type LogprobsCell,
  type TableCell,
  type TableData,
  type TableRow,
} from "./tables";
import { correctionName, formatP, NOISE_WORDS, randomNullWords, SATURATED_MARK, SATURATED_WORDS, testShort, testWords } from "./stars";
import type { Heatmap, KSection, ModelReport, NegativeCell, ProfileReport, Report } from "./types";

export interface HtmlOptions {
  /** The browser bundle that draws the heatmaps (dist/report.js), inlined as it is. */
  script: string;
  /** When the page was generated (default: now). */
  generated?: Date;
}

/**
 * Text and attribute values: & < > " ' as character references; control characters visible
 * (format.ts visibleControls), but the tab and line feed that generated text keeps in its
 * pre-wrapped spans (a carriage return becomes a line feed, as an HTML parser reads it).
 */
export function escapeHtml(text: string): string {
  return visibleControls(text.replace(/\r\n?/g, "\n"), /[\t\n]/).replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!,
  );
}

/** JSON inside a <script type="application/json"> block: nothing in it can end the block. */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/>/g, "\\u003e")
    .replace(/&/g, "\\u0026")
    .replace(/[\u007f-\u009f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** A script's source inside <script>: `</script` and `<!--` cannot occur in it. */
export function scriptForInline(source: string): string {
  return source
    .replace(/<\/(script)/gi, "<\\/$1")
    .replace(/<!--/g, "<\\!--")
    .replace(/\/\/# sourceMappingURL=.*$/gm, "");
}

/** The id of the JSON block the page's script reads the heatmaps from. */
export const REPORT_DATA_ID = "bprof-report-data";

// Figures from the run are escaped as any of its text (defence in depth: a field is a number only
// once the run folder's check has passed, and a renderer may be handed a model built elsewhere).
/** Numbers as the page prints them: fixed decimals, the typographic minus. */
const num = (v: number, digits = 3) => esc(formatFixed(v, digits, MINUS));
const kText = (k: number) => esc(formatK(k));
const count = (n: number) => esc(formatCount(n));
/** A number of the run as it is (a seed, a count of items). */
const whole = (n: number) => esc(String(n));
const esc = escapeHtml;

class Counter {
  figures = 0;
  tables = 0;
  figure(): string {
    return `Figure ${++this.figures}.`;
  }
  table(): string {
    return `Table ${++this.tables}.`;
  }
}

export function renderHtml(report: Report, options: HtmlOptions): string {
  const counter = new Counter();
  const heatmaps: Heatmap[] = [];
  const { run } = report;
  const body: string[] = [];
  body.push(
    `<header><p class="kicker">Benchmark Profiler report</p><h1>Ability profile of run ${esc(run.id)}</h1>`,
    `<p class="lede">Ability Impact Score: AIS(<i>a</i>, <i>b</i>) = (P<sub>b</sub>(θ) ${MINUS} P<sub>b</sub>(θ<sub>a</sub>)) / (P<sub>b</sub>(θ) ${MINUS} P<sub>b</sub>(chance)), ` +
      `the share of benchmark <i>b</i>'s above-chance score that zeroing ability <i>a</i>'s top-<i>k</i> MLP parameters removes. ` +
      `Near 1: the benchmark depends on the ability; near 0: it does not; negative: the ability interferes. Metric: <b>${esc(report.metric)}</b>` +
      (report.models.some((m) => m.hasGeneration)
        ? ` for multiple-choice benchmarks, <b>exact_match</b> (chance 0) for generate_until benchmarks.</p>`
        : `.</p>`),
    metaTable([
      ["run", esc(run.id)],
      ["created", esc(run.created)],
      ["config", `<code>${esc(run.configFile)}</code>`],
      ["runner", esc(run.runnerVersion ?? "unknown")],
      ["results", `<code>${esc(run.resultsFile)}</code>`],
      ["models", esc(report.models.map((m) => m.name).join(", "))],
    ]),
    "</header>",
  );
  for (const model of report.models) body.push(modelSection(model, counter, heatmaps));
  const generated = (options.generated ?? new Date()).toISOString();
  body.push(
    `<footer>Generated ${esc(generated)} by <code>bprof report</code>. Method: Kim et al., “Benchmark Profiling: Mechanistic Diagnosis of LLM Benchmarks”, EMNLP 2025; ` +
      `intervals are paired bootstrap percentile intervals over benchmark documents.</footer>`,
  );

  return htmlPage({ generator: "bprof report", title: `Ability profile · run ${esc(run.id)}`, body, heatmaps, script: options.script });
}

/**
 * A self-contained page around a report's body: its style and script inlined under a nonce, the
 * heatmaps as JSON for the script, and a Content Security Policy that allows nothing else.
 * `title`: HTML already escaped.
 */
export function htmlPage(page: { generator: string; title: string; body: string[]; heatmaps: Heatmap[]; script: string }): string {
  const nonce = randomBytes(16).toString("base64");
  const csp = `default-src 'none'; style-src 'nonce-${nonce}'; script-src 'nonce-${nonce}'; img-src data:`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="Benchmark Profiler (${page.generator})">
<title>${page.title}</title>
<style nonce="${nonce}">${STYLE}</style>
</head>
<body>
<main>
${page.body.join("\n")}
</main>
<script type="application/json" id="${REPORT_DATA_ID}">${jsonForScript({ heatmaps: page.heatmaps })}</script>
<script nonce="${nonce}">${scriptForInline(page.script)}</script>
</body>
</html>
`;
}

export function metaTable(rows: [string, string][]): string {
  return `<table class="meta"><tbody>${rows.map(([k, v]) => `<tr><th scope="row">${esc(k)}</th><td>${v}</td></tr>`).join("")}</tbody></table>`;
}

/** A numbered table with its caption above it, as papers set them; close with CLOSE_TABLE. */
export function openTable(classes: string, label: string, text: string): string {
  return `<figure class="tbl"><figcaption><span class="label">${label}</span> ${text}</figcaption><table class="${classes}">`;
}

export const CLOSE_TABLE = "</tbody></table></figure>";

function modelSection(model: ModelReport, counter: Counter, heatmaps: Heatmap[]): string {
  const p = model.profile;
  const out: string[] = [`<section class="model"><h2>Model <span class="name">${esc(model.name)}</span></h2>`];
  const meta: [string, string][] = [
    ["path", `<code>${esc(model.path)}</code>`],
    ["dtype", esc(model.dtype)],
  ];
  if (p) {
    meta.push(
      ["parameters", `${count(p.parameters)} (${count(p.candidates)} ${candidatesWord(p)} can be ablated)`],
      ["k sweep", esc(p.k.map(formatK).join(", "))],
      ["selections", esc(p.selections.join(", "))],
      [
        "importance",
        rulesOf(model)
          .map((r) => esc(describeRule(r)))
          .join("; "),
      ],
      ["seed", whole(p.seed)],
      [
        "bootstrap",
        `${whole(p.bootstrap.resamples)} paired resamples, ${esc(formatConfidence(p.bootstrap.confidence))} percentile intervals`,
      ],
      ["abilities", p.abilities.map((a) => `${esc(a.name)} <span class="muted">(${esc(abilityWords(a))})</span>`).join("; ")],
    );
  }
  out.push(metaTable(meta));
  const baselineCaption = model.hasGeneration
    ? `Baseline scores of ${esc(model.name)} (unmodified model): acc and acc_norm of multiple-choice ` +
      `benchmarks, exact_match of generate_until benchmarks under the task's first filter (the others' exact_match after it).`
    : `Baseline accuracy of ${esc(model.name)} (unmodified model).`;
  out.push(openTable("booktabs", counter.table(), baselineCaption), ...tableHtml(tables.baselineTable(model)), CLOSE_TABLE);
  if (!p) {
    out.push(
      `<p class="muted">The run's config has no abilities: it scored the benchmarks only, so there is no AIS to show.</p></section>`,
    );
    return out.join("\n");
  }
  const confidence = esc(formatConfidence(p.bootstrap.confidence));
  const rules = rulesOf(model);
  const several = rules.length > 1;
  out.push(findingsSection(model, several));
  if (several) out.push(rulesSection(model, counter));
  for (const rule of rules)
    for (const s of rule.sections) out.push(kSection(model, rule, s, confidence, counter, heatmaps, several ? ruleLabel(rule) : undefined));
  out.push("</section>");
  return out.join("\n");
}

/** The row under a heatmap: each row's perplexity of the neutral text against the model's; empty for a run without the measure. */
function fluencyLine(p: ProfileReport, s: KSection): string {
  const f = p.fluency;
  if (!f) return "";
  const rows = s.rows.map(
    (r) => `<span class="lp${r.fluency && !r.fluency.fluent ? " error" : ""}">${esc(r.label)}: ${esc(fluencyText(r.fluency))}</span>`,
  );
  return (
    `<p class="fluency"><span class="label">Fluency</span> (perplexity of the ${f.text === "built-in" ? "built-in" : "config's"} neutral text; ` +
    `the unablated model ${num(f.perplexity, 2)}; rows past ${whole(f.max_perplexity_ratio)}&times; it are greyed in the figure): ${rows.join(" ")}</p>`
  );
}

/** The failure signatures found (report/signatures.ts), each with its figures, threshold and remedy. */
function findingsSection(model: ModelReport, several: boolean): string {
  if (model.findings.length === 0)
    return `<p class="findings none">Failure signatures: none found (every AIS near zero, the same AIS for several abilities, negative AIS on most benchmarks, an unstable ranking, a failing label).</p>`;
  const items = model.findings.map(
    (f) =>
      `<li><span class="label">${several ? `${esc(ruleLabel(f))} rule: ` : ""}${esc(f.title)}</span> ${esc(f.figures)} ` +
      `<span class="muted">(threshold: ${esc(f.threshold)})</span><br>Remedy: ${esc(f.remedy)}.</li>`,
  );
  return `<section class="findings"><h3>Failure signatures found (${model.findings.length})</h3><ul>${items.join("")}</ul></section>`;
}

/** The rules of a model side by side, one table per k (ruleComparisons). */
function rulesSection(model: ModelReport, counter: Counter): string {
  const out = [`<section class="rules"><h3>The importance rules side by side</h3>`];
  for (const c of ruleComparisons(model)) {
    out.push(
      openTable(
        "booktabs",
        counter.table(),
        `The rules at <i>k</i> = ${kText(c.k)}: the label check of each rule's top sets, and the share of their weights whose ` +
          `zeroing lowers the ability's own loss to first order (the signed rule ranks those last).`,
      ),
      ...tableHtml(tables.rulesTable(c)),
      CLOSE_TABLE,
    );
  }
  out.push("</section>");
  return out.join("\n");
}

/** `rule`: named in the heading when the model was ranked by several. */
function kSection(
  model: ModelReport,
  p: ProfileReport,
  s: KSection,
  confidence: string,
  counter: Counter,
  heatmaps: Heatmap[],
  rule?: string,
): string {
  const metric = s.metricLabel;
  heatmaps.push(s.heatmap);
  const out: string[] = [
    `<section class="k"><h3><i>k</i> = ${kText(s.k)}${rule ? ` · ${esc(rule)} rule` : ""} <span class="muted">· <i>n</i> = ${count(s.n)} of ${count(p.parameters)} parameters zeroed</span></h3>`,
  ];
  const cells = s.rows.flatMap((r) => r.cells);
  const significantCount = cells.filter((c) => c.significant).length;
  const undefinedCount = cells.filter((c) => c.ais === null).length;
  const saturatedCount = cells.filter((c) => c.saturated).length;
  const stars = esc(p.starWords);
  const marks =
    (significantCount === 0
      ? `No cell is starred (<b>*</b>: ${stars})`
      : `<b>*</b> marks the ${significantCount} starred cell${significantCount === 1 ? "" : "s"}: ${stars}`) +
    (saturatedCount > 0
      ? `; <span class="satmark">${SATURATED_MARK}</span> marks the ${saturatedCount} saturated cell${saturatedCount === 1 ? "" : "s"} (${esc(SATURATED_WORDS)})`
      : "");
  out.push(
    `<figure class="heatmap"><div class="canvas-wrap"><canvas id="${esc(s.heatmap.id)}" role="img" ` +
      `aria-label="${esc(`Heatmap of AIS (${metric}) of ${model.name} at k = ${formatK(s.k)}: abilities by benchmarks`)}"></canvas></div>`,
    `<noscript><p class="muted">The heatmap is drawn by the page's script; the table below holds the same numbers.</p></noscript>`,
    `<figcaption><span class="label">${counter.figure()}</span> AIS (${esc(metric)}) of ${esc(model.name)} at <i>k</i> = ${kText(s.k)}: ` +
      `abilities (rows) by benchmarks (columns). Diverging scale centred at 0, red where the benchmark depends on the ability, ` +
      `blue where removing it helps; values beyond ±${num(p.scaleLimit, 2)} take its end colours. ${marks}` +
      (undefinedCount > 0 ? `; hatched cells are undefined (n/a, with the reason's number).` : ".") +
      `</figcaption>`,
    `</figure>`,
  );
  out.push(fluencyLine(p, s));
  if (s.reasons.length > 0) out.push(reasonsList(s.reasons));

  out.push(`<div class="tables">`);

  out.push(
    `${openTable(
      "booktabs cells",
      counter.table(),
      `AIS (${esc(metric)}) at <i>k</i> = ${kText(s.k)} with ${confidence} CI bounds [low, high]; ` +
        `<b>*</b> = ${stars}` +
        (s.hasSaturated ? `; <span class="satmark">${SATURATED_MARK}</span> = ${esc(SATURATED_WORDS)}` : "") +
        (s.hasTests ? ". Each cell's title gives its p, q and test" : "") +
        ".",
    )}`,
    ...tableHtml(tables.aisTable(s)),
    CLOSE_TABLE,
  );
  out.push(testsTableHtml(s, p, "ais", counter), randomNullHtml(s, counter), noiseHtml(s, counter));

  if (s.labels.length > 0) {
    const held = s.labels.filter((l) => l.holds).length;
    out.push(
      `${openTable(
        "booktabs labels",
        counter.table(),
        `Ability labels at <i>k</i> = ${kText(s.k)} (${esc(metric)}): ablating the labelled ability ` +
          `hurts the benchmark most for <b>${held} of ${s.labels.length} labelled benchmarks</b>. Each row compares the AIS of the label's top set on ` +
          `the benchmark with the largest AIS of that row on a benchmark without the label.`,
      )}`,
      ...tableHtml(tables.labelsTable(s)),
      CLOSE_TABLE,
    );
  }

  if (s.expectations.length > 0) out.push(expectationsSection(s, stars, counter));
  if (s.consistency.length > 0) out.push(consistencySection(s, confidence, counter));
  if (s.pairs.length > 0) out.push(pairsSection(s, confidence, stars, counter));

  if (s.hasSpecificity) {
    out.push(
      `${openTable(
        "booktabs cells",
        counter.table(),
        `Specificity at <i>k</i> = ${kText(s.k)}: AIS of the ability's top set minus AIS of ` +
          `a random set of the same size (the random control), with ${confidence} CI from the same resamples; ` +
          `<b>*</b> = ${stars}.`,
      )}`,
      ...tableHtml(tables.specificityTable(s)),
      CLOSE_TABLE,
      testsTableHtml(s, p, "specificity", counter),
    );
  }

  if (s.overlap) {
    out.push(
      `${openTable(
        "booktabs overlap",
        counter.table(),
        `Ability overlap at <i>k</i> = ${kText(s.k)}: Jaccard index |A ∩ B| / |A ∪ B| ` +
          `of the abilities' top-<i>k</i> parameter sets (|A ∩ B| below; the diagonal holds each set's size). Shared parameters mean one ` +
          `ablation also damages the other ability.`,
      )}`,
      ...tableHtml(tables.overlapTable(s)),
      CLOSE_TABLE,
    );
  }

  if (s.stability.length > 0) {
    out.push(
      `${openTable(
        "booktabs",
        counter.table(),
        `Ranking stability at <i>k</i> = ${kText(s.k)}: each ability's top ${count(s.n)} ` +
          `ranked from two halves of its diagnostic items (split with the seed), and the Jaccard index of the two sets. Near 1, the items are ` +
          `enough for a stable ranking; far below, the ranking depends on which items were drawn.`,
      )}`,
      ...tableHtml(tables.stabilityTable(s)),
      CLOSE_TABLE,
    );
  }

  if (s.chunked.length > 0) {
    out.push(
      `${openTable(
        "booktabs",
        counter.table(),
        `Chunked selection against the exact top <i>n</i> at <i>k</i> = ${kText(s.k)}: each ability's ` +
          `<code>top_chunked</code> set (the authors' released code: the candidates cut into chunks of at least a million, the top ` +
          `⌈<i>n</i> / candidates × chunk⌉ of each) against its exact top ${count(s.n)}; Jaccard index |C ∩ T| / |C ∪ T|.`,
      )}`,
      ...tableHtml(tables.chunkedTable(s)),
      CLOSE_TABLE,
    );
  }

  const lowering = tables.loweringTable(s);
  if (lowering) {
    out.push(
      `${openTable(
        "booktabs",
        counter.table(),
        `Zeroed weights that lower their own ability's loss at <i>k</i> = ${kText(s.k)}: ` +
          `of each set's ${count(s.n)} weights, those whose zeroing lowers the ability's diagnostic loss to first order ` +
          `(${MINUS}θ × g &lt; 0). A top set ranked by the paper's |θ × g| held about half in the demo model; one ranked by ${MINUS}θ × g ` +
          `(<code>method: signed</code>) holds none.`,
      )}`,
      ...tableHtml(lowering),
      CLOSE_TABLE,
    );
  }

  out.push(
    `${openTable(
      "booktabs cells",
      counter.table(),
      `Flips at <i>k</i> = ${kText(s.k)} (${esc(metric)}): documents the ablation turned ` +
        `right → wrong / wrong → right; (baseline − ablated) × documents = right → wrong − wrong → right.`,
    )}`,
    ...tableHtml(tables.flipsTable(s)),
    CLOSE_TABLE,
  );

  out.push(`</div>`);
  if (s.negativeCells.length > 0) {
    out.push(
      `<div class="flipped"><h4>Flipped documents of cells with a negative AIS</h4>`,
      ...(s.negativeCells.some((c) => c.metric !== "exact_match")
        ? [
            `<p class="muted">Multiple choice, per document: the gold choice (target), the choice predicted before and after the ablation, and each choice's summed ` +
              `log-likelihood${s.metrics.includes("acc_norm") ? " (per UTF-8 byte in brackets, which acc_norm compares)" : ""}; the predicted choice is bold, the target underlined.</p>`,
          ]
        : []),
      ...(s.negativeCells.some((c) => c.metric === "exact_match")
        ? [
            `<p class="muted">Generation, per document: the target, the answer the task's filter extracted before and after the ablation, and the ` +
              `generated text (cut at the first stop string) before and after.</p>`,
          ]
        : []),
      ...s.negativeCells.map((c) => negativeCellHtml(c, new Set(s.metrics).size > 1, counter)),
      `</div>`,
    );
  }
  out.push("</section>");
  return out.join("\n");
}

/** The tests behind a table's stars: per cell its q and p, the test per column; nothing in a run before them. */
function testsTableHtml(s: KSection, p: ProfileReport, measure: "ais" | "specificity", counter: Counter): string {
  const t = tables.testsTable(s, measure);
  if (!t) return "";
  const correction = p.stats ? ` (${esc(correctionName(p.stats))} over the table; starred below ${whole(p.stats.threshold)})` : "";
  return [
    openTable(
      "booktabs cells",
      counter.table(),
      `Tests of the ${measure === "ais" ? "AIS" : "specificity"} cells at <i>k</i> = ${kText(s.k)}: per cell its q${correction} and ` +
        `below it its two-sided p; the column's test in its header (McNemar: ${esc(testWords("mcnemar"))}, for 0/1 scores; ` +
        `bootstrap: ${esc(testWords("bootstrap"))}'s p, for a task's own scores and groups).`,
    ),
    ...tableHtml(t),
    CLOSE_TABLE,
  ].join("\n");
}

/** Each top cell against the random control's draws at this k; nothing without them. */
function randomNullHtml(s: KSection, counter: Counter): string {
  const t = tables.randomNullTable(s);
  if (!t || s.randomDraws === null) return "";
  return [
    openTable(
      "booktabs cells",
      counter.table(),
      `Against the random draws at <i>k</i> = ${kText(s.k)}: ${esc(randomNullWords(s.randomDraws))}. Per top cell, the empirical p and the margin.`,
    ),
    ...tableHtml(t),
    CLOSE_TABLE,
  ].join("\n");
}

/** Each benchmark's signal, noise and snr, snr descending, the benchmarks whose profile is noise named; nothing in a run without it. */
function noiseHtml(s: KSection, counter: Counter): string {
  const t = tables.noiseTable(s);
  if (!t) return "";
  const noise = s.noise.filter((n) => n.isNoise);
  const verdict =
    noise.length === 0
      ? "Every benchmark's snr is at least 1."
      : `The profile is noise on <b>${noise.map((n) => esc(n.column)).join(", ")}</b>.`;
  return [
    openTable("booktabs", counter.table(), `Benchmark noise at <i>k</i> = ${kText(s.k)}: ${esc(NOISE_WORDS)}. ${verdict}`),
    ...tableHtml(t),
    CLOSE_TABLE,
  ].join("\n");
}

/** The config's expected abilities per benchmark against this k's AIS (report/expectations.ts). */
function expectationsSection(s: KSection, stars: string, counter: Counter): string {
  return [
    openTable(
      "booktabs labels",
      counter.table(),
      `Expected abilities at <i>k</i> = ${kText(s.k)} (${esc(s.metricLabel)}): per benchmark, the abilities the config expects it ` +
        `to need with the AIS of their top sets, how many of them show (a positive starred AIS, <b>*</b>: ${stars}), ` +
        `the abilities not expected that show, and where weights are given Spearman's ρ of the weights and the AIS.`,
    ),
    ...tableHtml(tables.expectationsTable(s)),
    CLOSE_TABLE,
  ].join("\n");
}

/** Abilities measured with a second diagnostic set: the two AIS rows compared (report/consistency.ts). */
function consistencySection(s: KSection, confidence: string, counter: Counter): string {
  return [
    openTable(
      "booktabs labels",
      counter.table(),
      `Consistency at <i>k</i> = ${kText(s.k)} of the abilities measured with a second diagnostic set (<code>of</code>): ` +
        `Spearman's ρ of the two sets' AIS across the benchmarks, and the benchmarks where one set's ${confidence} CI excludes the other's AIS.`,
    ),
    ...tableHtml(tables.consistencyTable(s)),
    CLOSE_TABLE,
  ].join("\n");
}

/** Two abilities ablated together (ablation.pairs): the interference per benchmark. */
function pairsSection(s: KSection, confidence: string, stars: string, counter: Counter): string {
  return [
    openTable(
      "booktabs cells",
      counter.table(),
      `Two abilities at once at <i>k</i> = ${kText(s.k)} (${esc(s.metricLabel)}): the interference AIS(A+B) ${MINUS} AIS(A) ${MINUS} AIS(B) ` +
        `with ${confidence} CI bounds (<b>*</b> = ${stars}; 0 when the two effects add up, negative when the union removes less ` +
        `than both alone), then the AIS of the union of the two top sets (<i>n</i> weights); n/a with a number: undefined, the reason under the figure.`,
    ),
    ...tableHtml(tables.pairsTable(s)),
    CLOSE_TABLE,
  ].join("\n");
}

function reasonsList(reasons: string[]): string {
  return `<ol class="reasons">${reasons.map((r) => `<li>${esc(r)}</li>`).join("")}</ol>`;
}

/** A table's header and body rows (between openTable and CLOSE_TABLE): words left, figures right. */
export function tableHtml(t: TableData): string[] {
  const textClass = (i: number) => (t.columns[i]!.align === "l" && i > 0 ? ' class="text"' : "");
  const header = t.columns.map((c, i) => `<th${textClass(i)}>${inlineHtml(c.header)}</th>`).join("");
  const row = (r: TableRow) => {
    const cells = r.cells.map((c, i) =>
      i === 0 && t.rowHeads ? `<th scope="row">${inlineHtml(c as Inline[])}</th>` : cellHtml(c, textClass(i)),
    );
    return `<tr${r.group ? ' class="group"' : ""}>${cells.join("")}</tr>`;
  };
  return [`<thead><tr>${header}</tr></thead><tbody>`, ...t.rows.map(row)];
}

/** Inline content: names escaped, figures with the typographic minus. */
const HTML_INLINE: InlineStyle = {
  text: esc,
  figure: (v, digits) => num(v, digits),
  count,
  muted: (content) => `<span class="muted">${content}</span>`,
  strong: (content) => `<b>${content}</b>`,
  variable: (name) => `<i>${esc(name)}</i>`,
  quoted: (text) => `<span class="gen">${esc(text)}</span>`,
};
const inlineHtml = (parts: Inline[]) => writeInline(parts, HTML_INLINE);

/** `textClass`: the column's, for cells of words. */
function cellHtml(c: TableCell, textClass: string): string {
  if (Array.isArray(c)) return `<td${textClass}>${inlineHtml(c)}</td>`;
  const sig = (significant: boolean) => (significant ? ' class="sig"' : "");
  const ci = (interval: { low: number; high: number } | null) => (interval ? esc(formatInterval(interval, 3, MINUS)) : "");
  switch (c.kind) {
    case "estimate": {
      const title = estimateTitle(c);
      if (c.value === null) return `<td class="na"${title}>n/a<sup>${c.reason === undefined ? "" : whole(c.reason)}</sup></td>`;
      const classes = [...(c.significant ? ["sig"] : []), ...(c.saturated ? ["sat"] : [])];
      const mark = `${c.significant ? "*" : ""}${c.saturated ? `<span class="satmark">${SATURATED_MARK}</span>` : ""}`;
      return `<td${classes.length > 0 ? ` class="${classes.join(" ")}"` : ""}${title}>${num(c.value)}${mark}${c.ci ? `<span class="ci">${ci(c.ci)}</span>` : ""}</td>`;
    }
    case "test": {
      const mark = `${c.significant ? "*" : ""}${c.saturated ? `<span class="satmark">${SATURATED_MARK}</span>` : ""}`;
      const p = c.p === null ? "" : `<span class="ci">p ${esc(formatP(c.p))}${c.test ? `, ${esc(testShort(c.test))}` : ""}</span>`;
      return `<td${sig(c.significant)}>${c.q === null ? "–" : `q ${esc(formatP(c.q))}`}${mark}${p}</td>`;
    }
    case "null": {
      const r = c.randomNull;
      if (!r) return `<td class="na">–</td>`;
      return `<td>p ${esc(formatP(r.p))}${r.margin === null ? "" : `<span class="ci">${r.margin > 0 ? "+" : ""}${num(r.margin, 2)} sd</span>`}</td>`;
    }
    case "interference": {
      const x = c.cell;
      const tested =
        x.q !== undefined
          ? ` title="${esc(`q ${x.q === null ? "n/a" : formatP(x.q)}, p ${x.p === null || x.p === undefined ? "n/a" : formatP(x.p)} (the paired bootstrap)`)}"`
          : "";
      if (x.interference === null)
        return `<td class="na">n/a${x.reason === undefined ? "" : `<sup>${whole(x.reason)}</sup>`}<span class="ci">AIS ${x.ais === null ? "n/a" : num(x.ais)}</span></td>`;
      return `<td${sig(x.significant)}${tested}>${num(x.interference)}${x.significant ? "*" : ""}<span class="ci">${ci(x.interferenceCi)}; AIS ${num(x.ais!)}</span></td>`;
    }
    case "overlap":
      return `<td class="j${Math.round(Math.min(1, Math.max(0, c.jaccard)) * 10)}">${num(c.jaccard)}<span class="ci">${count(c.shared)}</span></td>`;
    case "difference": {
      const x = c.cell;
      if (!x || x.difference === null) return `<td class="na">n/a</td>`;
      const mark = (x.significant ? "*" : "") + (x.signDiffers ? ` ${SIGN_DIFFERS_MARK}` : "");
      return `<td${sig(x.significant)}>${signedNum(x.difference)}${mark}${x.interval ? `<span class="ci">${ci(x.interval)}</span>` : ""}</td>`;
    }
    case "flip":
      return `<td${textClass}>${flipText(c.direction)}</td>`;
    case "logprobs":
      return `<td${textClass}>${logprobsHtml(c)}</td>`;
  }
}

/** An estimate's detail as its cell's title (a hover): its q, p and test, its interval's verdict, saturation, its random null; "" in runs before them. */
function estimateTitle(c: EstimateCell): string {
  if (c.p === undefined && c.q === undefined) return "";
  const parts = [
    `${c.significant ? "starred" : "not starred"}: q ${c.q === null || c.q === undefined ? "n/a" : formatP(c.q)}`,
    `p ${c.p === null || c.p === undefined ? "n/a" : formatP(c.p)}${c.test ? ` (${testWords(c.test)})` : ""}`,
    ...(c.intervalExcludes0 !== undefined && c.value !== null ? [`the interval ${c.intervalExcludes0 ? "excludes" : "includes"} 0`] : []),
    ...(c.saturated ? ["saturated: the ablated score is at chance, the AIS at its ceiling"] : []),
    ...(c.randomNull
      ? [
          `random null over ${c.randomNull.draws} draws: p ${formatP(c.randomNull.p)}` +
            (c.randomNull.margin === null ? "" : `, margin ${formatFixed(c.randomNull.margin, 2)} sd`),
        ]
      : []),
  ];
  return ` title="${esc(parts.join("; "))}"`;
}

/** A difference with its sign: + before a positive one that does not round to 0. */
export function signedNum(v: number): string {
  return (v > 0 && Number(v.toFixed(3)) !== 0 ? "+" : "") + num(v);
}

function negativeCellHtml(c: NegativeCell, mixed: boolean, counter: Counter): string {
  const ci = c.ci ? ` ${esc(formatInterval(c.ci, 3, MINUS))}` : "";
  const title =
    `${esc(c.row)} × ${esc(c.benchmark)}${mixed ? ` (${esc(c.metric)})` : ""}: AIS ${num(c.ais)}${ci}${c.significant ? "*" : ""}; ` +
    `${whole(c.rightToWrong)} right → wrong, ${whole(c.wrongToRight)} wrong → right.`;
  if (c.error) return `<p><b>${title}</b> <span class="error">The documents could not be recovered: ${esc(c.error)}</span></p>`;
  const more = c.omitted > 0 ? `<p class="muted">… and ${whole(c.omitted)} more documents (the JSON report lists them all).</p>` : "";
  return `${openTable("booktabs docs", counter.table(), title)}${tableHtml(tables.documentsTable(c)).join("")}${CLOSE_TABLE}${more}`;
}

function flipText(direction: "right_to_wrong" | "wrong_to_right"): string {
  return direction === "right_to_wrong" ? `<span class="down">right → wrong</span>` : `<span class="up">wrong → right</span>`;
}

/** Each choice's log-likelihood (per byte in brackets where acc_norm compares them): the predicted choice bold, the target underlined. */
function logprobsHtml(c: LogprobsCell): string {
  const d = c.document;
  return c.logprobs
    .map((lp, i) => {
      const perByte = c.perByte ? ` <span class="muted">[${num(lp / Math.max(1, d.choiceBytes[i] ?? 1))}]</span>` : "";
      const classes = [i === c.predicted ? "pred" : "", i === d.target ? "target" : ""].filter(Boolean).join(" ");
      return `<span class="lp${classes ? ` ${classes}` : ""}">${i}: ${num(lp, 2)}${perByte}</span>`;
    })
    .join("");
}

/** The page's style sheet, shared by the comparison report (compareHtml.ts). */
export const STYLE = `
:root { --ink: #1b1b1b; --muted: #5c6066; --rule: #1b1b1b; --hair: #d4d4d4; --paper: #ffffff; --red: #b2182b; --blue: #2166ac; }
* { box-sizing: border-box; }
html { background: var(--paper); }
body { margin: 0; color: var(--ink); background: var(--paper);
  font: 14px/1.5 "Helvetica Neue", Helvetica, Arial, "Liberation Sans", "DejaVu Sans", system-ui, sans-serif; }
main { max-width: 1120px; margin: 0 auto; padding: 36px 48px 64px; }
header { border-bottom: 2px solid var(--rule); padding-bottom: 16px; }
.kicker { margin: 0; color: var(--muted); font-size: 12px; letter-spacing: 0.08em; text-transform: uppercase; }
h1 { font-size: 26px; font-weight: 600; margin: 2px 0 10px; letter-spacing: -0.01em; }
h2 { font-size: 20px; font-weight: 600; margin: 44px 0 10px; padding-bottom: 4px; border-bottom: 1px solid var(--rule); }
h3 { font-size: 16px; font-weight: 600; margin: 36px 0 6px; }
h4 { font-size: 14px; font-weight: 600; margin: 22px 0 4px; }
.lede { max-width: 860px; margin: 0 0 14px; }
.muted { color: var(--muted); font-weight: normal; }
code { font: 12.5px/1.4 "DejaVu Sans Mono", Menlo, Consolas, monospace; word-break: break-all; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; margin: 14px 0 8px; }
figure.tbl { margin: 22px 0 8px; }
figure.tbl figcaption { font-size: 13px; max-width: 860px; margin: 0 0 6px; }
figure.tbl table { margin: 0; }
.tables { display: flex; flex-wrap: wrap; align-items: flex-start; column-gap: 56px; }
.tables figure.tbl figcaption { max-width: 480px; }
.label { font-weight: 600; }
table.meta { margin: 6px 0 10px; }
table.meta th { text-align: left; font-weight: 600; color: var(--muted); padding: 1px 18px 1px 0; vertical-align: top; white-space: nowrap; }
table.meta td { padding: 1px 0; }
table.booktabs { border-top: 1.5px solid var(--rule); border-bottom: 1.5px solid var(--rule); }
table.booktabs thead th { border-bottom: 0.8px solid var(--rule); font-weight: 600; vertical-align: bottom; }
table.booktabs th, table.booktabs td { padding: 4px 14px; text-align: right; vertical-align: top; }
table.booktabs th:first-child, table.booktabs td:first-child { text-align: left; padding-left: 2px; }
table.booktabs tbody th { font-weight: normal; white-space: nowrap; }
table.booktabs tr.group > * { border-top: 0.8px solid var(--hair); }
td.sig { font-weight: 600; }
.satmark { font-size: 10.5px; font-style: italic; color: var(--muted); margin-left: 2px; }
td.na { color: var(--muted); font-style: italic; }
td .ci { display: block; color: var(--muted); font-size: 11.5px; font-weight: normal; }
table.booktabs .text { text-align: left; }
.lp { display: inline-block; margin-right: 12px; white-space: nowrap; }
.gen { font: 12.5px/1.4 "DejaVu Sans Mono", Menlo, Consolas, monospace; white-space: pre-wrap; word-break: break-word; background: #f4f4f4; padding: 0 2px; }
.lp.pred { font-weight: 600; }
.lp.target { text-decoration: underline; text-underline-offset: 2px; }
.down { color: var(--red); }
.up { color: var(--blue); }
.error { color: var(--red); }
figure.heatmap { margin: 14px 0 6px; }
.canvas-wrap { overflow-x: auto; }
canvas { display: block; }
figcaption { font-size: 13px; max-width: 860px; margin-top: 4px; }
.figure-tools { margin: 2px 0 0; font-size: 12px; }
.figure-tools a { color: var(--blue); text-decoration: none; }
.figure-tools a:hover { text-decoration: underline; }
section.findings ul { max-width: 860px; padding-left: 20px; }
section.findings li { margin: 0 0 8px; border-left: 3px solid var(--red); padding-left: 8px; list-style: none; }
ol.reasons { font-size: 12.5px; color: var(--muted); margin: 6px 0 0; padding-left: 22px; max-width: 860px; }
table.overlap td { min-width: 86px; }
${Array.from({ length: 11 }, (_, i) => `td.j${i} { background: rgba(33, 102, 172, ${(0.05 + 0.45 * (i / 10)).toFixed(3)}); }`).join("\n")}
footer { margin-top: 56px; padding-top: 10px; border-top: 1px solid var(--hair); color: var(--muted); font-size: 12px; }
@media print { main { padding: 0; } .figure-tools { display: none; } section.k { break-inside: avoid-page; } }
`;
