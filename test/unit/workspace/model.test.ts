// The editor's workspace model: what an edit re-checks, that fixed problems are cleared in every
// file, that a file no config names still gets its own checks, and that an edit of a config
// reads nothing else again.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import type { TextFiles } from "../../../src/core/base/fsutil";
import { WorkspaceModel } from "../../../src/core/workspace/model";
import { makeProfileProject, QUANT } from "../../support/profileProject";
import { withoutLowPower } from "../../support/tinyProject";

/** Disk reads, counted per file. */
function countingDisk(): TextFiles & { reads: Map<string, number> } {
  const reads = new Map<string, number>();
  return { reads, read: (file) => (reads.set(file, (reads.get(file) ?? 0) + 1), fs.readFile(file, "utf8")) };
}

async function project() {
  const p = await makeProfileProject();
  const quant = path.join(p.root, "diag", "quantitative.diag.jsonl");
  const spatial = path.join(p.root, "diag", "spatial.diag.jsonl");
  return { ...p, quant, spatial, quantText: await fs.readFile(quant, "utf8") };
}

test("a problem fixed in a dataset is cleared: the update reports the file with no problems", async (t) => {
  const p = await project();
  t.after(() => fs.rm(p.root, { recursive: true, force: true }));
  const model = new WorkspaceModel();
  model.filesFound([p.configPath]);
  const first = await model.update();
  assert.deepEqual(first.checked, [`config:${p.configPath}`]);

  // The tiny datasets have too few items for a stable ranking: a warning on their first item.
  assert.deepEqual(
    first.problems.get(p.quant)?.map((x) => `${x.code}@${x.line}`),
    ["diag.too-few-items@1"],
  );

  const broken = p.quantText.replace('"answer":0', '"answer":7');
  model.setDocument(p.quant, broken, 1);
  const shown = await model.update();
  assert.deepEqual(
    shown.problems.get(p.quant)?.map((x) => `${x.code}@${x.line}`),
    ["diag.answer-out-of-range@1", "diag.too-few-items@2"],
  );
  assert.deepEqual(
    withoutLowPower(shown.problems.get(p.configPath)!).map((x) => x.code),
    ["config.dataset-has-errors"],
  );

  model.setDocument(p.quant, p.quantText, 2);
  const fixed = await model.update();
  assert.deepEqual(
    fixed.problems.get(p.quant)?.map((x) => `${x.code}@${x.line}`),
    ["diag.too-few-items@1"],
    "the error is gone from the dataset",
  );
  assert.deepEqual(
    fixed.problems.get(p.configPath)?.map((x) => x.code),
    ["config.low-power"],
    "and the config's summary of it is cleared (its benchmark's 8 documents detect no AIS: that warning stays)",
  );
  assert.equal((await model.update()).problems.size, 0, "nothing changed since: nothing to report");
});

test("an edit re-checks the edited file's configs only; an edit of a config reads no other file again", async (t) => {
  const p = await project();
  t.after(() => fs.rm(p.root, { recursive: true, force: true }));
  const other = path.join(p.root, "other.bprof.yaml");
  await fs.writeFile(
    other,
    (await fs.readFile(p.configPath, "utf8")).replace(
      /abilities:[\s\S]*?ablation:/,
      "abilities:\n  - name: Spatial Reasoning\n    data: ./diag/spatial.diag.jsonl\nablation:",
    ),
  );
  const disk = countingDisk();
  const model = new WorkspaceModel(disk);
  model.filesFound([p.configPath, other]);
  assert.equal((await model.update()).checked.length, 2);

  model.setDocument(p.quant, p.quantText.replace("How many apples", "How many red apples"), 1);
  assert.deepEqual((await model.update()).checked, [`config:${p.configPath}`], "only the config that reads the dataset");

  disk.reads.clear();
  const config = await fs.readFile(p.configPath, "utf8");
  model.setDocument(p.configPath, config.replace("seed: 3", "seed: 4"), 1);
  assert.deepEqual((await model.update()).checked, [`config:${p.configPath}`]);
  assert.deepEqual([...disk.reads.keys()], [], "tasks, data and datasets come from the caches");
});

test("a dataset no config names gets the checks that need no config, and loses them when a config names it", async (t) => {
  const p = await project();
  t.after(() => fs.rm(p.root, { recursive: true, force: true }));
  const lone = path.join(p.root, "diag", "lone.diag.jsonl");
  const item = { id: "a", ability: "Quantitativ Reasoning", context: "", question: "What is 2 + 2?", choices: ["4", "5"], answer: 0 };
  await fs.writeFile(
    lone,
    JSON.stringify(item) + "\n" + JSON.stringify({ ...item, id: "a", question: "What is 3 + 3?", choices: ["6", "5"] }) + "\n",
  );
  const model = new WorkspaceModel();
  model.filesFound([lone]);
  const alone = await model.update();
  assert.deepEqual(alone.checked, [`dataset:${lone}`]);
  assert.deepEqual(
    alone.problems
      .get(lone)
      ?.map((x) => x.code)
      .sort(),
    ["diag.duplicate-id", "diag.too-few-items", "diag.unknown-ability"],
  );
  assert.equal(alone.problems.get(lone)?.find((x) => x.code === "diag.unknown-ability")?.data?.suggestion, QUANT);

  const config = path.join(p.root, "lone.bprof.yaml");
  await fs.writeFile(config, (await fs.readFile(p.configPath, "utf8")).replace("./diag/quantitative.diag.jsonl", "./diag/lone.diag.jsonl"));
  model.filesChanged([{ file: config, kind: "created" }]);
  assert.deepEqual((await model.update()).checked, [`config:${config}`]);
  model.setDocument(lone, (await fs.readFile(lone, "utf8")).replaceAll("Quantitativ ", "Quantitative "), 1);
  const named = await model.update();
  assert.deepEqual(named.checked, [`config:${config}`], "the config checks it now, in its context");
  assert.deepEqual(
    named.problems
      .get(lone)
      ?.map((x) => x.code)
      .sort(),
    ["diag.duplicate-id", "diag.too-few-items"],
  );
});

