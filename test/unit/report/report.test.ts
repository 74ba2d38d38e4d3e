// `bprof report`'s core: the report model and every format, on a hand-made run folder
// (test/support/reportFixture.ts) whose cells and flipped documents are known.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { flatCells } from "../../../src/core/report/cells";
import { csvField } from "../../../src/core/report/csv";
import { divergingColour, formatFixed, MINUS, scaleLimit, textColourOn, UNDEFINED_FILL } from "../../../src/core/report/format";
import { escapeHtml, jsonForScript, renderHtml, scriptForInline } from "../../../src/core/report/html";
import { renderReport } from "../../../src/core/report/index";
import { escapeLatex } from "../../../src/core/report/latex";
import { checkResults, latestResultsFile, loadRun, ReportInputError, RunItems, type LoadedRun } from "../../../src/core/report/load";
import { escapeMarkdown, renderMarkdown } from "../../../src/core/report/markdown";
import { buildReport } from "../../../src/core/report/model";
import type { KSection } from "../../../src/core/report/types";
import type { Results } from "../../../src/core/results/schema";
import {
  AT_CHANCE,
  CAUSAL,
  fixtureResults,
  MODEL,
  MODEL_FOLDER,
  QUANT,
  SPATIAL,
  withChunkedTopSets,
  withStability,
  withSignedRule,
  writeFixtureRun,
} from "../../support/reportFixture";
import { formatAisTables } from "../../../src/cli/aisTable";
import { abilityHealth } from "../../../src/core/language/hover";
import { stabilityVerdict, STABLE_RANKING_JACCARD } from "../../../src/core/diagnostic/health";
import { measuredStability } from "../../../src/core/results/stability";
import { resultsView } from "../../../src/core/report/view";

const SCRIPT = "/* heatmap bundle */ console.log('</script>');";
let dir: string;
let run: LoadedRun;

before(async () => {
  dir = await writeFixtureRun();
  run = await loadRun(dir);
});
after(async () => fs.rm(path.dirname(path.dirname(dir)), { recursive: true, force: true }));

const render = async (format: "html" | "md" | "csv" | "json" | "latex", options: { metric?: "acc" | "acc_norm"; k?: number } = {}) =>
  renderReport(run, { format, script: SCRIPT, ...options });

// ---------------------------------------------------------------------------------------------
// Numbers and colours

test("numbers: fixed decimals, no negative zero, the typographic minus where asked", () => {
  assert.equal(formatFixed(0.5, 3), "0.500");
  assert.equal(formatFixed(-0.0004, 3), "0.000");
  assert.equal(formatFixed(-1, 2), "-1.00");
  assert.equal(formatFixed(-1, 2, MINUS), "\u22121.00");
});

test("the diverging scale: near-white at 0, red at +limit, blue at -limit, saturating beyond", () => {
  assert.equal(divergingColour(0, 1), "#f7f7f7");
  assert.equal(divergingColour(1, 1), "#67001f");
  assert.equal(divergingColour(-1, 1), "#053061");
  assert.equal(divergingColour(3, 1), "#67001f");
  assert.equal(divergingColour(-0.25, 0.25), "#053061");
  assert.equal(divergingColour(0.2, 1), "#fddbc7"); // exactly the first stop right of centre
  assert.equal(divergingColour(0.1, 1), "#fae9df"); // halfway between it and the centre
  assert.equal(textColourOn("#67001f"), "#ffffff");
  assert.equal(textColourOn("#f7f7f7"), "#1a1a1a");
  // The limit: the smallest of 0.05, 0.1, 0.2, 0.25, 0.5, 1 covering max |AIS|; nulls ignored.
  assert.equal(scaleLimit([0.03, null, -0.04]), 0.05);
  assert.equal(scaleLimit([0.33, -0.12]), 0.5);
  assert.equal(scaleLimit([0.2]), 0.2);
  assert.equal(scaleLimit([-2.85]), 1);
  assert.equal(scaleLimit([]), 0.05);
});

// ---------------------------------------------------------------------------------------------
// Reading a run

test("results.json is checked: another schema, another version, a damaged field are one-line errors", async () => {
  assert.throws(() => checkResults({ schema: "other", schema_version: 1 }, "r.json"), {
    name: "ReportInputError",
    message: 'r.json is not a Benchmark Profiler results file (its schema is `other`): expected "schema": "bprof.results"',
  });
  assert.throws(() => checkResults([1, 2], "r.json"), /r\.json is not a Benchmark Profiler results file: expected/);
  assert.throws(() => checkResults({ schema: "bprof.results", schema_version: 2 }, "r.json"), {
    message: "r.json has schema_version 2; this bprof reads version 1",
  });
  const damaged = fixtureResults() as unknown as { models: { profile: { variants: { benchmarks: { acc: { ais: unknown } }[] }[] } }[] };
  damaged.models[0]!.profile.variants[2]!.benchmarks[1]!.acc.ais = "high";
  assert.throws(() => checkResults(damaged, "r.json"), {
    message: "r.json: models[0].profile.variants[2].benchmarks[1].acc.ais: expected a number or null",
  });
  assert.doesNotThrow(() => checkResults(fixtureResults(), "r.json"));

  const empty = await fs.mkdtemp(path.join(path.dirname(dir), "unfinished-"));
  await assert.rejects(
    loadRun(empty),
    (e: Error) => e instanceof ReportInputError && /has no results\.json: the run did not finish/.test(e.message),
  );
  await fs.writeFile(path.join(empty, "results.json"), "{ not json");
  await assert.rejects(loadRun(empty), /results\.json is not valid JSON/);
});

