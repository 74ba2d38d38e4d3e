// The results view's model (one figure per query, its table for screen readers, its CSV and SVG),
// the cases behind a cell with their places in the data file, and where a run folder stands.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { RunnerError } from "../../../src/core/base/runnerError";
import { cellCases, dataFileCases, RunDocuments } from "../../../src/core/report/cases";
import { loadRun } from "../../../src/core/report/load";
import { heatmapSvg } from "../../../src/core/report/svg";
import { resultsView, viewCsv } from "../../../src/core/report/view";
import { claimRunFolder, releaseRunFolder, runStatus } from "../../../src/core/results/runs";
import { CONFIG_SNAPSHOT } from "../../../src/core/results/runFolder";
import {
  CAUSAL,
  fixtureResults,
  MODEL,
  QUANT,
  SPATIAL,
  withChunkedTopSets,
  withSignedRule,
  writeFixtureRun,
} from "../../support/reportFixture";

test("the view: defaults to the largest k, acc and the top sets; the controls' choices come from the run", async (t) => {
  const dir = await writeFixtureRun();
  t.after(() => fs.rm(path.dirname(path.dirname(dir)), { recursive: true, force: true }));
  const view = await resultsView(await loadRun(dir));
  assert.deepEqual(view.query, { model: MODEL, metric: "acc", k: 0.01, cells: "top", method: "paper", candidates: "mlp", sort: "config" });
  assert.deepEqual(view.choices, {
    models: [MODEL],
    metrics: ["acc", "acc_norm"],
    k: [0.001, 0.01],
    cells: ["top", "random", "specificity"],
    methods: [],
    candidates: [],
    sorts: [],
  });
  // a run made before the tests: its star is the interval's, and nothing to sort by
  assert.deepEqual(view.profile!.legend, { stars: "the interval excludes 0", saturated: null, randomNull: null, tested: false });
  assert.deepEqual(view.profile!.noise, []);
  assert.equal(view.profile!.rules, null, "one rule: nothing to compare");
  const profile = view.profile!;
  assert.deepEqual(profile.heatmap.rows, [CAUSAL, QUANT, SPATIAL]);
  assert.deepEqual(profile.table.rows[0], { label: CAUSAL, cells: ["0.500* [0.200, 0.800]", "-1.000 [-2.000, 0.000]"] });
  assert.deepEqual(
    profile.negativeCells.map((c) => `${c.row} x ${c.benchmark}`),
    [`${CAUSAL} x logiqa`],
  );
  assert.equal(profile.n, 1000);
  assert.equal(profile.overlap?.k, 0.01);

  const random = (await resultsView(await loadRun(dir), { cells: "random", k: 0.001 })).profile!;
  assert.deepEqual(random.heatmap.rows, ["random (control)"]);
  assert.equal(random.n, 100);
  const specificity = (await resultsView(await loadRun(dir), { cells: "specificity" })).profile!;
  assert.deepEqual(specificity.table.rows[1], { label: QUANT, cells: ["0.250", "0.000 [0.000, 0.000]"] });
  assert.match(specificity.heatmap.scale.title, /^specificity/);
  const norm = await resultsView(await loadRun(dir), { metric: "acc_norm", k: 123, cells: "bottom" });
  assert.deepEqual(
    norm.query,
    { model: MODEL, metric: "acc_norm", k: 0.01, cells: "top", method: "paper", candidates: "mlp", sort: "config" },
    "a k or a choice the run does not have falls back",
  );
  assert.equal(norm.profile!.table.rows[0]!.cells[1], "n/a (1)");
  assert.match(norm.profile!.reasons[0]!, /at chance/);

  const csv = viewCsv(view).split("\n");
  assert.equal(csv[0], "model,k,cells,row,benchmark,metric,ais,ci_low,ci_high,significant,reason,p,q,test,saturated");
  assert.equal(csv[1], `"${MODEL.replace(/"/g, '""')}",0.01,top,${CAUSAL},arc_easy,acc,0.5,0.2,0.8,true,,,,,`);
  assert.equal(csv.length, 2 + 6);
  const svg = heatmapSvg(profile.heatmap, { text: "#000", muted: "#666", background: "#fff", fontFamily: "sans-serif" });
  assert.equal((svg.match(/<rect x=/g) ?? []).length, profile.heatmap.cells.length + 1, "a rect per cell and the colour bar");
  assert.ok(svg.includes("Commonsense &#38; Causal Reasoning") && !svg.includes("Commonsense & Causal"), "names are escaped");
  assert.match(svg, /transform="rotate\(-90 [^"]*"[^>]*>ability ablated<\/text>/, "the rows' axis title, up the left edge");
  assert.match(svg, />benchmark<\/text>/, "the columns' axis title");
  const width = Number(/width="(\d+)"/.exec(svg)![1]);
  for (const x of [...svg.matchAll(/<text x="(-?[\d.]+)"/g)].map((m) => Number(m[1])))
    assert.ok(x >= 0 && x <= width, `text inside the figure: ${x}`);
});