test("an open task file no config names is checked as a task; closing it clears its problems", async (t) => {
  const p = await project();
  t.after(() => fs.rm(p.root, { recursive: true, force: true }));
  const task = path.join(p.root, "tasks", "draft.yaml");
  const model = new WorkspaceModel();
  model.setDocument(
    task,
    "task: draft\ndataset_path: json\ndataset_kwargs:\n  data_files:\n    test: missing.jsonl\noutput_type: multiple_choice\ndoc_to_text: q\ndoc_to_target: a\n",
    1,
  );
  const open = await model.update();
  assert.deepEqual(open.checked, [`task:${task}`]);
  assert.deepEqual(
    open.problems.get(task)?.map((x) => x.code),
    ["task.missing-key"],
    "doc_to_choice is missing",
  );
  model.closeDocument(task);
  assert.deepEqual((await model.update()).problems.get(task), []);
  model.setDocument(path.join(p.root, "ci.yaml"), "jobs:\n  test: {}\n", 1);
  assert.deepEqual((await model.update()).checked, [], "a YAML file that is not an lm-eval task is none of ours");
});

test("a config that stops parsing while it is typed keeps its datasets' checks in its context", async (t) => {
  const p = await project();
  t.after(() => fs.rm(p.root, { recursive: true, force: true }));
  const model = new WorkspaceModel();
  model.filesFound([p.configPath]);
  await model.update();
  const config = await fs.readFile(p.configPath, "utf8");
  model.setDocument(p.configPath, config.replace("models:", "models: [\n"), 1);
  const typing = await model.update();
  assert.deepEqual(typing.checked, [`config:${p.configPath}`], "no dataset falls back to the checks of a lone file");
  assert.equal(typing.problems.get(p.configPath)?.[0]?.code, "yaml.syntax");
});

test("a file created on disk that a config named re-checks it: the missing dataset is found", async (t) => {
  const p = await project();
  t.after(() => fs.rm(p.root, { recursive: true, force: true }));
  await fs.rename(p.spatial, `${p.spatial}.away`);
  const model = new WorkspaceModel();
  model.filesFound([p.configPath]);
  const missing = await model.update();
  assert.deepEqual(
    withoutLowPower(missing.problems.get(p.configPath)!).map((x) => x.code),
    ["config.dataset-not-found"],
  );
  await fs.rename(`${p.spatial}.away`, p.spatial);
  model.filesChanged([{ file: p.spatial, kind: "created" }]);
  assert.deepEqual(
    (await model.update()).problems.get(p.configPath)?.map((x) => x.code),
    ["config.low-power"],
  );
});

test("Validate Config's job compile adds an item past the model's window to the dataset's problems, until the dataset changes", async (t) => {
  const p = await project();
  t.after(() => fs.rm(p.root, { recursive: true, force: true }));
  const config = await fs.readFile(p.configPath, "utf8");
  await fs.writeFile(p.configPath, config.replace("    name: tiny-llama\n", "    name: tiny-llama\n    max_length: 200\n"));
  const lines = p.quantText.trim().split("\n");
  const long = JSON.stringify({ ...JSON.parse(lines[0]!), id: "quant-long", context: "far away ".repeat(60) });
  const model = new WorkspaceModel();
  model.setDocument(p.quant, [long, ...lines.slice(1)].join("\n") + "\n", 1);
  model.filesFound([p.configPath]);
  await model.update();
  assert.deepEqual(
    model.problemsOf(p.quant).map((x) => x.code),
    ["diag.too-few-items"],
    "typing does not tokenize every item",
  );

  const found = await model.compileJobs(p.configPath);
  assert.deepEqual(
    found.map((x) => `${x.code}@${x.line}`),
    ["diag.too-long@1"],
  );
  assert.match(found[0]!.message, /item quant-long: \d+ tokens, more than the model's max length \(200\)/);
  assert.deepEqual(
    model
      .takeChangedProblems()
      .get(p.quant)
      ?.map((x) => `${x.code}@${x.line}`),
    ["diag.too-long@1", "diag.too-few-items@1"],
  );

  model.setDocument(p.quant, p.quantText, 2);
  const fixed = await model.update();
  assert.deepEqual(
    fixed.problems.get(p.quant)?.map((x) => x.code),
    ["diag.too-few-items"],
    "the edit drops the compile's problem",
  );
  assert.deepEqual(await model.compileJobs(p.configPath), []);
});