test("the latest run is the one whose id sorts last", () => {
  assert.equal(
    latestResultsFile([
      "/a/runs/20260101-120000-aaaa/results.json",
      "/b/runs/20260102-090000-0000/results.json",
      "/c/runs/20251231-235959-ffff/results.json",
    ]),
    "/b/runs/20260102-090000-0000/results.json",
  );
  assert.equal(latestResultsFile([]), undefined);
});

// ---------------------------------------------------------------------------------------------
// The report model

test("the report model: rows top abilities then random, numbered n/a reasons, negative cells with their documents", async () => {
  const report = await buildReport(run, { items: new RunItems(run.dir) });
  assert.equal(report.metric, "acc");
  assert.equal(report.run.id, "20260101-120000-abcd");
  assert.equal(report.run.runnerVersion, "0.1.0");
  const p = report.models[0]!.profile!;
  assert.deepEqual(
    p.sections.map((s) => s.k),
    [0.001, 0.01],
  );
  assert.equal(p.scaleLimit, 1);
  const s = p.sections[1]!;
  assert.deepEqual(
    s.rows.map((r) => r.label),
    [CAUSAL, QUANT, SPATIAL, "random (control)"],
  );
  assert.deepEqual(s.benchmarks, ["arc_easy", "logiqa"]);
  assert.equal(s.n, 1000);
  assert.equal(s.hasSpecificity, true);
  assert.deepEqual(s.overlap?.intersections[0], [1000, 250, 0]);
  assert.deepEqual(s.reasons, []);

  // The one negative cell, with document 13 recovered from the item files by cellFlips.
  assert.equal(s.negativeCells.length, 1);
  const neg = s.negativeCells[0]!;
  assert.deepEqual(
    { row: neg.row, benchmark: neg.benchmark, ais: neg.ais, rightToWrong: neg.rightToWrong, wrongToRight: neg.wrongToRight },
    { row: CAUSAL, benchmark: "logiqa", ais: -1, rightToWrong: 0, wrongToRight: 1 },
  );
  assert.deepEqual(neg.documents, [
    {
      index: 13,
      direction: "wrong_to_right",
      target: 1,
      baselinePrediction: 0,
      ablatedPrediction: 1,
      baselineLogprobs: [-1, -4],
      ablatedLogprobs: [-3, -1],
      choiceBytes: [3, 2],
    },
  ]);

  // Heatmap cells: labels, significance, colours, tooltips.
  const h = s.heatmap;
  assert.equal(h.id, "heatmap-0-1");
  assert.deepEqual(h.rows, [CAUSAL, QUANT, SPATIAL, "random (control)"]);
  assert.deepEqual(h.groupStarts, [3]);
  const at = (row: number, column: number) => h.cells.find((c) => c.row === row && c.column === column)!;
  assert.deepEqual(
    [at(0, 0).label, at(0, 0).significant, at(0, 0).fill, at(0, 0).text],
    ["0.50*", true, divergingColour(0.5, 1), "#1a1a1a"],
  );
  assert.deepEqual([at(0, 1).label, at(0, 1).significant, at(0, 1).fill], ["\u22121.00", false, "#053061"]);
  assert.equal(at(1, 0).label, "0.25");
  assert.equal(at(0, 0).tooltip[0], "AIS 0.500  (95% CI 0.200 to 0.800)");
  assert.equal(at(0, 0).tooltip[1], "significant: the 95% CI excludes 0");
  assert.ok(at(0, 1).tooltip.includes("flips: 0 right\u2192wrong, 1 wrong\u2192right"));
  assert.deepEqual(h.scale.tickLabels, ["1.00", "0.50", "0.00", "\u22120.50", "\u22121.00"]);

  // acc_norm: logiqa's baseline is at chance, so those cells are n/a with reason 1.
  const norm = (await buildReport(run, { metric: "acc_norm", k: 0.01 })).models[0]!.profile!;
  assert.equal(norm.sections.length, 1);
  const ns = norm.sections[0]!;
  assert.deepEqual(ns.reasons, [AT_CHANCE]);
  assert.ok(ns.rows.every((r) => r.cells[1]!.ais === null && r.cells[1]!.reason === 1));
  const na = ns.heatmap.cells.find((c) => c.row === 0 && c.column === 1)!;
  assert.deepEqual([na.label, na.footnote, na.fill, na.value], ["n/a", "1", UNDEFINED_FILL, null]);
  assert.equal(na.tooltip[0], "AIS is undefined: the baseline score 0.5000 is at chance");
  assert.equal(ns.negativeCells.length, 0);
});

test("ability labels: the labelled benchmark must have the largest AIS of its ability's top row; undefined never holds", async () => {
  const results = fixtureResults();
  const [arc, logiqa] = results.models[0]!.benchmarks;
  arc!.ability = CAUSAL;
  logiqa!.ability = QUANT;
  const dir = await writeFixtureRun(results);
  try {
    const report = await buildReport(await loadRun(dir));
    const [small, large] = report.models[0]!.profile!.sections as [KSection, KSection];
    // k = 0.01: Causal hurts arc_easy (0.5) more than logiqa (-1); Quantitative hurts arc_easy (0.25) more than its own logiqa (0).
    assert.deepEqual(large.labels, [
      { benchmark: "arc_easy", ability: CAUSAL, ais: 0.5, largestOther: { benchmark: "logiqa", ais: -1 }, holds: true },
      { benchmark: "logiqa", ability: QUANT, ais: 0, largestOther: { benchmark: "arc_easy", ais: 0.25 }, holds: false },
    ]);
    // k = 0.001: every cell 0, so no label is strictly the largest.
    assert.deepEqual(
      small.labels.map((l) => l.holds),
      [false, false],
    );
    const md = renderMarkdown(report);
    assert.match(md, /Ability labels.*1 of 2 labelled benchmarks/);
    const html = renderHtml(report, { script: "" });
    assert.match(html, /1 of 2 labelled benchmarks/);
  } finally {
    await fs.rm(path.dirname(path.dirname(dir)), { recursive: true, force: true });
  }
  const { models } = await buildReport(run);
  assert.ok(
    models[0]!.profile!.sections.every((s) => s.labels.length === 0),
    "no labels, no checks",
  );
});

