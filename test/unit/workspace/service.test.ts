// What the editor asks of the workspace model: hovers (a diagnostic item as the importance loss
// reads it, a benchmark's first document, an ability's health), completion with the workspace's
// names and files, the outline of a config; and the worker thread that serves them.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { documentsToDetect } from "../../../src/core/analysis/power";
import { checkDiagnosticDataset } from "../../../src/core/diagnostic/dataset";
import { problemCountsText, sumCounts } from "../../../src/core/language/outline";
import { diagnosticSequence, renderDiagnosticItem } from "../../../src/core/prompts/diagnosticText";
import { loadTokenizer } from "../../../src/core/prompts/tokenize";
import { WorkspaceClient, type ProblemsUpdate } from "../../../src/core/workspace/client";
import { WorkspaceModel } from "../../../src/core/workspace/model";
import { WorkspaceService } from "../../../src/core/workspace/service";
import { makeProfileProject, QUANT, SPATIAL } from "../../support/profileProject";
import { writeScoredRun } from "../../support/tinyProject";

async function served() {
  const project = await makeProfileProject();
  const model = new WorkspaceModel();
  model.filesFound([project.configPath]);
  await model.update();
  const service = new WorkspaceService(model);
  service.setRoots([project.root]);
  return { project, model, service, config: await fs.readFile(project.configPath, "utf8") };
}

/** The 0-based position of the first `needle` in `text`, plus `offset` characters. */
function positionOf(text: string, needle: string, offset = 0): { line: number; character: number } {
  const i = text.indexOf(needle) + offset;
  const before = text.slice(0, i).split("\n");
  return { line: before.length - 1, character: before[before.length - 1]!.length };
}

test("hover on a diagnostic item: the text the importance loss reads and its tokens, for the config's model", async (t) => {
  const { project, service } = await served();
  t.after(() => fs.rm(project.root, { recursive: true, force: true }));
  const file = path.join(project.root, "diag", "quantitative.diag.jsonl");
  const item = checkDiagnosticDataset(file, await fs.readFile(file, "utf8")).items[1]!;
  const tokens = diagnosticSequence(await loadTokenizer(path.join(project.root, "model")), item).length;
  const hover = await service.hover(file, { line: 1, character: 10 });
  assert.ok(hover);
  assert.equal(hover.schemaOnly, false);
  assert.ok(hover.markdown.includes(`For \`tiny-llama\` (${tokens} tokens), as plain text, in profile\\.bprof\\.yaml:`), hover.markdown);
  assert.ok(hover.markdown.includes("```text\n" + renderDiagnosticItem(item) + "\n```"), hover.markdown);
  assert.equal(await service.hover(file, { line: 9, character: 0 }), null, "no item on that line");
});

test("hover on a config: a benchmark's first document and size, an ability's items and health, a key's meaning", async (t) => {
  const { project, service, config } = await served();
  t.after(() => fs.rm(project.root, { recursive: true, force: true }));
  const benchmark = await service.hover(project.configPath, positionOf(config, "tiny_yes.yaml", 2));
  assert.match(benchmark!.markdown, /^\*\*Benchmark `tiny_yes`\*\* · multiple_choice · 8 documents scored · chance 0\.500/);
  assert.ok(benchmark!.markdown.includes("```text\nQuestion: Is ice cold or hot?\nAnswer:\n```"), benchmark!.markdown);
  assert.match(benchmark!.markdown, /\*\*A\. cold\*\* · B\. hot/);
  const ability = await service.hover(project.configPath, positionOf(config, SPATIAL, 2));
  assert.match(ability!.markdown, /^\*\*Ability Spatial Reasoning\*\* · from `spatial\.diag\.jsonl`/);
  assert.match(ability!.markdown, /3 items: fewer than the 200 a stable ranking needs/);
  const key = await service.hover(project.configPath, positionOf(config, "batch_size", 2));
  assert.deepEqual(key, { markdown: "**batch\\_size** (default `8`)\n\nDiagnostic sequences per importance batch.", schemaOnly: true });
});

