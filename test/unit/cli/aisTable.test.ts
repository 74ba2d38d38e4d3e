// The terminal's AIS tables: on a terminal of 80 or 120 columns no line is longer, for the demo's
// 11 benchmarks and for 60 with lm-eval's long names; every cell's value and mark is still there,
// each column once per table; piped output keeps the full tables with their intervals.
import assert from "node:assert/strict";
import { test } from "node:test";
import { formatAisTables, formatRunSummary, wrapLine } from "../../../src/cli/aisTable";
import { PAPER_ABILITIES } from "../../../src/core/diagnostic/paperAbilities";
import { buildReport } from "../../../src/core/report/model";
import type { ModelReport } from "../../../src/core/report/types";
import type { CellMetric, Results, VariantResult } from "../../../src/core/results/schema";
import { aisCell, DEMO_BENCHMARKS, oneModelResults } from "../../support/profileResults";

const MMLU_LIKE = Array.from({ length: 60 }, (_, i) => `mmlu_high_school_government_and_politics_${i}`);
const K = [0.0001, 0.001];

/** A profile's results with every paper ability and `benchmarks`, cells of known values: some significant, some undefined. */
function results(benchmarks: readonly string[]): Results {
  const cell = (a: number, b: number): CellMetric => {
    const ais = ((a * 7 + b * 3) % 11) / 10 - 0.4;
    if ((a + b) % 13 === 5)
      return {
        baseline: 0.2,
        ablated: 0.2,
        chance: 0.25,
        ais: null,
        reason: "AIS is undefined: the baseline is below chance",
        ci: null,
        significant: false,
        undefined_resamples: 1000,
        flips: { right_to_wrong: 0, wrong_to_right: 0 },
      };
    return aisCell(ais, { halfWidth: 0.1, flips: { right_to_wrong: 2, wrong_to_right: 1 } });
  };
  const abilities = [...PAPER_ABILITIES];
  const variants: VariantResult[] = K.flatMap((k, ki) =>
    [...abilities, null].map((ability, a) => ({
      ability,
      ability_id: ability === null ? null : `a${a}`,
      selection: ability === null ? ("random" as const) : ("top" as const),
      k,
      n: Math.floor(k * 1e9),
      scores_file: `runner/v${a}.k${ki}.jsonl`,
      items_file: `variants/v${a}.k${ki}.items.jsonl`,
      benchmarks: benchmarks.map((name, b) => ({ name, acc: cell(a, b), acc_norm: cell(a + 1, b) })),
    })),
  );
  return oneModelResults({
    benchmarks,
    baseline: { items: 250, acc: 0.8, acc_norm: 0.78, chance: 0.25 },
    run: { run_id: "20261126-000000-abcd", created: "2026-11-26T00:00:00.000Z" },
    profile: {
      parameters: 1e9,
      candidates: 6e8,
      k: K,
      selections: ["top", "random"],
      method: "paper",
      abilities: abilities.map((name, a) => ({ name, id: `a${a}`, sequences: 1000 })),
      variants,
    },
  });
}

async function modelReport(benchmarks: readonly string[]): Promise<ModelReport> {
  const report = await buildReport({ dir: "/p/.bprof/runs/x", resultsFile: "/p/.bprof/runs/x/results.json", results: results(benchmarks) });
  return report.models[0]!;
}

for (const [label, benchmarks] of [
  ["the demo's 11 benchmarks", DEMO_BENCHMARKS],
  ["60 benchmarks with long names", MMLU_LIKE],
] as const) {
  test(`on a terminal of 80 or 120 columns, ${label}: no line is longer, every cell is there`, async () => {
    const model = await modelReport(benchmarks);
    const sections = model.profile!.sections;
    for (const width of [80, 120]) {
      const text = formatAisTables(model, width);
      const lines = text.split("\n");
      const long = lines.filter((l) => l.length > width);
      assert.deepEqual(long, [], `lines over ${width} columns`);
      // every cell's value (or n/a) once per table: count the significant marks and the n/a cells
      const significant = sections.reduce((n, s) => n + s.rows.reduce((m, r) => m + r.cells.filter((c) => c.significant).length, 0), 0);
      const undefinedCells = sections.reduce((n, s) => n + s.rows.reduce((m, r) => m + r.cells.filter((c) => c.ais === null).length, 0), 0);
      assert.equal((text.match(/\d\*/g) ?? []).length, significant, "one * per significant cell");
      assert.equal((text.match(/n\/a\(\d+\)/g) ?? []).length, undefinedCells, "one n/a per undefined cell");
      const cells = sections.reduce((n, s) => n + s.rows.length * s.columns.length, 0);
      // table lines only: the titles hold k (0.001) and the notes their own figures
      const tableText = lines.filter((l) => !l.includes("k = ")).join("\n");
      assert.equal((tableText.match(/(?<![\w.])-?\d\.\d{3}\*?(?!\d)|n\/a\(\d+\)/g) ?? []).length, cells, "every cell once");
      const coded = benchmarks.some((b) => b.length > 24);
      for (const [i, name] of benchmarks.entries()) {
        if (coded)
          assert.ok(
            lines.some((l) => l.trim() === `b${i + 1} = ${name} (acc)` || l.trim() === `b${i + 1} = ${name}`),
            `a legend line for ${name}`,
          );
        else assert.ok(text.includes(name), name);
      }
      assert.match(text, /the intervals are in the\s+report/);
    }
  });
}

test("piped output keeps the full tables: each cell with its interval", async () => {
  const model = await modelReport(DEMO_BENCHMARKS);
  const text = formatAisTables(model);
  assert.ok(
    text.split("\n").some((l) => l.length > 200),
    "the full table is wider than a terminal",
  );
  assert.match(text, /-?\d\.\d{3} \[-?\d\.\d{3}, -?\d\.\d{3}\] \*/);
});

test("wrapLine cuts at spaces within the width, hangs the rest, and cuts a word longer than the width", () => {
  assert.deepEqual(wrapLine("short", 80), ["short"]);
  const wrapped = wrapLine("alpha beta gamma delta epsilon zeta eta theta", 20);
  assert.deepEqual(wrapped, ["alpha beta gamma", "    delta epsilon", "    zeta eta theta"]);
  for (const line of wrapLine("x".repeat(50) + " tail", 20)) assert.ok(line.length <= 20, line);
  assert.ok(wrapLine("a b c d e f g h i j", 5).every((l) => l.length <= 5));
});

test("the run's summary: at the largest k, the strongest significant cells and the significant negative ones, each line within the width", async () => {
  const model = await modelReport(DEMO_BENCHMARKS);
  const s = model.profile!.sections.at(-1)!;
  const significant = s.rows
    .filter((r) => r.selection === "top")
    .flatMap((r) =>
      r.cells.filter((c) => c.ais !== null && c.significant).map((c) => ({ row: r.label, benchmark: c.benchmark, ais: c.ais! })),
    );
  const best = significant.reduce((a, b) => (b.ais > a.ais ? b : a));
  const negatives = significant.filter((c) => c.ais < 0);
  const summary = formatRunSummary(model);
  assert.equal(summary[0], "demo-llama, summary at k = 0.001 (acc):");
  assert.ok(summary[1]!.startsWith(`  strongest: ${best.row} on ${best.benchmark} ${best.ais.toFixed(3)}`), summary[1]);
  assert.match(summary[2]!, new RegExp(`^  significant negative \\(removing the ability helped\\): ${negatives.length} cell\\(s\\), `));
  for (const line of formatRunSummary(model, 80)) assert.ok(line.length <= 80, line);
});