test("a k not in the sweep, or a k for a run without abilities, is refused", async () => {
  await assert.rejects(buildReport(run, { k: 0.5 }), {
    name: "ReportInputError",
    message: `k = 0.5 is not in the sweep of model \`${MODEL}\` (k: 0.001, 0.01)`,
  });
  const scoreOnly: Results = { ...fixtureResults(), models: fixtureResults().models.map(({ profile: _profile, ...m }) => m) };
  await assert.rejects(buildReport({ ...run, results: scoreOnly }, { k: 0.01 }), /has no ability profile/);
  assert.throws(() => flatCells(scoreOnly, { k: 0.01 }), /has no ability profile/);
  await assert.rejects(renderReport({ ...run, results: scoreOnly }, { format: "latex" }), /there is no AIS table to typeset/);
  const md = (await renderReport({ ...run, results: scoreOnly }, { format: "md" })).text;
  assert.match(md, /scored the benchmarks only, so there is no AIS/);
  assert.equal((await renderReport({ ...run, results: scoreOnly }, { format: "csv" })).text.split("\r\n").length, 2, "the header alone");
});

// ---------------------------------------------------------------------------------------------
// CSV

test("CSV fields: quoted when they hold a comma, a quote, a line break or outer spaces; quotes doubled", () => {
  assert.equal(csvField("plain"), "plain");
  assert.equal(csvField("Commonsense & Causal Reasoning"), "Commonsense & Causal Reasoning");
  assert.equal(csvField('tiny "m", v1'), '"tiny ""m"", v1"');
  assert.equal(csvField("two\nlines"), '"two\nlines"');
  assert.equal(csvField(" padded"), '" padded"');
  assert.equal(csvField(null), "");
  assert.equal(csvField(false), "false");
  assert.equal(csvField(0.1 + 0.2), "0.30000000000000004");
});

/**
 * The columns added after `group_tasks` with the tests, in a run made before them: no p, q or
 * test, the interval's verdict (which its star was), no saturation mark, no random null, no noise.
 */
const untested = (intervalExcludes0: boolean) => `,,,,${intervalExcludes0}` + ",".repeat(12);

test("the CSV report: one row per model/ability/selection/k/benchmark/metric, concrete cells", async () => {
  const { text } = await render("csv");
  assert.ok(text.endsWith("\r\n"));
  const lines = text.slice(0, -2).split("\r\n");
  assert.equal(
    lines[0],
    "model,ability,method,selection,k,n,benchmark,metric,items,baseline,ablated,chance,ais,ci_low,ci_high,confidence,significant," +
      "specificity,specificity_ci_low,specificity_ci_high,specificity_significant,right_to_wrong,wrong_to_right,undefined_resamples,reason,specificity_reason,note,group_tasks," +
      "p,q,test,interval_excludes_0,saturated,specificity_p,specificity_q,specificity_test," +
      "random_null_draws,random_null_mean,random_null_sd,random_null_p,random_null_margin,benchmark_signal,benchmark_noise,benchmark_snr",
  );
  // (3 abilities + random) x 2 k x 2 benchmarks x 2 metrics
  assert.equal(lines.length, 1 + 4 * 2 * 2 * 2);
  assert.ok(
    lines.includes(
      '"tiny ""m"", v1",Commonsense & Causal Reasoning,paper,top,0.01,1000,arc_easy,acc,4,0.75,0.5,0.25,0.5,0.2,0.8,0.95,true,0.5,0.2,0.8,true,1,0,0,,,,' +
        untested(true),
    ),
  );
  assert.ok(
    lines.includes(
      '"tiny ""m"", v1",Commonsense & Causal Reasoning,paper,top,0.01,1000,logiqa,acc,4,0.75,1,0.5,-1,-2,0,0.95,false,-1,-2,0,false,0,1,0,,,,' +
        untested(false),
    ),
  );
  // n/a: empty AIS and interval, significant false, the reason quoted (it holds commas).
  assert.ok(
    lines.includes(
      `"tiny ""m"", v1",${QUANT},paper,top,0.01,1000,logiqa,acc_norm,4,0.5,0.5,0.5,,,,,false,,,,,0,0,0,"${AT_CHANCE}",,,` + untested(false),
    ),
  );
  // The random control: no ability, no specificity.
  assert.ok(
    lines.includes('"tiny ""m"", v1",,,random,0.001,100,arc_easy,acc,4,0.75,0.75,0.25,0,0,0,0.95,false,,,,,0,0,0,,,,' + untested(false)),
  );

  const filtered = (await render("csv", { metric: "acc", k: 0.01 })).text.trimEnd().split("\r\n");
  assert.equal(filtered.length, 1 + 4 * 2);
  assert.ok(filtered.slice(1).every((l) => l.includes(",0.01,1000,") && l.includes(",acc,")));
});

test("CSV injection: text cells that start with = + - @ tab or CR get a leading quote; numbers stay numbers", () => {
  assert.equal(csvField('=HYPERLINK("http://x")'), '"\'=HYPERLINK(""http://x"")"');
  assert.equal(csvField("+1"), "'+1");
  assert.equal(csvField("-0.12"), "'-0.12", "a text cell that looks like a number is still text");
  assert.equal(csvField("@SUM(A1)"), "'@SUM(A1)");
  assert.equal(csvField("\tcmd"), "'\tcmd");
  assert.equal(csvField("\r=1"), '"\'\r=1"');
  assert.equal(csvField("a=b"), "a=b", "only the first character matters");
  assert.equal(csvField(-0.12), "-0.12");
  assert.equal(csvField(-1), "-1");
});

