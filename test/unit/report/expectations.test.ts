// Expected abilities (`expects`) against a profile: which expected abilities show (a positive AIS
// whose interval excludes 0), which unexpected ones do, and Spearman's rho of the weights and the
// AIS, each recomputed by hand from the run's item files and its cells.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { abilityImpactScore } from "../../../src/core/analysis/ais";
import { RunItems, loadRun } from "../../../src/core/report/load";
import { renderHtml } from "../../../src/core/report/html";
import { renderReport } from "../../../src/core/report/index";
import { escapeMarkdown, renderMarkdown } from "../../../src/core/report/markdown";
import { buildReport } from "../../../src/core/report/model";
import { expectationChecks } from "../../../src/core/report/expectations";
import type { ReportRow } from "../../../src/core/report/types";
import type { BenchmarkResult } from "../../../src/core/results/schema";
import { formatAisTables } from "../../../src/cli/aisTable";
import { escapeLatex, renderLatex } from "../../../src/core/report/latex";
import { resultsView } from "../../../src/core/report/view";
import { reportCell } from "../../support/profileResults";
import { CAUSAL, fixtureResults, MODEL, QUANT, SPATIAL, writeFixtureRun } from "../../support/reportFixture";

/** Spearman's rho of three distinct values each, by the textbook formula 1 - 6 sum d^2 / (n (n^2 - 1)). */
function spearmanOfThree(xs: number[], ys: number[]): number {
  const rank = (v: number[]) => v.map((x) => v.filter((y) => y < x).length + 1);
  const rx = rank(xs);
  const ry = rank(ys);
  const d2 = rx.reduce((sum, r, i) => sum + (r - ry[i]!) ** 2, 0);
  return 1 - (6 * d2) / (3 * (9 - 1));
}

