// What the stars say, in every format and view: a run with the tests (results' `stats`) stars a
// cell by its q over its table and says which correction did; a run made before them stars by the
// interval and says "the interval excludes 0". A saturated cell is marked beside its star, and a
// difference made of one (specificity, interference) is n/a with its reason. The benchmarks' noise
// is a section of every report, sorted by snr, naming those whose profile is noise; CSV and JSON
// carry p, q and the test; a random null from R draws is in the top cells' details.
import assert from "node:assert/strict";
import { parse as parseCsv } from "csv-parse/sync";
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { formatAisTables, formatRunSummary } from "../../../src/cli/aisTable";
import { flatCells } from "../../../src/core/report/cells";
import { renderHtml } from "../../../src/core/report/html";
import { renderReport } from "../../../src/core/report/index";
import { loadRun, type LoadedRun } from "../../../src/core/report/load";
import { renderMarkdown } from "../../../src/core/report/markdown";
import { buildReport } from "../../../src/core/report/model";
import { formatP, starWords } from "../../../src/core/report/stars";
import { heatmapSvg } from "../../../src/core/report/svg";
import { resultsView, viewCsv } from "../../../src/core/report/view";
import { CAUSAL, fixtureResults, QUANT, SATURATED, withTests, writeFixtureRun } from "../../support/reportFixture";

const BH = "Benjamini-Hochberg q < 0.05 over each table (false discovery rate 0.05)";
const SCRIPT = "/* heatmap bundle */";

let tested: LoadedRun;
let old: LoadedRun;
const dirs: string[] = [];

before(async () => {
  const a = await writeFixtureRun(withTests(fixtureResults()));
  const b = await writeFixtureRun();
  dirs.push(a, b);
  tested = await loadRun(a);
  old = await loadRun(b);
});
after(async () => {
  for (const dir of dirs) await fs.rm(path.dirname(path.dirname(dir)), { recursive: true, force: true });
});

const render = async (run: LoadedRun, format: "html" | "md" | "csv" | "json" | "latex", k?: number) =>
  (await renderReport(run, { format, script: SCRIPT, ...(k !== undefined ? { k } : {}) })).text;

test("formatP: three significant digits rounded down, so a q shown below a threshold is below it", () => {
  assert.equal(formatP(0.0123), "0.0123");
  assert.equal(formatP(0.04999), "0.0499");
  assert.equal(formatP(0.05), "0.0500");
  assert.equal(formatP(0.8), "0.800");
  assert.equal(formatP(1), "1.00");
  assert.equal(formatP(0.00002), "<0.0001");
  assert.equal(formatP(0), "0");
});

test("a profile with stats says its correction in every format and view", async () => {
  assert.equal(starWords({ correction: "bh", threshold: 0.05, min_effect: 0.1 }), BH);
  const md = await render(tested, "md");
  assert.ok(md.includes(`**AIS (acc)** with 95% CI; \\* = ${BH.replace("<", "\\<")}`), "the AIS table's legend");
  assert.ok(
    md.includes(
      "with 95% CI; \\* = Benjamini-Hochberg q \\< 0.05 over each table (false discovery rate 0.05); n/a (i): undefined, reason i above.",
    ),
  );
  assert.ok(md.includes("**Tests of the AIS cells**: per cell its q (Benjamini-Hochberg over the table, starred below 0.05)"));
  assert.doesNotMatch(md, /the interval excludes 0|the CI excludes 0/);

  const html = await render(tested, "html");
  assert.ok(html.includes(`<b>*</b> = ${BH.replace("<", "&lt;")}`), "the AIS table's caption");
  assert.ok(html.includes(`<b>*</b> marks the 2 starred cells: ${BH.replace("<", "&lt;")}`), "the figure's caption");
  assert.doesNotMatch(html, /CI excludes 0\./);

  const tex = await render(tested, "latex");
  assert.ok(
    tex.includes(
      "$^{*}$: Benjamini-Hochberg q \\textless{} 0.05 over each table (false discovery rate 0.05); each cell's q, p and test are in Table~\\ref{tab:tests-tiny-m-v1-k001}.",
    ),
  );
  assert.ok(tex.includes("\\label{tab:tests-tiny-m-v1-k001}"));

  const report = await buildReport(tested);
  const terminal = formatAisTables(report.models[0]!);
  assert.ok(terminal.includes(`95% CI; * = ${BH}; sat. = saturated`));
  assert.ok(formatRunSummary(report.models[0]!).includes(`  stars: ${BH}`));

  const view = await resultsView(tested);
  assert.equal(view.profile!.legend.stars, BH);
  assert.equal(view.profile!.legend.tested, true);
  // the hover: starred by its q, its p and test, the interval's verdict
  const causal = view.profile!.heatmap.cells.find((c) => c.row === 0 && c.column === 0)!;
  assert.deepEqual(causal.tooltip.slice(1, 4), [
    "starred: q 0.0123 (Benjamini-Hochberg, threshold 0.05)",
    "p 0.00300, McNemar's exact test on the flips",
    "the 95% CI excludes 0",
  ]);
});