test("the CSV report neutralises formula names from user files and keeps a negative AIS a number", async () => {
  const results = fixtureResults();
  const evil = "=cmd|' /C calc'!A0";
  results.models[0]!.name = "@model";
  for (const v of results.models[0]!.profile!.variants) if (v.ability === CAUSAL) v.ability = evil;
  for (const b of results.models[0]!.benchmarks) if (b.name === "logiqa") b.name = "-logiqa";
  for (const v of results.models[0]!.profile!.variants) for (const b of v.benchmarks) if (b.name === "logiqa") b.name = "-logiqa";
  const fixture = await writeFixtureRun(results);
  try {
    const { text } = await renderReport(await loadRun(fixture), { format: "csv" });
    const lines = text.slice(0, -2).split("\r\n");
    // The row of the negative cell above, with every name neutralised and the AIS -1 a number.
    assert.ok(
      lines.includes(
        `'@model,'${evil},paper,top,0.01,1000,'-logiqa,acc,4,0.75,1,0.5,-1,-2,0,0.95,false,-1,-2,0,false,0,1,0,,,,` + untested(false),
      ),
      lines.join("\n"),
    );
    assert.ok(
      lines.slice(1).every((l) => !/^[=+\-@\t\r]/.test(l) && !/,[=+@\t\r]/.test(l) && !/,-[^0-9]/.test(l)),
      "no field starts a formula",
    );
  } finally {
    await fs.rm(path.dirname(path.dirname(fixture)), { recursive: true, force: true });
  }
});

// ---------------------------------------------------------------------------------------------
// JSON

test("the JSON report: metadata, flat cells, flat overlap, the flipped documents of negative cells", async () => {
  const { text, warnings } = await render("json");
  assert.deepEqual(warnings, []);
  const json = JSON.parse(text);
  assert.equal(json.schema, "bprof.report");
  assert.equal(json.schema_version, 1);
  assert.deepEqual(json.run, {
    id: "20260101-120000-abcd",
    created: "2026-01-01T12:00:00.000Z",
    config_file: "/work/project/profile.bprof.yaml",
    runner_version: "0.1.0",
    results_file: path.join(dir, "results.json"),
  });
  assert.deepEqual(json.filter, { metric: null, k: null });
  assert.equal(json.models[0].name, MODEL);
  assert.deepEqual(json.models[0].profile.k, [0.001, 0.01]);
  assert.equal(json.cells.length, 32);
  const cell = json.cells.find(
    (c: Record<string, unknown>) => c.ability === CAUSAL && c.k === 0.01 && c.benchmark === "arc_easy" && c.metric === "acc",
  );
  assert.deepEqual(cell, {
    model: MODEL,
    ability: CAUSAL,
    method: "paper",
    selection: "top",
    k: 0.01,
    n: 1000,
    benchmark: "arc_easy",
    metric: "acc",
    items: 4,
    baseline: 0.75,
    ablated: 0.5,
    chance: 0.25,
    ais: 0.5,
    ci_low: 0.2,
    ci_high: 0.8,
    confidence: 0.95,
    significant: true,
    specificity: 0.5,
    specificity_ci_low: 0.2,
    specificity_ci_high: 0.8,
    specificity_significant: true,
    right_to_wrong: 1,
    wrong_to_right: 0,
    undefined_resamples: 0,
    reason: "",
    specificity_reason: "",
    note: "",
    // a run made before the tests: no p, q or test; the interval's verdict, which its star was
    p: null,
    q: null,
    test: null,
    interval_excludes_0: true,
    saturated: null,
    specificity_p: null,
    specificity_q: null,
    specificity_test: null,
    random_null_draws: null,
    random_null_mean: null,
    random_null_sd: null,
    random_null_p: null,
    random_null_margin: null,
    benchmark_signal: null,
    benchmark_noise: null,
    benchmark_snr: null,
  });
  assert.deepEqual(json.noise, []);
  assert.equal(json.overlap.length, 2 * 9);
  assert.deepEqual(
    json.overlap.find((o: Record<string, unknown>) => o.k === 0.01 && o.ability_a === CAUSAL && o.ability_b === QUANT),
    { model: MODEL, method: "paper", k: 0.01, n: 1000, ability_a: CAUSAL, ability_b: QUANT, intersection: 250, jaccard: 250 / 1750 },
  );
  assert.deepEqual(json.flipped_documents, [
    {
      model: MODEL,
      ability: CAUSAL,
      method: "paper",
      selection: "top",
      k: 0.01,
      benchmark: "logiqa",
      metric: "acc",
      ais: -1,
      index: 13,
      direction: "wrong_to_right",
      target: 1,
      baseline_prediction: 0,
      ablated_prediction: 1,
      baseline_logprobs: [-1, -4],
      ablated_logprobs: [-3, -1],
      choice_bytes: [3, 2],
    },
  ]);
  assert.deepEqual(json.warnings, []);
});

// ---------------------------------------------------------------------------------------------
// Markdown