test("hover on a benchmark entry: its minimum detectable AIS at an assumed baseline, then at the newest run's; the warning follows", async (t) => {
  const { project, model, service, config } = await served();
  t.after(() => fs.rm(project.root, { recursive: true, force: true }));
  const at = positionOf(config, "tiny_yes.yaml", 2);
  const before = (await service.hover(project.configPath, at))!.markdown;
  const assumedNeeds = documentsToDetect({ baseline: 0.75, chance: 0.5 }, 0.1)!;
  assert.ok(
    before.includes(
      "Minimum detectable AIS: none up to 1 at 95% confidence and 80% power, at an assumed baseline 0.75 (halfway between chance and 1: no finished run has scored it); " +
        `\`stats.min_effect\` 0.1 needs ${assumedNeeds.toLocaleString("en-US")} documents`,
    ),
    before,
  );
  const warning = () => model.problemsOf(project.configPath).find((p) => p.code === "config.low-power");
  assert.match(warning()!.message, /its 8 documents detect no AIS up to 1 at a baseline assumed halfway between chance 0\.5 and 1/);

  // a run finishes: its results.json appears, and the config is checked again at its baseline
  const runId = "20261201-000000-aaaa";
  const dir = await writeScoredRun(project.configPath, runId, [
    { name: "tiny-llama", benchmarks: [{ name: "tiny_yes", items: 8, acc: 0.875, chance: 0.5 }] },
  ]);
  model.filesChanged([{ file: path.join(dir, "results.json"), kind: "created" }]);
  await model.update();
  const after = (await service.hover(project.configPath, at))!.markdown;
  const runNeeds = documentsToDetect({ baseline: 0.875, chance: 0.5 }, 0.1)!;
  assert.ok(
    after.includes(
      `Minimum detectable AIS: none up to 1 at 95% confidence and 80% power, from the baseline acc 0.875 of run \`${runId}\` (chance 0.5); ` +
        `\`stats.min_effect\` 0.1 needs ${runNeeds.toLocaleString("en-US")} documents`,
    ),
    after,
  );
  assert.ok(!after.includes("assumed"), after);
  assert.match(
    warning()!.message,
    new RegExp(
      `its 8 documents detect no AIS up to 1 at the baseline acc 0\\.875 of run ${runId} \\(chance 0\\.5\\); it would need ${runNeeds} documents$`,
    ),
  );
  assert.deepEqual(warning()!.data, { documents: runNeeds });
});

test("completion in a config knows the workspace's datasets and abilities; the outline counts items and problems", async (t) => {
  const { project, service, config } = await served();
  t.after(() => fs.rm(project.root, { recursive: true, force: true }));
  const data = await service.completion(project.configPath, positionOf(config, "./diag/quantitative", 0));
  assert.deepEqual(
    data.map((i) => i.insertText),
    ["./diag/quantitative.diag.jsonl", "./diag/spatial.diag.jsonl"],
  );
  const k = await service.completion(project.configPath, positionOf(config, "0.01, 0.001", 0));
  assert.match(
    k.at(-1)!.documentation!,
    new RegExp(`tiny\\\\-llama: n = ${Math.floor(0.01024 * project.parameters).toLocaleString("en-US")} of`),
  );

  const [outline] = await service.outlines();
  assert.equal(outline!.file, project.configPath);
  assert.deepEqual(
    outline!.models.map((m) => [m.label, m.detail]),
    [["tiny-llama", "./model"]],
  );
  assert.deepEqual(
    outline!.benchmarks.map((b) => [b.label, b.count]),
    [["tiny_yes", 8]],
  );
  assert.deepEqual(
    outline!.abilities.map((a) => [a.label, a.count, a.problems, a.healthWarnings]),
    [
      [QUANT, 4, { errors: 0, warnings: 1, inFiles: { errors: 0, warnings: 1 } }, 1],
      [SPATIAL, 3, { errors: 0, warnings: 1, inFiles: { errors: 0, warnings: 1 } }, 1],
    ],
  );
  assert.equal(
    outline!.abilities[1]!.range.start.line,
    config.split("\n").findIndex((l) => l.includes(SPATIAL)),
  );
  assert.deepEqual(outline!.problems, { errors: 0, warnings: 3, inFiles: { errors: 0, warnings: 2 } });
  assert.equal(
    problemCountsText(outline!.problems),
    "1 warning in config, 2 in files it names",
    "the config's own is its benchmark's power: 8 documents detect no AIS (config.low-power)",
  );
});

