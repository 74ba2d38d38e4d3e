// The failure signatures (src/core/report/signatures.ts), found through the report model every
// face reads: the demo's healthy profile, as a run of it measured, raises none; profiles made to
// show each signature (k too small, two identical diagnostic sets, a dataset whose ablation helps
// most benchmarks, an unstable ranking, a label that fails) raise exactly that one, with its
// figures, threshold and remedy, in the terminal's summary and the HTML and Markdown reports.
import assert from "node:assert/strict";
import { test } from "node:test";
import { findingLines } from "../../../src/cli/aisTable";
import { nextPaperK, NO_EFFECT_AIS } from "../../../src/core/report/signatures";
import { renderHtml } from "../../../src/core/report/html";
import { renderMarkdown } from "../../../src/core/report/markdown";
import { buildReport } from "../../../src/core/report/model";
import { resultsView } from "../../../src/core/report/view";
import type { ModelReport, Report } from "../../../src/core/report/types";
import type { AbilityStability, Results, VariantResult } from "../../../src/core/results/schema";
import { aisCell, DEMO_BENCHMARKS, oneModelResults } from "../../support/profileResults";

/**
 * The demo's AIS at k = 0.01024 under its first rule (signed), as `npm run demo` measured them on
 * 2 cores (run 20261127-214550): each ability's row, then the random control's. Every ability's
 * own benchmark is the largest of its row (the demo's 10 labels hold).
 */
const DEMO_PROFILE: [string | null, number[]][] = [
  ["Analogical Reasoning", [0.654, 0.2, -0.111, -0.1, -0.016, 0.07, 0.036, 0.268, 0.043, 0.059, 0.093]],
  ["Commonsense & Causal Reasoning", [0.096, 0.493, -0.333, -0.05, 0, 0.07, 0.127, 0.127, 0.065, 0.02, 0.259]],
  ["Contextual Recall", [0.096, 0.013, 0.167, 0, 0, 0.085, 0, 0.113, 0.022, 0.059, 0.074]],
  ["Deductive Reasoning", [0.096, 0.04, -0.111, 0.4, 0.048, 0.042, 0.109, 0.169, 0, 0.039, 0.074]],
  ["Inductive Reasoning", [0, 0.107, -0.333, 0.05, 0.619, 0.014, 0.055, 0.056, 0, 0.176, 0.13]],
  ["Long-term Knowledge", [0.077, 0.093, -0.333, -0.05, 0.016, 0.746, 0.018, 0.268, 0.065, 0.118, 0.185]],
  ["Quantitative Reasoning", [0.077, 0.027, -0.5, 0, -0.016, 0.042, 0.8, 0.099, 0, -0.039, 0.167]],
  ["Semantic Relationship", [0.327, 0.133, -0.278, -0.4, 0, 0.338, 0.127, 0.676, 0.174, 0.059, 0.185]],
  ["Spatial Reasoning", [0.038, 0.067, -0.167, 0.25, -0.016, 0.028, 0.055, 0.042, 0.348, 0.039, 0.056]],
  ["Temporal Reasoning", [0.077, 0.027, -0.167, 0, -0.016, 0.113, 0.073, 0.042, 0.043, 0.98, 0.167]],
  [null, [0.019, 0, -0.111, 0.05, 0, 0, 0.018, 0, 0, 0, 0]],
];

/** Each ability's label: the demo's benchmark of the same position (the last, mixed, has none). */
const DEMO_LABELS = new Map(DEMO_PROFILE.flatMap(([ability], i) => (ability === null ? [] : [[DEMO_BENCHMARKS[i]!, ability] as const])));

const K = 0.01024;

interface Made {
  rows: [string | null, number[]][];
  /** Half the width of every cell's bootstrap interval (aisCell's 0.05 by default). */
  halfWidth?: number;
  labels?: ReadonlyMap<string, string>;
  stability?: AbilityStability[];
  k?: number;
}

/** A run's results with one model, one k, the given AIS per ability and benchmark. */
function results({ rows, labels = new Map(), stability, k = K, halfWidth }: Made): Results {
  const benchmarks = DEMO_BENCHMARKS.slice(0, rows[0]![1].length);
  const abilities = rows.flatMap(([a]) => (a === null ? [] : [a]));
  const variants: VariantResult[] = rows.map(([ability, ais], r) => ({
    ability,
    ability_id: ability === null ? null : `a${r}`,
    selection: ability === null ? "random" : "top",
    k,
    n: Math.floor(k * 1e6),
    scores_file: `runner/v${r}.jsonl`,
    items_file: `variants/v${r}.items.jsonl`,
    benchmarks: benchmarks.map((name, b) => ({ name, acc: aisCell(ais[b]!, { halfWidth }), acc_norm: aisCell(ais[b]!, { halfWidth }) })),
  }));
  return oneModelResults({
    benchmarks,
    baseline: { items: 100, acc: 0.8, acc_norm: 0.8, chance: 0.25 },
    labels,
    profile: {
      parameters: 1e6,
      candidates: 6e5,
      k: [k],
      selections: ["top", "random"],
      method: "signed",
      abilities: abilities.map((name, a) => ({ name, id: `a${a}`, sequences: 400 })),
      variants,
      ...(stability ? { stability } : {}),
    },
  });
}