test("Markdown: GitHub tables with escaped names, intervals, * marks, n/a reasons and the flipped documents", async () => {
  assert.equal(escapeMarkdown("a|b_c*d`e<f>[g]\nh#"), "a\\|b\\_c\\*d\\`e\\<f\\>\\[g\\] h\\#");
  const md = (await render("md")).text;
  assert.match(md, /^# Benchmark profile: run 20260101-120000-abcd$/m);
  assert.match(md, /^## Model tiny "m", v1$/m);
  assert.match(md, /^\| k sweep \| 0\.001, 0\.01 \|$/m);
  assert.match(md, /^\| seed \| 3 \|$/m);
  assert.match(md, /^\| runner \| 0\.1\.0 \|$/m);
  assert.ok(md.includes("| arc\\_easy | 4 | 0.750 | 0.750 | 0.250 |"), "baseline accuracies");
  assert.ok(md.includes("### k = 0.01 (n = 1,000 of 100,000 parameters zeroed)"));
  assert.ok(md.includes("| ability | arc\\_easy | logiqa |\n| --- | ---: | ---: |"));
  assert.ok(md.includes("| Commonsense & Causal Reasoning | 0.500 [0.200, 0.800] \\* | -1.000 [-2.000, 0.000] |"));
  assert.ok(md.includes("| Quantitative\\_Reasoning\\|50% | 0.250 [-0.100, 0.600] | 0.000 [0.000, 0.000] |"));
  assert.ok(md.includes("| Quantitative\\_Reasoning\\|50% | 0.143 (250) | 1.000 (1,000) | 0.005 (10) |"), "overlap");
  assert.ok(md.includes("| Commonsense & Causal Reasoning | 1 / 0 | 0 / 1 |"), "flips");
  assert.ok(md.includes("#### Commonsense & Causal Reasoning × logiqa: AIS -1.000 [-2.000, 0.000]"));
  assert.ok(md.includes("| 13 | wrong → right | 1 | 0 → 1 | **0: -1.00**, 1: -4.00 | 0: -3.00, **1: -1.00** |"));

  const norm = (await render("md", { metric: "acc_norm", k: 0.01 })).text;
  assert.ok(norm.includes(`| ${escapeMarkdown(QUANT)} | 0.000 [0.000, 0.000] | n/a (1) |`));
  assert.ok(norm.includes(`1. ${AT_CHANCE}`));
  assert.doesNotMatch(norm, /k = 0\.001/);
  // Every table row has as many cells as its header.
  for (const block of md.split("\n\n").filter((b) => b.startsWith("|"))) {
    const widths = block
      .split("\n")
      .filter(Boolean)
      .map((line) => line.replace(/\\\|/g, "").split("|").length);
    assert.ok(
      widths.every((w) => w === widths[0]),
      block,
    );
  }
});

// ---------------------------------------------------------------------------------------------
// LaTeX

test("LaTeX: special characters escaped", () => {
  assert.equal(escapeLatex("Commonsense & Causal Reasoning"), "Commonsense \\& Causal Reasoning");
  assert.equal(
    escapeLatex("50% of $x_1 #2 {a} ~ ^ \\ <|>"),
    "50\\% of \\$x\\_1 \\#2 \\{a\\} \\textasciitilde{} \\textasciicircum{} \\textbackslash{} \\textless{}\\textbar{}\\textgreater{}",
  );
});

test("LaTeX: a booktabs table of AIS for one k (the largest unless --k), * marks, lettered n/a notes", async () => {
  const tex = (await render("latex")).text;
  assert.match(tex, /^% Benchmark Profiler: AIS \(acc\) of run 20260101-120000-abcd\. Needs \\usepackage\{booktabs\}\.$/m);
  const lines = tex.split("\n");
  const body = lines.slice(lines.indexOf("\\toprule"), lines.indexOf("\\bottomrule") + 1);
  assert.deepEqual(body, [
    "\\toprule",
    "Ability & arc\\_easy & logiqa \\\\",
    "\\midrule",
    "Commonsense \\& Causal Reasoning & $0.50^{*}$ & $-1.00$ \\\\",
    "Quantitative\\_Reasoning\\textbar{}50\\% & $0.25$ & $0.00$ \\\\",
    "Spatial Reasoning & $0.00$ & $0.00$ \\\\",
    "\\midrule",
    "Random (control) & $0.00$ & $0.00$ \\\\",
    "\\bottomrule",
  ]);
  assert.ok(lines.includes("\\begin{tabular}{lrr}"));
  assert.match(
    tex,
    /\\caption\{Ability Impact Scores \(acc\) of tiny "m", v1 at \$k = 0\.01\$ \(\$n = 1\{,\}000\$ of 100\{,\}000 parameters zeroed\)\. \$\^\{\*\}\$: the interval excludes 0 \(the 95\\% paired-bootstrap CI, 1000 resamples\)\.\}/,
  );
  assert.ok(lines.includes("\\label{tab:ais-tiny-m-v1-k001}"));

  const norm = (await render("latex", { metric: "acc_norm", k: 0.001 })).text;
  assert.ok(norm.includes("Commonsense \\& Causal Reasoning & $0.00$ & n/a$^{a}$ \\\\"));
  assert.ok(norm.includes(`n/a$^{a}$: ${escapeLatex(AT_CHANCE)}}`));
  assert.ok(norm.includes("at $k = 0.001$"));
  // Braces balance (every special character escaped).
  const unescaped = norm.replace(/\\[{}]/g, "");
  assert.equal((unescaped.match(/\{/g) ?? []).length, (unescaped.match(/\}/g) ?? []).length);
});

// ---------------------------------------------------------------------------------------------
// HTML

test("HTML helpers: text escaped, JSON and scripts cannot end their <script> block", () => {
  assert.equal(escapeHtml(`<b class="x">&'</b>`), "&lt;b class=&quot;x&quot;&gt;&amp;&#39;&lt;/b&gt;");
  const json = jsonForScript({ name: "</script><script>alert(1)</script> & \u2028" });
  assert.ok(!json.includes("</script") && !json.includes("<") && !json.includes("&"));
  assert.deepEqual(JSON.parse(json), { name: "</script><script>alert(1)</script> & \u2028" });
  assert.equal(scriptForInline("a('</script>');b('<!--');\n//# sourceMappingURL=x.map"), "a('<\\/script>');b('<\\!--');\n");
});

test("the HTML page: self-contained, a nonce CSP, the heatmaps as JSON, tables with CI bounds, the flipped documents", async () => {
  const { text: html, warnings } = await render("html");
  assert.deepEqual(warnings, []);
  const nonce = /script-src 'nonce-([^']+)'/.exec(html)?.[1];
  assert.ok(nonce, "a nonce in the CSP");
  assert.ok(
    html.includes(
      `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'nonce-${nonce}'; script-src 'nonce-${nonce}'; img-src data:">`,
    ),
  );
  assert.ok(html.includes(`<style nonce="${nonce}">`));
  assert.ok(
    html.includes(`<script nonce="${nonce}">/* heatmap bundle */ console.log('<\\/script>');</script>`),
    "the bundle inlined, its </script escaped",
  );
  assert.doesNotMatch(html, /<script[^>]+src=|<link\b/);
  // The heatmaps' data, one per k, each with a canvas of the same id.
  const data = JSON.parse(/<script type="application\/json" id="bprof-report-data">(.*?)<\/script>/s.exec(html)![1]!);
  assert.deepEqual(
    data.heatmaps.map((h: { id: string }) => h.id),
    ["heatmap-0-0", "heatmap-0-1"],
  );
  for (const id of ["heatmap-0-0", "heatmap-0-1"]) assert.ok(html.includes(`<canvas id="${id}" role="img"`));
  assert.equal(data.heatmaps[1].cells.find((c: { row: number; column: number }) => c.row === 0 && c.column === 0).label, "0.50*");
  // Names escaped; numbers with the typographic minus; significance bold with *.
  assert.ok(html.includes('<h2>Model <span class="name">tiny &quot;m&quot;, v1</span></h2>'));
  assert.ok(
    html.includes(
      '<th scope="row">Commonsense &amp; Causal Reasoning</th><td class="sig">0.500*<span class="ci">[0.200, 0.800]</span></td>' +
        '<td>\u22121.000<span class="ci">[\u22122.000, 0.000]</span></td>',
    ),
  );
  assert.match(html, /Ability overlap at <i>k<\/i> = 0\.01/);
  assert.ok(html.includes('<td class="j1">0.143<span class="ci">250</span></td>'));
  assert.ok(html.includes("<td>1 / 0</td><td>0 / 1</td>"), "flips");
  assert.ok(
    html.includes(
      '<tr><td>13</td><td class="text"><span class="up">wrong → right</span></td><td>1</td><td>0 → 1</td>' +
        '<td class="text"><span class="lp pred">0: \u22121.00</span><span class="lp target">1: \u22124.00</span></td>' +
        '<td class="text"><span class="lp">0: \u22123.00</span><span class="lp pred target">1: \u22121.00</span></td></tr>',
    ),
  );
  for (const meta of [
    "20260101-120000-abcd",
    "0.001, 0.01",
    "top, random",
    '<th scope="row">seed</th><td>3</td>',
    '<th scope="row">runner</th><td>0.1.0</td>',
  ]) {
    assert.ok(html.includes(meta), meta);
  }

  const norm = (await render("html", { metric: "acc_norm" })).text;
  assert.ok(norm.includes('<td class="na">n/a<sup>1</sup></td>'));
  assert.ok(norm.includes(`<ol class="reasons"><li>${escapeHtml(AT_CHANCE)}</li></ol>`));
  assert.ok(norm.includes("hatched cells are undefined"));
});