test("the Profiles tree's counts say where the problems are, so they match the Problems panel", () => {
  assert.equal(problemCountsText({ errors: 0, warnings: 0 }), "");
  assert.equal(problemCountsText({ errors: 1, warnings: 2, inFiles: { errors: 0, warnings: 0 } }), "1 error, 2 warnings");
  assert.equal(
    problemCountsText({ errors: 4, warnings: 1, inFiles: { errors: 3, warnings: 1 } }),
    "1 error in config, 3 in files it names; 1 warning in files it names",
  );
  assert.deepEqual(
    sumCounts([
      { errors: 1, warnings: 0, inFiles: { errors: 1, warnings: 0 } },
      { errors: 2, warnings: 1, inFiles: { errors: 0, warnings: 1 } },
    ]),
    { errors: 3, warnings: 1, inFiles: { errors: 1, warnings: 1 } },
  );
});

test("the worker thread: problems arrive as the text changes, and requests are answered", async (t) => {
  const project = await makeProfileProject();
  const updates: ProblemsUpdate[] = [];
  const client = new WorkspaceClient({
    script: new URL("../../support/tsWorker.mjs", import.meta.url),
    workerData: { script: new URL("../../../src/core/workspace/worker.ts", import.meta.url).href },
    onProblems: (u) => updates.push(u),
  });
  t.after(() => {
    client.dispose();
    return fs.rm(project.root, { recursive: true, force: true });
  });
  // A document that changes nothing, then the config: the second change must not wait behind the first.
  client.setDocuments([{ file: path.join(project.root, "settings.json"), text: "{}", version: 1 }]);
  client.filesFound([project.configPath]);
  assert.equal((await client.request("settled", {})).checked, 1);
  const file = path.join(project.root, "diag", "spatial.diag.jsonl");
  const text = await fs.readFile(file, "utf8");
  client.setDocuments([{ file, text: text.replace('"answer":0', '"answer":5'), version: 1 }]);
  assert.deepEqual(
    (await client.request("problemsOf", { file })).map((p) => p.code),
    ["diag.answer-out-of-range", "diag.too-few-items"],
  );
  assert.ok(
    updates.some((u) => u.files.some(([f, problems]) => f === file && problems.some((p) => p.code === "diag.answer-out-of-range"))),
  );
  const hover = await client.request("hover", { file, position: { line: 1, character: 3 } });
  assert.match(hover!.markdown, /Diagnostic item `spatial-1`/);
});

test("the outline counts each entry's own items when a list of files with sets: separate makes more abilities than entries", async (t) => {
  const { project, model, service, config } = await served();
  t.after(() => fs.rm(project.root, { recursive: true, force: true }));
  const diag = path.join(project.root, "diag");
  await fs.copyFile(path.join(diag, "quantitative.diag.jsonl"), path.join(diag, "quantitative-b.diag.jsonl"));
  const separate = config.replace(
    "    data: ./diag/quantitative.diag.jsonl\n",
    "    data: [./diag/quantitative.diag.jsonl, ./diag/quantitative-b.diag.jsonl]\n    sets: separate\n",
  );
  assert.notEqual(separate, config);
  await fs.writeFile(project.configPath, separate);
  model.filesFound([project.configPath, path.join(diag, "quantitative-b.diag.jsonl")]);
  await model.update();
  const [outline] = await service.outlines();
  assert.deepEqual(
    outline!.abilities.map((a) => [a.label, a.count]),
    [
      [QUANT, 4],
      [SPATIAL, 3],
    ],
    "the entry after the one with two sets is counted as itself, not as the second set",
  );
  const hover = await service.hover(project.configPath, positionOf(separate, SPATIAL, 2));
  assert.match(hover!.markdown, /^\*\*Ability Spatial Reasoning\*\* · from `spatial\.diag\.jsonl`/, "and its hover is its own");
});