test("a saturated cell is marked beside its star, and the differences made of it are n/a with their reason", async () => {
  const report = await buildReport(tested);
  const s = report.models[0]!.profile!.sections[1]!;
  const quant = s.rows[1]!.cells[0]!;
  assert.deepEqual(
    [quant.ais, quant.saturated, quant.significant, quant.q],
    [1, true, true, 0.001],
    "starred as results.json has it, and marked",
  );
  assert.equal(s.hasSaturated, true);
  // its specificity and the pair's interference: n/a, numbered after the AIS cells' reasons
  assert.deepEqual(s.reasons, [SATURATED]);
  assert.equal(quant.specificity!.reason, 1);
  assert.equal(s.pairs[0]!.cells[0]!.reason, 1);
  const label = s.heatmap.cells.find((c) => c.row === 1 && c.column === 0)!;
  assert.deepEqual([label.label, label.footnote, label.significant], ["1.00*", "sat.", true]);
  assert.ok(label.tooltip.some((l) => l.startsWith("sat. saturated: the ablated score is at chance")));

  const md = await render(tested, "md");
  assert.ok(
    md.includes("| Quantitative\\_Reasoning\\|50% | 1.000 [0.800, 1.200] \\* (sat.) | 0.000 [0.000, 0.000] |"),
    "AIS: starred and marked",
  );
  assert.ok(md.includes("; (sat.) = saturated: the ablated score is at chance"), "explained in the legend");
  assert.ok(md.includes("| Quantitative\\_Reasoning\\|50% | n/a (1) | 0.000 [0.000, 0.000] |"), "its specificity: n/a (1)");
  assert.ok(md.includes(`1. ${SATURATED}`));
  assert.ok(md.includes("| Commonsense & Causal Reasoning + Quantitative\\_Reasoning\\|50% | 1,750 | n/a (1) (AIS 1.000) |"), "the pair");

  const html = await render(tested, "html");
  assert.match(
    html,
    /<td class="[^"]*sat[^"]*" title="starred: q 0\.00100; [^"]*saturated[^"]*">1\.000[^<]*(<b>\*<\/b>)?<span class="satmark">sat\.<\/span>/,
  );
  assert.ok(html.includes('<td class="na">n/a<sup>1</sup><span class="ci">AIS 1.000</span></td>'), "the pair's n/a");

  const tex = await render(tested, "latex");
  assert.ok(tex.includes("Quantitative\\_Reasoning\\textbar{}50\\% & $1.00^{*,\\mathrm{sat}}$ & $0.00$ \\\\"));
  assert.ok(tex.includes("$^{\\mathrm{sat}}$: saturated: the ablated score is at chance"));

  const terminal = formatAisTables(report.models[0]!);
  assert.match(terminal, /^Quantitative_Reasoning\|50%\s+ 1\.000 \[0\.800, 1\.200\] \* sat\.\s/m);
  assert.match(formatAisTables(report.models[0]!, 80), /Quantitative_Reasoning\|50%\s+1\.000\* sat\./);

  const cell = flatCells(tested.results).find(
    (c) => c.ability === QUANT && c.k === 0.01 && c.benchmark === "arc_easy" && c.metric === "acc",
  )!;
  assert.deepEqual(
    [cell.significant, cell.saturated, cell.q, cell.specificity, cell.specificity_reason],
    [true, true, 0.001, null, SATURATED],
  );
  const view = (await resultsView(tested)).profile!;
  assert.equal(view.table.rows[1]!.cells[0], "1.000* sat. [0.800, 1.200]");
  assert.match(view.legend.saturated!, /^sat\. = saturated/);
  const svg = heatmapSvg(view.heatmap, { text: "#000", muted: "#666", background: null, fontFamily: "sans-serif" });
  assert.ok(svg.includes(">1.00* (sat.)</text>"));
});