test("HTML: names that look like markup stay text", async () => {
  const results = fixtureResults();
  results.models[0]!.benchmarks[1]!.name = "<img src=x onerror=alert(1)>";
  for (const v of results.models[0]!.profile!.variants) v.benchmarks[1]!.name = "<img src=x onerror=alert(1)>";
  const html = renderHtml(await buildReport({ ...run, results }), { script: "" });
  assert.ok(!html.includes("<img"));
  assert.ok(html.includes("&lt;img src=x onerror=alert(1)&gt;"));
});

test("a missing item file: the report is still written, the cell says why, and the reader is warned", async () => {
  const broken = await writeFixtureRun();
  try {
    await fs.rm(path.join(broken, "models", MODEL_FOLDER, "variants", "commonsense-and-causal-reasoning.top.k1.items.jsonl"));
    const brokenRun = await loadRun(broken);
    const md = await renderReport(brokenRun, { format: "md" });
    assert.equal(md.warnings.length, 1);
    assert.match(
      md.warnings[0]!,
      /Commonsense & Causal Reasoning x logiqa: flipped documents not listed: the per-item file .*commonsense-and-causal-reasoning\.top\.k1\.items\.jsonl is missing/,
    );
    assert.match(md.text, /The documents could not be recovered: the per-item file/);
    const json = await renderReport(brokenRun, { format: "json" });
    assert.equal(JSON.parse(json.text).flipped_documents.length, 0);
    assert.equal(json.warnings.length, 1);
  } finally {
    await fs.rm(path.dirname(path.dirname(broken)), { recursive: true, force: true });
  }
});

