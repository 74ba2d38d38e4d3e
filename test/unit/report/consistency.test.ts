// A second diagnostic set of an ability (`of`): the config loads its items under the ability's
// name and checks `of`; the report compares the two sets' AIS rows (Spearman's rho across the
// benchmarks, the benchmarks where one interval excludes the other's AIS), recomputed by hand.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { loadProfile } from "../../../src/core/config/load";
import { consistencyChecks } from "../../../src/core/report/consistency";
import { loadRun } from "../../../src/core/report/load";
import { renderHtml } from "../../../src/core/report/html";
import { renderMarkdown } from "../../../src/core/report/markdown";
import { escapeLatex, renderLatex } from "../../../src/core/report/latex";
import { buildReport } from "../../../src/core/report/model";
import { formatAisTables } from "../../../src/cli/aisTable";
import type { ReportCell, ReportRow } from "../../../src/core/report/types";
import { resultsView } from "../../../src/core/report/view";
import { DIAGNOSTIC, makeProfileProject, SPATIAL } from "../../support/profileProject";
import { reportCell } from "../../support/profileResults";
import { fixtureResults, QUANT, writeFixtureRun } from "../../support/reportFixture";

test("config: a second set of an ability takes that ability's items under its own name; a wrong `of` is a positioned problem", async (t) => {
  const project = await makeProfileProject();
  t.after(() => fs.rm(project.root, { recursive: true, force: true }));
  const original = await fs.readFile(project.configPath, "utf8");
  const second = (of: string) =>
    original.replace("ablation:\n", `  - name: ${SPATIAL} (set B)\n    of: ${of}\n    data: ./diag/spatial.diag.jsonl\nablation:\n`);
  const loaded = await loadProfile(project.configPath, { text: second(SPATIAL) });
  assert.deepEqual(
    loaded.problems.filter((p) => p.severity === "error"),
    [],
  );
  const set = loaded.profile!.abilities.find((a) => a.name === `${SPATIAL} (set B)`)!;
  assert.equal(set.of, SPATIAL);
  assert.equal(set.items.length, DIAGNOSTIC[SPATIAL]!.length);
  assert.ok(
    !loaded.problems.some((p) => p.code === "config.ability-near-twin" || p.code === "config.ability-near-miss"),
    "a second set's name may be near its ability's",
  );

  const misspelt = second("Spatial Reasonin");
  const problem = (await loadProfile(project.configPath, { text: misspelt })).problems.find((p) => p.code === "config.unknown-of-ability")!;
  assert.match(problem.message, /`Spatial Reasonin` is not one of this config's abilities: did you mean `Spatial Reasoning`\?/);
  const line = misspelt.split("\n").findIndex((l) => l.includes("of: Spatial Reasonin"));
  assert.deepEqual([problem.line, problem.column], [line + 1, 9]);
  assert.deepEqual(problem.data, { suggestion: SPATIAL });
  const itself = (await loadProfile(project.configPath, { text: second(`${SPATIAL} (set B)`) })).problems.find(
    (p) => p.code === "config.unknown-of-ability",
  )!;
  assert.match(itself.message, /names this entry itself/);
});

test("config: `sets: separate` makes each file of `data` a set of its own, the others second sets of the first; problems at the list's items", async (t) => {
  const project = await makeProfileProject();
  t.after(() => fs.rm(project.root, { recursive: true, force: true }));
  const original = await fs.readFile(project.configPath, "utf8");
  const items = DIAGNOSTIC[SPATIAL]!;
  // set B: the same ability's items in a file of their own, the last two left out
  const setB = items.slice(0, -2).map((item, i) => JSON.stringify({ id: `b-${i}`, ability: SPATIAL, ...item }));
  await fs.writeFile(path.join(project.root, "diag", "spatial-b.diag.jsonl"), setB.join("\n") + "\n");
  const withSets = (data: string, extra = "    sets: separate\n") =>
    original.replace("    data: [./diag/spatial.diag.jsonl]\n", `    data: ${data}\n${extra}`);
  const text = withSets("[./diag/spatial.diag.jsonl, ./diag/spatial-b.diag.jsonl]");
  const loaded = await loadProfile(project.configPath, { text });
  assert.deepEqual(
    loaded.problems.filter((p) => p.severity === "error"),
    [],
  );
  const spatial = loaded.profile!.abilities.filter((a) => a.name.startsWith(SPATIAL));
  assert.deepEqual(
    spatial.map((a) => [a.name, a.of, a.files.map((f) => path.basename(f)), a.items.length]),
    [
      [SPATIAL, undefined, ["spatial.diag.jsonl"], items.length],
      [`${SPATIAL} (set 2)`, SPATIAL, ["spatial-b.diag.jsonl"], items.length - 2],
    ],
  );
  // the same as a second entry with `of`
  const asOf = original.replace(
    "ablation:\n",
    `  - name: ${SPATIAL} (set 2)\n    of: ${SPATIAL}\n    data: ./diag/spatial-b.diag.jsonl\nablation:\n`,
  );
  const viaOf = (await loadProfile(project.configPath, { text: asOf })).profile!.abilities;
  assert.deepEqual(loaded.profile!.abilities, viaOf);
  // merged, the default: one set of both files' items
  const merged = (
    await loadProfile(project.configPath, { text: withSets("[./diag/spatial.diag.jsonl, ./diag/spatial-b.diag.jsonl]", "") })
  ).profile!.abilities.filter((a) => a.name.startsWith(SPATIAL));
  assert.deepEqual(
    merged.map((a) => [a.name, a.items.length]),
    [[SPATIAL, 2 * items.length - 2]],
  );

  // a set without the ability's items: the problem is at its list item, not at `data`
  await fs.writeFile(
    path.join(project.root, "diag", "other.diag.jsonl"),
    JSON.stringify({ id: "o-0", ability: QUANT, ...items[0]! }) + "\n",
  );
  const empty = withSets("[./diag/spatial.diag.jsonl, ./diag/other.diag.jsonl]");
  const noItems = (await loadProfile(project.configPath, { text: empty })).problems.find((p) => p.code === "config.ability-no-items")!;
  assert.match(noItems.message, /in this set/);
  const dataLine = empty.split("\n").findIndex((l) => l.includes("other.diag.jsonl"));
  assert.deepEqual([noItems.line, noItems.column], [dataLine + 1, empty.split("\n")[dataLine]!.indexOf("./diag/other") + 1]);
  // one file: `sets` has no effect; with `of`: refused
  const one = (await loadProfile(project.configPath, { text: withSets("[./diag/spatial.diag.jsonl]") })).problems;
  assert.ok(
    one.some((p) => p.code === "config.no-effect" && p.field?.includes("sets")),
    JSON.stringify(one),
  );
  const withOf = original.replace(
    "ablation:\n",
    `  - name: ${SPATIAL} (set B)\n    of: ${SPATIAL}\n    data: [./diag/spatial.diag.jsonl, ./diag/spatial-b.diag.jsonl]\n    sets: separate\nablation:\n`,
  );
  const refused = (await loadProfile(project.configPath, { text: withOf })).problems.find((p) => p.message.includes("cannot go with `of`"));
  assert.ok(refused && refused.severity === "error");
});

test("consistency in the report: the benchmarks where one set's interval excludes the other's AIS, from the run's cells", async () => {
  const results = fixtureResults();
  // Spatial's rows stand for a second set of Quantitative.
  results.models[0]!.profile!.abilities[2]!.of = QUANT;
  const dir = await writeFixtureRun(results);
  try {
    const report = await buildReport(await loadRun(dir));
    const [small, large] = report.models[0]!.profile!.sections;
    // k = 0.01: Quantitative's arc_easy AIS 0.25 (CI -0.1 to 0.6), the set's 0 (CI 0 to 0): the set's interval
    // excludes 0.25. logiqa: both 0. Two benchmarks: no rho.
    assert.deepEqual(large!.consistency, [
      {
        ability: QUANT,
        set: SPATIAL,
        benchmarks: 2,
        rankCorrelation: null,
        disagreements: [{ benchmark: "arc_easy", ais: 0.25, setAis: 0 }],
      },
    ]);
    assert.deepEqual(small!.consistency[0]!.disagreements, []);
    assert.match(renderMarkdown(report), /\*\*Consistency of abilities measured with a second diagnostic set\*\*/);
    assert.match(renderHtml(report, { script: "" }), /arc_easy \(0\.250 vs 0\.000\)/);
    assert.ok(
      renderLatex(report).includes(`${escapeLatex(QUANT)} & ${escapeLatex(SPATIAL)} & -- & 2 & arc\\_easy ($0.25$ vs $0.00$) \\\\`),
      renderLatex(report),
    );
    assert.ok(
      formatAisTables(report.models[0]!).includes(`${QUANT} vs ${SPATIAL}: rho n/a over 2 benchmarks; disagree: arc_easy (0.250 vs 0.000)`),
      formatAisTables(report.models[0]!),
    );
    const view = await resultsView(await loadRun(dir), { k: 0.01 });
    assert.deepEqual(view.profile!.consistency, large!.consistency);
  } finally {
    await fs.rm(path.dirname(path.dirname(dir)), { recursive: true, force: true });
  }
});

test("consistency's rho: Spearman's rank correlation of the two rows across the benchmarks, by hand; undefined cells and groups left out", () => {
  const cell = (benchmark: string, ais: number | null, ci: [number, number] | null, group = false) =>
    reportCell(benchmark, ais, { ci, significant: false, group });
  const row = (ability: string, cells: ReportCell[]): ReportRow => ({ label: ability, ability, selection: "top", cells });
  const rows = [
    row("A", [
      cell("b1", 0.1, [0, 0.2]),
      cell("b2", 0.4, [0.3, 0.5]),
      cell("b3", 0.2, [0.1, 0.3]),
      cell("b4", 0.3, [0.2, 0.4]),
      cell("b5", null, null),
      cell("g", 0.2, [0.1, 0.3], true),
    ]),
    row("A2", [
      cell("b1", 0.05, [0, 0.1]),
      cell("b2", 0.2, [0.1, 0.3]),
      cell("b3", 0.3, [0.2, 0.4]),
      cell("b4", 0.25, [0.2, 0.3]),
      cell("b5", 0.1, [0, 0.2]),
      cell("g", 0.2, [0.1, 0.3], true),
    ]),
  ];
  const [check] = consistencyChecks(
    [
      { name: "A", id: "a", sequences: 4 },
      { name: "A2", id: "a2", sequences: 4, of: "A" },
    ],
    rows,
  );
  // Pairs b1..b4 (b5 undefined on A, g a group): ranks (1, 4, 2, 3) and (1, 2, 4, 3); d = (0, 2, -2, 0),
  // rho = 1 - 6 x 8 / (4 x 15) = 0.2.
  assert.equal(check!.benchmarks, 4);
  assert.ok(Math.abs(check!.rankCorrelation! - 0.2) < 1e-12, String(check!.rankCorrelation));
  // b2: A's CI 0.3-0.5 excludes 0.2 (and A2's 0.1-0.3 excludes 0.4); b3: A's 0.1-0.3 holds 0.3, A2's 0.2-0.4 holds 0.2.
  assert.deepEqual(
    check!.disagreements.map((d) => d.benchmark),
    ["b2"],
  );
});