test("the noise section lists the benchmarks by snr, highest first, and names those below 1", async () => {
  const report = await buildReport(tested);
  const [small, large] = report.models[0]!.profile!.sections;
  assert.deepEqual(
    large!.noise.map((n) => [n.benchmark, n.snr, n.isNoise]),
    [
      ["logiqa", 4, false],
      ["arc_easy", 0.625, true],
    ],
  );
  assert.deepEqual(
    small!.noise.map((n) => n.benchmark),
    ["arc_easy", "logiqa"],
  );

  const md = await render(tested, "md", 0.01);
  assert.match(md, /\*\*Benchmark noise\*\* at k = 0\.01: signal: .*\. The profile is noise on arc\\_easy\./);
  assert.ok(md.includes("| logiqa | 0.800 | 0.200 | 4.00 | signal |\n| arc\\_easy | 0.250 | 0.400 | 0.63 | **noise (snr < 1)** |"), md);

  const html = await render(tested, "html", 0.01);
  assert.ok(html.includes("The profile is noise on <b>arc_easy</b>."));
  assert.ok(html.indexOf('<th scope="row">logiqa</th><td>0.800</td>') < html.indexOf('<th scope="row">arc_easy</th><td>0.250</td>'));

  const tex = await render(tested, "latex");
  assert.ok(tex.includes("\\label{tab:noise-tiny-m-v1-k001}"));
  assert.ok(tex.includes("The profile is noise on arc\\_easy (tiny"));
  assert.ok(tex.includes("arc\\_easy & $0.25$ & $0.40$ & $0.63$ & \\textbf{noise (snr \\textless{} 1)} \\\\"));

  const json = JSON.parse(await render(tested, "json"));
  assert.deepEqual(
    json.noise.filter((n: { k: number }) => n.k === 0.01).map((n: { benchmark: string; is_noise: boolean }) => [n.benchmark, n.is_noise]),
    [
      ["arc_easy", true],
      ["logiqa", false],
    ],
  );
  assert.ok(
    formatRunSummary(report.models[0]!).includes(
      "  benchmark noise: the profile is noise (snr < 1: the abilities' differences within the benchmark's noise) on 1 of 2 benchmark(s): arc_easy 0.63",
    ),
  );

  // the results view: the config's order unless asked; by snr, the figure, the table and the cells' refs follow
  const view = await resultsView(tested);
  assert.deepEqual(view.choices.sorts, ["config", "snr"]);
  assert.equal(view.query.sort, "config");
  assert.deepEqual(view.profile!.benchmarks, ["arc_easy", "logiqa"]);
  const sorted = await resultsView(tested, { sort: "snr" });
  assert.equal(sorted.query.sort, "snr");
  assert.deepEqual(sorted.profile!.benchmarks, ["logiqa", "arc_easy"]);
  assert.deepEqual(sorted.profile!.heatmap.columns, ["logiqa", "arc_easy"]);
  assert.deepEqual(sorted.profile!.table.rows[0], { label: CAUSAL, cells: ["-1.000 [-2.000, 0.000]", "0.500* [0.200, 0.800]"] });
  assert.deepEqual(
    sorted.profile!.pairs[0]!.cells.map((c) => c.benchmark),
    ["logiqa", "arc_easy"],
  );
  assert.deepEqual(sorted.profile!.pairsHeatmap!.columns, ["logiqa", "arc_easy"]);
  assert.deepEqual(
    sorted.profile!.noise.map((n) => n.benchmark),
    ["logiqa", "arc_easy"],
  );
  // a run without the measure offers no sort, and a sort asked of it is the config's
  const plain = await resultsView(old, { sort: "snr" });
  assert.deepEqual([plain.choices.sorts, plain.query.sort, plain.profile!.benchmarks], [[], "config", ["arc_easy", "logiqa"]]);
});