test("the importance method: every format says which one ranked the weights; older results read as paper", async () => {
  const paper = await render("md");
  assert.ok(
    paper.text.includes("| importance | paper: \\|θ × g\\|, as the authors' code |"),
    "the Markdown names the method, its bars escaped",
  );
  const older = fixtureResults() as unknown as { models: { profile: { method?: string } }[] };
  delete older.models[0]!.profile.method;
  assert.equal(checkResults(older, "r.json").models[0]!.profile!.method, "paper");
  older.models[0]!.profile.method = "absolute";
  assert.throws(() => checkResults(older, "r.json"), { message: "r.json: models[0].profile.method: expected paper or signed" });

  const results = fixtureResults();
  results.models[0]!.profile!.method = "signed";
  const signedDir = await writeFixtureRun(results);
  try {
    const signedRun = await loadRun(signedDir);
    const html = await renderReport(signedRun, { format: "html", script: SCRIPT });
    assert.match(
      html.text,
      /<th[^>]*>importance<\/th><td>signed: −θ × g, how much zeroing a weight raises the ability&#39;s loss \(to first order\)<\/td>/,
    );
    // the share of each set whose zeroing lowers its own ability's loss: top rows only, not the random control
    assert.match(html.text, /Zeroed weights that lower their own ability's loss at <i>k<\/i> = 0\.01: of each set's 1,000 weights/);
    assert.match(html.text, /<tr><th scope="row">Commonsense &amp; Causal Reasoning<\/th><td>0\.50<\/td><td>501<\/td><\/tr>/);
    assert.doesNotMatch(html.text, /<tr><th scope="row">random \(control\)<\/th><td>0\.\d\d<\/td>/);
    const md = await renderReport(signedRun, { format: "md" });
    assert.ok(md.text.includes("| Spatial Reasoning | 0.50 | 501 |"), "the Markdown lists the share and the count");
    const tex = await renderReport(signedRun, { format: "latex" });
    assert.match(tex.text, /parameters zeroed, ranked by \$-\\theta g\$\)\./);
    assert.equal(JSON.parse((await renderReport(signedRun, { format: "json" })).text).models[0].profile.method, "signed");
  } finally {
    await fs.rm(path.dirname(path.dirname(signedDir)), { recursive: true, force: true });
  }
});

test("top_chunked: rows after the top sets, and every format compares each chunked set with the exact top n", async () => {
  const results = withChunkedTopSets(fixtureResults());
  const chunkedDir = await writeFixtureRun(results);
  try {
    const chunkedRun = await loadRun(chunkedDir);
    const report = await buildReport(chunkedRun, { k: 0.01 });
    const section = report.models[0]!.profile!.sections[0]!;
    assert.equal(section.n, 1000);
    assert.deepEqual(
      section.rows.map((r) => r.label),
      [CAUSAL, QUANT, SPATIAL, `${CAUSAL} (top, chunked)`, `${QUANT} (top, chunked)`, `${SPATIAL} (top, chunked)`, "random (control)"],
    );
    assert.deepEqual(section.heatmap.groupStarts, [3, 6]);
    assert.deepEqual(section.chunked[0], { ability: CAUSAL, chunkedN: 1003, topN: 1000, shared: 900, jaccard: 900 / 1103 });

    const md = (await renderReport(chunkedRun, { format: "md", k: 0.01 })).text;
    assert.ok(md.includes("**Chunked selection against the exact top n**"), md);
    assert.ok(
      md.includes("| Commonsense & Causal Reasoning | 1,003 | 1,000 | 900 | 0.816 |"),
      "the Markdown lists sizes, shared weights and the Jaccard index",
    );
    const html = (await renderReport(chunkedRun, { format: "html", script: SCRIPT, k: 0.01 })).text;
    assert.match(html, /<tr><th scope="row">Spatial Reasoning<\/th><td>1,003<\/td><td>1,000<\/td><td>1,000<\/td><td>0\.997<\/td><\/tr>/);
    const json = JSON.parse((await renderReport(chunkedRun, { format: "json" })).text);
    assert.equal(json.chunked.length, 6);
    assert.deepEqual(json.chunked[0], {
      model: MODEL,
      method: "paper",
      ability: CAUSAL,
      k: 0.001,
      n: 100,
      chunked_n: 103,
      shared: 0,
      jaccard: 0,
    });
    assert.deepEqual(
      json.chunked.find((c: { k: number; ability: string }) => c.k === 0.01 && c.ability === QUANT),
      { model: MODEL, method: "paper", ability: QUANT, k: 0.01, n: 1000, chunked_n: 1003, shared: 1000, jaccard: 1000 / 1003 },
    );
    const csv = (await renderReport(chunkedRun, { format: "csv" })).text;
    assert.ok(
      csv.includes(
        `\r\n${MODEL.includes(",") ? `"${MODEL.replace(/"/g, '""')}"` : MODEL},${CAUSAL},paper,top_chunked,0.01,1003,arc_easy,acc,`,
      ),
      "the CSV has the chunked rows with their own n",
    );
    const tex = (await renderReport(chunkedRun, { format: "latex" })).text;
    assert.ok(tex.includes("Commonsense \\& Causal Reasoning (top, chunked)"));

    const damaged = structuredClone(results) as unknown as { models: { profile: { variants: Record<string, unknown>[] } }[] };
    damaged.models[0]!.profile.variants.at(-1)!.exact_top = { n: 1000, shared: "all" };
    assert.throws(
      () => checkResults(damaged, "r.json"),
      /r\.json: models\[0\]\.profile\.variants\[\d+\]\.exact_top\.shared: expected a number/,
    );
  } finally {
    await fs.rm(path.dirname(path.dirname(chunkedDir)), { recursive: true, force: true });
  }
});