test("the view: a run with top_chunked offers its chunked top sets as cells of their own", async (t) => {
  const dir = await writeFixtureRun(withChunkedTopSets(fixtureResults()));
  t.after(() => fs.rm(path.dirname(path.dirname(dir)), { recursive: true, force: true }));
  const view = await resultsView(await loadRun(dir), { cells: "top_chunked" });
  assert.deepEqual(view.choices.cells, ["top", "top_chunked", "random", "specificity"]);
  assert.equal(view.query.cells, "top_chunked");
  const profile = view.profile!;
  assert.deepEqual(profile.heatmap.rows, [`${CAUSAL} (top, chunked)`, `${QUANT} (top, chunked)`, `${SPATIAL} (top, chunked)`]);
  assert.match(profile.heatmap.title, /^AIS \(top sets, chunked as the released code\)/);
  // n is floor(k x parameters), not a chunked set's size
  assert.equal(profile.n, 1000);
});

/** The fixture run with a real project behind it: tasks, their data, and the run's config snapshot. */
async function runWithProject() {
  const results = fixtureResults();
  const dir = await writeFixtureRun(results);
  const root = path.dirname(path.dirname(dir));
  const doc = (name: string, i: number) => ({ id: `${name}-${i}`, question: `Question ${i}?`, choices: ["yes", "no"], answer: i % 2 });
  const task = (name: string) =>
    `task: ${name}\ndataset_path: json\ndataset_kwargs:\n  data_files:\n    test: ${name}.jsonl\noutput_type: multiple_choice\ndoc_to_text: "Q: {{question}}"\ndoc_to_choice: choices\ndoc_to_target: answer\n`;
  await fs.mkdir(path.join(root, "tasks"));
  const data = { arc_easy: path.join(root, "tasks", "arc_easy.jsonl"), logiqa: path.join(root, "tasks", "logiqa.jsonl") };
  for (const [name, count] of [
    ["arc_easy", 4],
    ["logiqa", 14],
  ] as const) {
    await fs.writeFile(path.join(root, "tasks", `${name}.yaml`), task(name));
    await fs.writeFile(data[name], Array.from({ length: count }, (_, i) => JSON.stringify(doc(name, i))).join("\n") + "\n");
  }
  const config = path.join(root, "profile.bprof.yaml");
  results.config_file = config;
  for (const b of results.models[0]!.benchmarks) {
    b.data_file = data[b.name as "arc_easy" | "logiqa"];
    b.data_sha256 = createHash("sha256")
      .update(await fs.readFile(b.data_file))
      .digest("hex");
  }
  await fs.writeFile(path.join(dir, "results.json"), JSON.stringify(results));
  await fs.writeFile(
    path.join(dir, CONFIG_SNAPSHOT),
    "models:\n  - path: ./model\nbenchmarks:\n  - task: ./tasks/arc_easy.yaml\n  - task: ./tasks/logiqa.yaml\n",
  );
  return { dir, root, data };
}