test("expects: the expected abilities that show, the unexpected ones that do, and rho of the weights, from the item files", async () => {
  const results = fixtureResults();
  const [arc, logiqa] = results.models[0]!.benchmarks;
  arc!.expects = [
    { ability: QUANT, weight: 0.6 },
    { ability: SPATIAL, weight: 0.3 },
  ];
  logiqa!.expects = [{ ability: CAUSAL }];
  // Quantitative's arc_easy interval now excludes 0: it shows.
  const quantTop = results.models[0]!.profile!.variants.find((v) => v.ability === QUANT && v.selection === "top" && v.k === 0.01)!;
  quantTop.benchmarks[0]!.acc = { ...quantTop.benchmarks[0]!.acc!, ci: { low: 0.05, high: 0.6, confidence: 0.95 }, significant: true };
  const dir = await writeFixtureRun(results);
  try {
    const run = await loadRun(dir);
    // The causal top set's AIS on arc_easy from the item files: baseline 3 of 4 right, ablated 2 of 4, chance 1/4.
    const items = new RunItems(dir);
    const causal = results.models[0]!.profile!.variants.find((v) => v.ability === CAUSAL && v.selection === "top" && v.k === 0.01)!;
    // acc: a document is right when its predicted choice is its target
    const accuracy = (xs: readonly { benchmark: string; prediction?: number; target: unknown }[]) => {
      const on = xs.filter((x) => x.benchmark === "arc_easy");
      return on.filter((x) => x.prediction === x.target).length / on.length;
    };
    const baseline = accuracy(await items.baseline(MODEL));
    const ablated = accuracy(await items.variant(MODEL, causal.items_file));
    const byHand = abilityImpactScore({ baseline, ablated, chance: 0.25 });
    assert.ok(byHand.defined && byHand.value === 0.5, JSON.stringify({ baseline, ablated }));

    const report = await buildReport(run);
    const [small, large] = report.models[0]!.profile!.sections;
    const [arcCheck, logiqaCheck] = large!.expectations;
    assert.deepEqual(arcCheck!.expected, [
      { ability: QUANT, weight: 0.6, ais: 0.25, significant: true },
      { ability: SPATIAL, weight: 0.3, ais: 0, significant: false },
    ]);
    assert.deepEqual(arcCheck!.confirmed, [QUANT]);
    // Causal was not expected on arc_easy, and its AIS (0.5 by hand above) is significant.
    assert.deepEqual(arcCheck!.unexpected, [CAUSAL]);
    // Weights (Causal 0, Quantitative 0.6, Spatial 0.3) against AIS (0.5, 0.25, 0): ranks (1, 3, 2) and (3, 2, 1), rho -0.5.
    const rho = spearmanOfThree([0, 0.6, 0.3], [byHand.value, 0.25, 0]);
    assert.equal(rho, -0.5);
    assert.ok(Math.abs(arcCheck!.rankCorrelation! - rho) < 1e-12);
    // logiqa expects Causal, whose AIS there is -1 (not significant, and negative): it does not show; no weights, no rho.
    assert.deepEqual(logiqaCheck, {
      benchmark: "logiqa",
      expected: [{ ability: CAUSAL, weight: null, ais: -1, significant: false }],
      confirmed: [],
      unexpected: [],
      rankCorrelation: null,
    });
    // k = 0.001: every AIS is 0, nothing shows, and a constant AIS row has no rho.
    assert.deepEqual(
      small!.expectations.map((e) => [e.confirmed, e.unexpected, e.rankCorrelation]),
      [
        [[], [], null],
        [[], [], null],
      ],
    );

    const md = renderMarkdown(report);
    assert.match(md, /\*\*Expected abilities\*\*/);
    assert.ok(
      md.includes(
        `| arc\\_easy | ${escapeMarkdown(QUANT)} ×0.6 (0.250*); ${SPATIAL} ×0.3 (0.000) | 1 of 2 | ${escapeMarkdown(CAUSAL)} | -0.50 |`,
      ),
      md,
    );
    const html = renderHtml(report, { script: "" });
    assert.match(html, /Expected abilities at <i>k<\/i> = 0\.01/);
    assert.match(html, /<td>1 of 2<\/td><td class="text">Commonsense &amp; Causal Reasoning<\/td><td>−0\.50<\/td>/);
    assert.ok(
      renderLatex(report).includes(
        `arc\\_easy & ${escapeLatex(QUANT)} $\\times 0.6$ ($0.25^{*}$); ${SPATIAL} $\\times 0.3$ ($0.00$) & 1 of 2 & ${escapeLatex(CAUSAL)} & $-0.50$ \\\\`,
      ),
      renderLatex(report),
    );
    // the terminal's tables (bprof run and report): the same check, a line per benchmark, within 80 columns
    const terminal = formatAisTables(report.models[0]!, 80);
    assert.match(
      terminal.replace(/\n\s*/g, " "),
      new RegExp(`arc_easy: 1 of 2 expected show \\(${QUANT}\\); unexpected that show: ${CAUSAL}; rho -0\\.50`),
    );
    assert.ok(terminal.split("\n").every((l) => l.length <= 80));
    const json = JSON.parse((await renderReport(run, { format: "json" })).text) as { expectations: { k: number; benchmark: string }[] };
    assert.deepEqual(
      json.expectations.map((e) => [e.k, e.benchmark]),
      [
        [0.001, "arc_easy"],
        [0.001, "logiqa"],
        [0.01, "arc_easy"],
        [0.01, "logiqa"],
      ],
    );
    const view = await resultsView(run, { k: 0.01 });
    assert.deepEqual(view.profile!.expectations, large!.expectations);
  } finally {
    await fs.rm(path.dirname(path.dirname(dir)), { recursive: true, force: true });
  }
});

test("expects: a second diagnostic set's row is neither an unexpected ability nor in rho", () => {
  const cell = (benchmark: string, ais: number) => reportCell(benchmark, ais, { ci: [ais - 0.1, ais + 0.1], significant: true });
  const row = (ability: string, ais: number): ReportRow => ({ label: ability, ability, selection: "top", cells: [cell("b", ais)] });
  const rows = [row("A", 0.5), row("A (set 2)", 0.4), row("B", 0.3), row("C", 0.2)];
  const benchmark = {
    name: "b",
    expects: [
      { ability: "A", weight: 1 },
      { ability: "C", weight: 0.5 },
    ],
  } as unknown as BenchmarkResult;
  const [withSet] = expectationChecks([benchmark], rows);
  const [check] = expectationChecks([benchmark], rows, new Set(["A (set 2)"]));
  // counted as an ability, the set shows unexpected; as A's second set it does not
  assert.deepEqual(withSet!.unexpected, ["A (set 2)", "B"]);
  assert.deepEqual(check!.unexpected, ["B"]);
  // weights (A 1, B 0, C 0.5) against AIS (0.5, 0.3, 0.2): ranks (3, 1, 2) and (3, 2, 1): rho 0.5
  assert.equal(check!.rankCorrelation, 0.5);
});