test("ranking stability: every format lists each ability's halves and their Jaccard index; the view and the health hover use it", async () => {
  const results = withStability(fixtureResults());
  const stableDir = await writeFixtureRun(results);
  try {
    const stableRun = await loadRun(stableDir);
    const report = await buildReport(stableRun, { k: 0.01 });
    assert.deepEqual(report.models[0]!.profile!.sections[0]!.stability, [
      { ability: CAUSAL, halves: [6, 6], n: 1000, shared: 700, jaccard: 700 / 1300 },
      { ability: QUANT, halves: [5, 5], n: 1000, shared: 100, jaccard: 100 / 1900 },
    ]);
    const md = (await renderReport(stableRun, { format: "md", k: 0.01 })).text;
    assert.ok(md.includes("**Ranking stability**"), md);
    assert.ok(
      md.includes("| Commonsense & Causal Reasoning | 6 + 6 | 700 | 0.538 |"),
      "the Markdown lists halves, shared weights and the Jaccard index",
    );
    const html = (await renderReport(stableRun, { format: "html", script: SCRIPT, k: 0.01 })).text;
    assert.match(html, /<tr><th scope="row">Quantitative_Reasoning\|50%<\/th><td>5 \+ 5<\/td><td>100<\/td><td>0\.053<\/td><\/tr>/);
    const json = JSON.parse((await renderReport(stableRun, { format: "json" })).text);
    assert.equal(json.stability.length, 4);
    assert.deepEqual(json.stability[0], {
      model: MODEL,
      method: "paper",
      ability: CAUSAL,
      k: 0.001,
      n: 100,
      half_a: 6,
      half_b: 6,
      shared: 40,
      jaccard: 40 / 160,
    });
    const table = formatAisTables(report.models[0]!);
    assert.match(
      table,
      /ranking stability at k = 0\.01: the top n = 1000 of two halves of each ability's items:\n {2}Commonsense & Causal Reasoning\s+halves 6 \+ 6 items\s+shared 700\s+Jaccard 0\.538/,
    );
    // a run without it shows none
    assert.ok(!(await renderReport(run, { format: "md" })).text.includes("Ranking stability"));
    assert.deepEqual(checkResults(results, "r.json").models[0]!.profile!.stability, results.models[0]!.profile!.stability);
    const damaged = structuredClone(results) as unknown as { models: { profile: { stability: { by_k: Record<string, unknown>[] }[] } }[] };
    damaged.models[0]!.profile.stability[1]!.by_k[0]!.jaccard = "high";
    assert.throws(() => checkResults(damaged, "r.json"), {
      message: "r.json: models[0].profile.stability[1].by_k[0].jaccard: expected a number",
    });

    const view = await resultsView(stableRun, { k: 0.01 });
    assert.deepEqual(
      view.profile!.abilities.map((a) => a.stability),
      [700 / 1300, 100 / 1900, null],
    );

    // the health of an ability: the measurement at the largest k replaces the rule of thumb on the count
    const causal = measuredStability(results, CAUSAL)!;
    assert.deepEqual(causal, { runId: results.run_id, model: MODEL, k: 0.01, jaccard: 700 / 1300, halves: [6, 6] });
    assert.equal(measuredStability(results, SPATIAL), undefined);
    assert.equal(STABLE_RANKING_JACCARD, 0.5);
    assert.equal(stabilityVerdict(causal).stable, true);
    assert.equal(stabilityVerdict(measuredStability(results, QUANT)!).stable, false);
    const ability = { name: QUANT, files: [], items: [] };
    const [measuredLine] = abilityHealth(ability, [], measuredStability(results, QUANT));
    assert.equal(
      measuredLine,
      `0 items: an unstable ranking, as measured: the top sets of two halves (5 + 5 items) have Jaccard index 0.053 at k = 0.01 ` +
        `(run ${results.run_id}, model ${MODEL}), below 0.5: more items would steady it`,
    );
    assert.equal(abilityHealth(ability, [])[0], "0 items: fewer than the 200 a stable ranking needs");
  } finally {
    await fs.rm(path.dirname(path.dirname(stableDir)), { recursive: true, force: true });
  }
});

test("a run ranked by both rules: every format shows each rule's tables and the rules side by side; the cells name their rule", async (t) => {
  const dir = await writeFixtureRun(withSignedRule(fixtureResults()));
  t.after(() => fs.rm(path.dirname(path.dirname(dir)), { recursive: true, force: true }));
  const run = await loadRun(dir);
  const md = (await renderReport(run, { format: "md" })).text;
  assert.match(md, /### The importance rules side by side/);
  assert.match(md, /^\| signed \| – \| 0\.0% \|$/m, "no weight of a signed top set lowers its own loss");
  assert.match(md, /### k = 0\.01, paper rule/);
  assert.match(md, /### k = 0\.01, signed rule/);
  assert.match(md, /\| importance \| paper: .*; signed: /);
  const html = (await renderReport(run, { format: "html", script: SCRIPT })).text;
  assert.match(html, /<h3>The importance rules side by side<\/h3>/);
  assert.match(html, /· signed rule/);
  const latex = (await renderReport(run, { format: "latex" })).text;
  assert.match(latex, /\\label\{tab:ais-tiny-m-v1-paper-k0\.?01\}/);
  assert.match(latex, /\\label\{tab:ais-tiny-m-v1-signed-k0\.?01\}/);

  const cells = flatCells(run.results);
  const causal = cells.filter((c) => c.ability === CAUSAL && c.k === 0.01 && c.benchmark === "arc_easy" && c.metric === "acc");
  assert.deepEqual(
    causal.map((c) => [c.method, c.ais]),
    [
      ["paper", 0.5],
      ["signed", 0],
    ],
  );
  const random = cells.filter((c) => c.ability === null);
  assert.ok(random.length > 0 && random.every((c) => c.method === null));
  assert.equal(
    random.length,
    flatCells(checkResults(fixtureResults(), "r.json")).filter((c) => c.ability === null).length,
    "the control once",
  );
  const json = JSON.parse((await renderReport(run, { format: "json" })).text);
  assert.deepEqual(json.models[0].profile.other_methods, ["signed"]);
  assert.throws(() => {
    const broken = withSignedRule(fixtureResults()) as unknown as { models: { other_methods: { method: string }[] }[] };
    broken.models[0]!.other_methods[0]!.method = "absolute";
    checkResults(broken, "r.json");
  }, /models\[0\]\.other_methods\[0\]\.method: expected paper or signed/);
});