test("the cases of a cell: the flipped documents with their text, scores and line; a changed data file says so", async (t) => {
  const { dir, root, data } = await runWithProject();
  t.after(() => fs.rm(root, { recursive: true, force: true }));
  const documents = new RunDocuments(await loadRun(dir), "run");
  const cases = await cellCases(documents, { model: MODEL, k: 0.01, ability: CAUSAL, selection: "top", benchmark: "logiqa" }, "acc");
  assert.equal(cases.stale, undefined);
  assert.equal(cases.documents.length, 1);
  const [d] = cases.documents;
  assert.equal(d!.direction, "wrong_to_right");
  assert.deepEqual(d!.place, { file: data.logiqa, line: 14 }, "document 13 is on line 14");
  assert.deepEqual(d!.text, { context: "Q: Question 13?", choices: ["yes", "no"], target: "no" });
  assert.equal(d!.id, "logiqa-13", "the document's own id");

  const byLine = await dataFileCases(documents, data.logiqa, "acc");
  assert.deepEqual(
    byLine.lines.map((l) => [l.line, l.index, l.flips.map((f) => `${f.ability} ${f.selection} ${f.k} ${f.document.direction}`)]),
    [[14, 13, [`${CAUSAL} top 0.01 wrong_to_right`]]],
  );
  assert.equal(byLine.lines[0]!.id, "logiqa-13");
  assert.deepEqual(
    (await dataFileCases(documents, data.arc_easy, "acc")).lines.map((l) => [l.line, l.flips[0]!.document.direction]),
    [[1, "right_to_wrong"]],
  );

  await fs.appendFile(data.logiqa, JSON.stringify({ question: "new", choices: ["a", "b"], answer: 0 }) + "\n");
  const stale = await dataFileCases(new RunDocuments(await loadRun(dir), "run"), data.logiqa, "acc");
  assert.match(stale.stale!, /^logiqa\.jsonl changed since run 20260101-120000-abcd/);
});

test("a run folder says where it stands: running (and busy for another process), cancelled, interrupted, finished", async (t) => {
  const dir = await writeFixtureRun();
  t.after(() => fs.rm(path.dirname(path.dirname(dir)), { recursive: true, force: true }));
  await fs.rename(path.join(dir, "results.json"), path.join(dir, "results.later"));
  assert.deepEqual(await runStatus(dir), { state: "interrupted" });
  await claimRunFolder(dir);
  assert.deepEqual(await runStatus(dir), { state: "running", pid: process.pid });
  await releaseRunFolder(dir, new RunnerError("cancelled", "the run was cancelled"));
  assert.deepEqual(await runStatus(dir), { state: "failed", code: "cancelled", message: "the run was cancelled", resumable: true });

  const other = spawn("sleep", ["30"], { stdio: "ignore" });
  t.after(() => other.kill());
  await fs.writeFile(
    path.join(dir, "run-state.json"),
    JSON.stringify({ state: "running", pid: other.pid, hostname: (await import("node:os")).hostname() }),
  );
  await assert.rejects(claimRunFolder(dir), (e: RunnerError) => e.code === "target_busy" && e.message.includes(`process ${other.pid}`));
  other.kill();
  await new Promise((resolve) => other.once("exit", resolve));
  assert.deepEqual(await runStatus(dir), { state: "interrupted" }, "its process is gone");
  await claimRunFolder(dir);
  await releaseRunFolder(dir);
  await fs.rename(path.join(dir, "results.later"), path.join(dir, "results.json"));
  assert.deepEqual(await runStatus(dir), { state: "finished" });
});

test("a run ranked by both rules: the view picks a rule, compares them at the k, and a cell's documents are its rule's", async (t) => {
  const dir = await writeFixtureRun(withSignedRule(fixtureResults()));
  t.after(() => fs.rm(path.dirname(path.dirname(dir)), { recursive: true, force: true }));
  const run = await loadRun(dir);
  const paper = await resultsView(run);
  assert.deepEqual(paper.choices.methods, ["paper", "signed"]);
  assert.equal(paper.query.method, "paper");
  assert.equal(paper.profile!.table.rows[0]!.cells[0], "0.500* [0.200, 0.800]");
  const signed = await resultsView(run, { method: "signed" });
  assert.equal(signed.query.method, "signed");
  assert.equal(signed.profile!.method, "signed");
  assert.equal(signed.profile!.table.rows[0]!.cells[0], "0.000 [0.000, 0.000]", "the signed rule's own cells");
  assert.notEqual(signed.profile!.heatmap.id, paper.profile!.heatmap.id);
  assert.deepEqual(
    signed.profile!.rules!.rules.map((r) => [r.method, r.lowering.every((l) => l.share === 0)]),
    [
      ["paper", false],
      ["signed", true],
    ],
  );
  assert.equal((await resultsView(run, { method: "absolute" as never })).query.method, "paper", "an unknown rule falls back to the first");

  const documents = new RunDocuments(run, "run");
  const ref = { model: MODEL, k: 0.01, ability: CAUSAL, selection: "top" as const, benchmark: "logiqa" };
  assert.ok((await cellCases(documents, ref, "acc")).documents.length > 0, "the paper rule's set flipped documents");
  assert.equal((await cellCases(documents, { ...ref, method: "signed" }, "acc")).documents.length, 0, "the signed rule's did not");
});