async function report(made: Made): Promise<Report> {
  return buildReport({ dir: "/p/.bprof/runs/x", resultsFile: "/p/.bprof/runs/x/results.json", results: results(made) });
}

async function modelOf(made: Made): Promise<ModelReport> {
  return (await report(made)).models[0]!;
}

test("the demo's healthy profile, as measured, raises no failure signature", async () => {
  const model = await modelOf({ rows: DEMO_PROFILE, labels: DEMO_LABELS });
  assert.equal(model.profile!.sections.at(-1)!.labels.length, 10, "the ten labels are checked");
  assert.deepEqual(model.findings, []);
  assert.deepEqual(findingLines(model), ["  failure signatures: none found"]);
});

test("k too small: every AIS near zero is found, with the largest |AIS| and the next k of the paper's sweep", async () => {
  const small = DEMO_PROFILE.map(([a, row]): [string | null, number[]] => [a, row.map((x) => x / 25)]);
  const model = await modelOf({ rows: small, labels: DEMO_LABELS, k: 0.00064 });
  assert.deepEqual(
    model.findings.map((f) => f.signature),
    ["ais-near-zero"],
  );
  const [f] = model.findings;
  // the demo's largest, 0.98 / 25, in Temporal Reasoning's own benchmark
  assert.match(f!.figures, /is 0\.039 \(Temporal Reasoning on demo_temporal\)/);
  assert.equal(f!.threshold, `every |AIS| below ${NO_EFFECT_AIS}`);
  assert.match(f!.remedy, /k = 0\.00256/);
});

test("the next k of the paper's sweep, then its largest, then none", () => {
  assert.equal(nextPaperK(0.00001), 0.00004);
  assert.equal(nextPaperK(0.001), 0.00256);
  assert.equal(nextPaperK(0.00256), 0.01024);
  assert.equal(nextPaperK(0.01024), null);
  assert.equal(nextPaperK(0.04096), null);
});

test("two identical diagnostic sets: the two abilities with the same AIS are found together, and no others", async () => {
  const rows = DEMO_PROFILE.map(([a, row]): [string | null, number[]] => [a, [...row]]);
  // Spatial's dataset a copy of Deductive's: the same top set, the same scores
  rows[8]![1] = [...rows[3]![1]];
  const model = await modelOf({ rows });
  assert.deepEqual(
    model.findings.map((f) => [f.signature, f.abilities]),
    [["same-ais", ["Deductive Reasoning", "Spatial Reasoning"]]],
  );
  assert.match(model.findings[0]!.figures, /on each of the 11 benchmarks .* differ by at most 0\.000/);
});

test("every ability alike: one finding names them all", async () => {
  const row = [0.3, 0.2, 0.1, 0.25];
  const rows: [string | null, number[]][] = [
    ["A", row],
    ["B", row.map((x) => x + 0.01)],
    ["C", row.map((x) => x - 0.01)],
  ];
  const [f, ...rest] = (await modelOf({ rows })).findings;
  assert.equal(rest.length, 0);
  assert.equal(f!.signature, "same-ais");
  assert.deepEqual(f!.abilities, ["A", "B", "C"]);
  assert.match(f!.title, /^Every ability has the same AIS/);
});

test("abilities alike only on a benchmark every row moves are not the same", async () => {
  // one column that every ablation hurts (a fragile benchmark), elsewhere near zero but different
  const rows: [string | null, number[]][] = [
    ["A", [-0.33, 0.0, 0.04, 0.02]],
    ["B", [-0.33, 0.04, 0.0, 0.03]],
  ];
  assert.deepEqual((await modelOf({ rows })).findings, []);
});