test("CSV and JSON carry p, q, the test, the interval's verdict, saturation and the random null", async () => {
  const text = await render(tested, "csv");
  const header = text.split("\r\n")[0]!.split(",");
  assert.deepEqual(header.slice(header.indexOf("group_tasks") + 1, header.indexOf("group_tasks") + 6), [
    "p",
    "q",
    "test",
    "interval_excludes_0",
    "saturated",
  ]);
  const json = JSON.parse(await render(tested, "json"));
  const causal = json.cells.find(
    (c: Record<string, unknown>) => c.ability === CAUSAL && c.k === 0.01 && c.benchmark === "arc_easy" && c.metric === "acc",
  );
  assert.deepEqual(
    Object.fromEntries(
      [
        "significant",
        "p",
        "q",
        "test",
        "interval_excludes_0",
        "saturated",
        "specificity_p",
        "specificity_q",
        "specificity_test",
        "random_null_draws",
        "random_null_p",
        "random_null_margin",
        "benchmark_snr",
      ].map((key) => [key, causal[key]]),
    ),
    {
      significant: true,
      p: 0.003,
      q: 0.0123,
      test: "mcnemar",
      interval_excludes_0: true,
      saturated: false,
      specificity_p: 0.004,
      specificity_q: 0.016,
      specificity_test: "mcnemar",
      random_null_draws: 19,
      random_null_p: 0.05,
      random_null_margin: 4.8,
      benchmark_snr: 0.625,
    },
  );
  // the same row in the CSV, its new columns after the old ones
  const records = parseCsv(text) as string[][];
  const row = records.find((r) => r[1] === CAUSAL && r[4] === "0.01" && r[6] === "arc_easy" && r[7] === "acc")!;
  assert.deepEqual(row.slice(header.indexOf("p"), header.indexOf("saturated") + 1), ["0.003", "0.0123", "mcnemar", "true", "false"]);
  assert.deepEqual(json.models[0].profile.stats, { correction: "bh", threshold: 0.05, min_effect: 0.1 });
  assert.equal(json.models[0].profile.random_draws, 19);
  assert.deepEqual(
    json.pairs.find((p: { benchmark: string }) => p.benchmark === "arc_easy"),
    {
      model: json.models[0].name,
      abilities: [CAUSAL, QUANT],
      k: 0.01,
      n: 1750,
      benchmark: "arc_easy",
      metric: "acc",
      ais: 1,
      ci: { low: 0.9, high: 1.1, confidence: 0.95 },
      interference: null,
      interference_ci: null,
      reason: SATURATED,
      p: null,
      q: null,
      significant: false,
    },
  );
  const view = await resultsView(tested);
  const lines = viewCsv(view).split("\n");
  assert.equal(lines[0], "model,k,cells,row,benchmark,metric,ais,ci_low,ci_high,significant,reason,p,q,test,saturated");
  assert.ok(lines[1]!.endsWith(",0.5,0.2,0.8,true,,0.003,0.0123,mcnemar,false"), lines[1]);
});

test("the random null: each top cell's p and margin in its detail, and the report says it came from R draws", async () => {
  const md = await render(tested, "md", 0.01);
  assert.ok(md.includes("**Against the random draws**: each top cell's AIS against the random control's 19 draws at this k"));
  assert.ok(md.includes("| Commonsense & Causal Reasoning | p 0.0500, +4.80 sd | – |"));
  const html = await render(tested, "html", 0.01);
  assert.match(
    html,
    /title="starred: q 0\.0123; p 0\.00300 \(McNemar&#39;s exact test on the flips\); the interval excludes 0; random null over 19 draws: p 0\.0500, margin 4\.80 sd"/,
  );
  assert.ok(html.includes("the random control&#39;s 19 draws at this k"));
  const tex = await render(tested, "latex");
  assert.ok(tex.includes("\\label{tab:null-tiny-m-v1-k001}"));
  assert.ok(tex.includes("Commonsense \\& Causal Reasoning & $0.0500$ ($+4.80$) & --"));
  const view = (await resultsView(tested)).profile!;
  assert.match(view.legend.randomNull!, /^random null: each top cell's AIS against the random control's 19 draws at this k/);
  const causal = view.heatmap.cells.find((c) => c.row === 0 && c.column === 0)!;
  assert.ok(causal.tooltip.includes("random null (19 draws, mean 0.020): p 0.0500, margin 4.80 sd"), causal.tooltip.join("\n"));
  // no null in a run with one draw
  assert.equal((await resultsView(old)).profile!.legend.randomNull, null);
});

test("an old profile without stats says its star is the interval's, and renders as before", async () => {
  const md = await render(old, "md");
  assert.ok(md.includes("**AIS (acc)** with 95% CI; \\* = the interval excludes 0; n/a (i) = undefined, reason i below."));
  assert.doesNotMatch(md, /Tests of the|Benchmark noise|Against the random draws|\(sat\.\)/);
  const html = await render(old, "html");
  assert.ok(html.includes("<b>*</b> = the interval excludes 0."));
  assert.ok(html.includes("<b>*</b> marks the 1 starred cell: the interval excludes 0"));
  assert.doesNotMatch(html, / title="|satmark">sat/);
  const tex = await render(old, "latex");
  assert.ok(tex.includes("$^{*}$: the interval excludes 0 (the 95\\% paired-bootstrap CI, 1000 resamples)."));
  assert.doesNotMatch(tex, /tab:tests-|tab:noise-|mathrm\{sat\}/);
  const report = await buildReport(old);
  assert.match(formatAisTables(report.models[0]!), /95% CI; \* = the interval excludes 0\n/);
  assert.ok(!formatRunSummary(report.models[0]!).some((l) => l.includes("benchmark noise")));
  const view = await resultsView(old);
  const causal = view.profile!.heatmap.cells.find((c) => c.row === 0 && c.column === 0)!;
  assert.equal(causal.tooltip[1], "significant: the 95% CI excludes 0");
  assert.doesNotMatch(renderMarkdown(report), /Benchmark noise/);
  assert.equal(renderHtml(report, { script: SCRIPT, generated: new Date(0) }).includes("Benchmark noise"), false);
});