test("a dataset whose answers follow a surface cue: its ablation helps most benchmarks, and that is found", async () => {
  const rows = DEMO_PROFILE.map(([a, row]): [string | null, number[]] => [a, [...row]]);
  rows[2]![1] = [-0.2, -0.1, 0.3, -0.15, -0.08, -0.06, -0.1, 0.02, -0.3, -0.05, 0.01];
  const findings = (await modelOf({ rows })).findings;
  assert.deepEqual(
    findings.map((f) => [f.signature, f.abilities]),
    [["negative-ais", ["Contextual Recall"]]],
  );
  // -0.05's interval (-0.10 to 0.00) holds 0: seven of the eight negative cells count
  assert.match(findings[0]!.figures, /on 7 of 11 benchmarks .*lowest -0\.300 on demo_spatial; 21 documents flipped wrong to right/);
  assert.match(findings[0]!.remedy, /wrong to right/);
});

test("negative AIS whose bootstrap intervals hold 0 are noise, not a surface cue", async () => {
  // as on the demo's near-chance contextual benchmarks: negative point estimates, intervals across 0
  const rows = DEMO_PROFILE.map(([a, row]): [string | null, number[]] => [a, [...row]]);
  rows[2]![1] = [-0.2, -0.1, 0.3, -0.15, -0.08, -0.06, -0.1, 0.02, -0.3, -0.05, 0.01];
  const findings = (await modelOf({ rows, halfWidth: 0.35 })).findings;
  assert.deepEqual(
    findings.filter((f) => f.signature === "negative-ais"),
    [],
  );
});

test("an unstable ranking (split-half Jaccard below 0.5) is found; a stable one is not", async () => {
  const stability: AbilityStability[] = [
    { ability: "Analogical Reasoning", ability_id: "a0", halves: [200, 200], by_k: [{ k: K, n: 10240, shared: 4000, jaccard: 0.2439 }] },
    { ability: "Deductive Reasoning", ability_id: "a3", halves: [200, 200], by_k: [{ k: K, n: 10240, shared: 8000, jaccard: 0.6452 }] },
  ];
  const findings = (await modelOf({ rows: DEMO_PROFILE, labels: DEMO_LABELS, stability })).findings;
  assert.deepEqual(
    findings.map((f) => [f.signature, f.abilities]),
    [["unstable-ranking", ["Analogical Reasoning"]]],
  );
  assert.match(findings[0]!.figures, /share 4000 weights, Jaccard index 0\.244/);
});

test("a label that fails is found and points at its benchmark", async () => {
  const labels = new Map(DEMO_LABELS);
  // Analogical Reasoning's row is 0.093 on demo_mixed, 0.268 on demo_semantic
  labels.set("demo_mixed", "Analogical Reasoning");
  const findings = (await modelOf({ rows: DEMO_PROFILE, labels })).findings;
  assert.deepEqual(
    findings.map((f) => [f.signature, f.benchmark, f.abilities]),
    [["label-fails", "demo_mixed", ["Analogical Reasoning"]]],
  );
  assert.equal(findings[0]!.figures, "AIS 0.093 on demo_mixed, 0.268 on demo_semantic");
});

test("the findings are in the terminal's summary, the HTML report and the Markdown report", async () => {
  const rows = DEMO_PROFILE.map(([a, row]): [string | null, number[]] => [a, [...row]]);
  rows[8]![1] = [...rows[3]![1]];
  const built = await report({ rows });
  const model = built.models[0]!;
  const lines = findingLines(model).join("\n");
  assert.match(lines, /failure signatures: 1 found/);
  assert.match(lines, /Deductive Reasoning, Spatial Reasoning have the same AIS/);
  assert.match(lines, /remedy: make each dataset's items/);
  const html = renderHtml(built, { script: "" });
  assert.match(html, /Failure signatures found \(1\)/);
  assert.match(html, /threshold: every difference below 0\.05/);
  const markdown = renderMarkdown(built);
  assert.match(markdown, /### Failure signatures found \(1\)/);
  const healthy = await report({ rows: DEMO_PROFILE, labels: DEMO_LABELS });
  assert.match(renderHtml(healthy, { script: "" }), /Failure signatures: none found/);
});

test("the results view's header carries the findings of the rule and k it shows", async () => {
  const rows = DEMO_PROFILE.map(([a, row]): [string | null, number[]] => [a, [...row]]);
  rows[8]![1] = [...rows[3]![1]];
  const run = { dir: "/p/.bprof/runs/x", resultsFile: "/p/.bprof/runs/x/results.json" };
  const view = await resultsView({ ...run, results: results({ rows }) });
  assert.deepEqual(
    view.profile!.findings.map((f) => f.signature),
    ["same-ais"],
  );
  const healthy = await resultsView({ ...run, results: results({ rows: DEMO_PROFILE, labels: DEMO_LABELS }) });
  assert.deepEqual(healthy.profile!.findings, []);
});
