// Whether a task's Python runs: a repository's run folder in Restricted Mode (its results, a cell's
// documents and the marked data file shown, the Python its config snapshot names never run), and
// the ask-once policy of a trusted workspace (per helper file and content).
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { loadTask } from "../../../src/core/lmeval/task";
import {
  consentKey,
  effectiveTaskPythonSetting,
  filesToAsk,
  hashHelperFiles,
  helperRefusal,
  withAnswer,
  workspacePolicy,
  type TaskPythonAnswers,
} from "../../../src/core/lmeval/taskPython";
import { CONFIG_SNAPSHOT, RUN_MANIFEST } from "../../../src/core/results/runFolder";
import { WorkspaceModel } from "../../../src/core/workspace/model";
import { WorkspaceService } from "../../../src/core/workspace/service";
import { CAUSAL, fixtureResults, MODEL, writeFixtureRun } from "../../support/reportFixture";

const exists = (file: string) =>
  fs.stat(file).then(
    () => true,
    () => false,
  );

/**
 * A cloned repository with a run folder of its own: the config names its tasks by name under
 * `task_paths: ["~"]` (found wherever the clone is), and logiqa's doc_to_text is `!function
 * utils.text`, whose import leaves a marker file behind.
 */
async function repositoryWithRun(): Promise<{ root: string; runDir: string; config: string; data: string; marker: string; utils: string }> {
  const results = fixtureResults();
  const runDir = await writeFixtureRun(results);
  const root = path.dirname(path.dirname(runDir));
  const tasks = path.join(root, "tasks");
  await fs.mkdir(tasks);
  const marker = path.join(root, "python-ran");
  const utils = path.join(tasks, "utils.py");
  await fs.writeFile(utils, `open(${JSON.stringify(marker)}, "w").close()\ndef text(doc):\n    return "Q: " + doc["question"]\n`);
  const doc = (i: number) => ({ question: `Question ${i}?`, choices: ["yes", "no"], answer: i % 2 });
  const task = (name: string, docToText: string) =>
    `task: ${name}\ndataset_path: json\ndataset_kwargs:\n  data_files:\n    test: ${name}.jsonl\noutput_type: multiple_choice\ndoc_to_text: ${docToText}\ndoc_to_choice: choices\ndoc_to_target: answer\n`;
  await fs.writeFile(path.join(tasks, "arc_easy.yaml"), task("arc_easy", '"Q: {{question}}"'));
  await fs.writeFile(path.join(tasks, "logiqa.yaml"), task("logiqa", "!function utils.text"));
  const files: Record<string, string> = {};
  for (const [name, count] of [
    ["arc_easy", 4],
    ["logiqa", 14],
  ] as const) {
    files[name] = path.join(tasks, `${name}.jsonl`);
    await fs.writeFile(files[name], Array.from({ length: count }, (_, i) => JSON.stringify(doc(i))).join("\n") + "\n");
  }
  const config = path.join(root, "profile.bprof.yaml");
  const text = 'output: .\ntask_paths: ["~"]\nmodels:\n  - path: ./model\nbenchmarks:\n  - task: arc_easy\n  - task: logiqa\n';
  await fs.writeFile(config, text);
  await fs.writeFile(path.join(runDir, CONFIG_SNAPSHOT), text);
  results.config_file = config;
  for (const b of results.models[0]!.benchmarks) {
    b.data_file = files[b.name]!;
    b.data_sha256 = createHash("sha256")
      .update(await fs.readFile(b.data_file))
      .digest("hex");
  }
  await fs.writeFile(path.join(runDir, "results.json"), JSON.stringify(results));
  await fs.writeFile(path.join(runDir, RUN_MANIFEST), JSON.stringify({ run_id: results.run_id, created: "", config_file: config }));
  return { root, runDir, config, data: files.logiqa!, marker, utils };
}

/** HOME set to `home` for the test: `~` in task_paths is the clone's folder. */
function withHome(t: { after(fn: () => void): void }, home: string): void {
  const before = process.env.HOME;
  process.env.HOME = home;
  t.after(() => (before === undefined ? delete process.env.HOME : (process.env.HOME = before)));
}

const LOGIQA_CELL = { model: MODEL, k: 0.01, ability: CAUSAL, selection: "top", benchmark: "logiqa" } as const;

test("Restricted Mode: a repository's run shows its cells, documents and marked lines, and its tasks' Python never runs", async (t) => {
  const repo = await repositoryWithRun();
  t.after(() => fs.rm(repo.root, { recursive: true, force: true }));
  withHome(t, repo.root);
  const model = new WorkspaceModel();
  model.setHelpers("refuse");
  model.filesFound([repo.config]);
  await model.update();
  const service = new WorkspaceService(model);

  // the Negative AIS view's and the results view's cell: the flipped document with its line, no text
  const cell = await service.cellCases(repo.runDir, LOGIQA_CELL, "acc");
  assert.equal(cell.documents.length, 1);
  assert.deepEqual(cell.documents[0]!.place, { file: repo.data, line: 14 }, "its place needs no Python");
  assert.equal(cell.documents[0]!.text, undefined);
  assert.match(cell.problem ?? "", /runs the Python helper `utils\.text`, and helpers run only in a trusted workspace/);
  // a cell of a task without Python has its texts too
  const arc = await service.cellCases(repo.runDir, { ...LOGIQA_CELL, benchmark: "arc_easy" }, "acc");
  assert.equal(arc.documents[0]!.text?.context, "Q: Question 0?");
  // the data file with its inline cases
  const [cases] = await service.cases(repo.data, {});
  assert.deepEqual(
    cases?.lines.map((l) => l.line),
    [14],
  );
  assert.equal(await exists(repo.marker), false, "utils.py was never imported");

  // The same run trusted and allowed: the text comes from Python (the marker shows the test would see it run).
  model.setHelpers("run");
  const trusted = await service.cellCases(repo.runDir, LOGIQA_CELL, "acc");
  assert.equal(trusted.documents[0]!.text?.context, "Q: Question 13?");
  assert.equal(await exists(repo.marker), true);
});

test("ask once: each helper file is asked about once per content; an edit asks again; the setting and trust decide first", async (t) => {
  const repo = await repositoryWithRun();
  t.after(() => fs.rm(repo.root, { recursive: true, force: true }));
  const [utils] = await hashHelperFiles([repo.utils, repo.utils]);
  assert.ok(utils && utils.sha256.length === 64);

  let answers: TaskPythonAnswers = {};
  assert.deepEqual(filesToAsk([utils, utils], answers), [utils], "one question per file");
  assert.deepEqual(workspacePolicy(true, "ask", answers), { allowed: [] });
  const refused = helperRefusal(workspacePolicy(true, "ask", answers), [utils]);
  assert.deepEqual(refused?.ask, [utils]);
  assert.match(refused!.message, /imports `utils\.py`, Python this folder ships, which Benchmark Profiler runs only once you allow it/);

  answers = withAnswer(answers, [utils], true);
  assert.deepEqual(filesToAsk([utils], answers), [], "answered: not asked again");
  assert.deepEqual(workspacePolicy(true, "ask", answers), { allowed: [consentKey(utils)] });
  assert.equal(helperRefusal(workspacePolicy(true, "ask", answers), [utils]), undefined);

  // the helper edited: a new content, asked about again
  await fs.appendFile(repo.utils, "# changed\n");
  const [edited] = await hashHelperFiles([repo.utils]);
  assert.notEqual(edited!.sha256, utils.sha256);
  assert.deepEqual(filesToAsk([edited!], answers), [edited]);
  assert.deepEqual(helperRefusal(workspacePolicy(true, "ask", answers), [edited!])?.ask, [edited]);

  // refused: not asked again, and not run
  answers = withAnswer(answers, [edited!], false);
  assert.deepEqual(filesToAsk([edited!], answers), []);
  assert.ok(helperRefusal(workspacePolicy(true, "ask", answers), [edited!]));

  assert.equal(workspacePolicy(false, "allow", answers), "refuse", "Restricted Mode wins over the setting");
  // a repository's own settings may make it stricter, never laxer
  assert.equal(effectiveTaskPythonSetting(undefined, "allow"), "ask");
  assert.equal(effectiveTaskPythonSetting("allow", "never"), "never");
  assert.equal(effectiveTaskPythonSetting("allow", "ask"), "ask");
  assert.equal(effectiveTaskPythonSetting("never", "allow"), "never");
  assert.equal(effectiveTaskPythonSetting("allow", undefined), "allow");
  assert.equal(effectiveTaskPythonSetting("yes", 3), "ask");
  assert.equal(workspacePolicy(true, "allow", {}), "run");
  assert.equal(workspacePolicy(true, "never", answers), "never");
  assert.match(helperRefusal("never", [utils])!.message, /turned off/);
  assert.equal(helperRefusal("never", [utils])!.ask, undefined, "nothing to ask when the setting says never");
});

test("a task under the ask policy: an error with the files to ask about until allowed, then it runs", async (t) => {
  const repo = await repositoryWithRun();
  t.after(() => fs.rm(repo.root, { recursive: true, force: true }));
  const taskFile = path.join(path.dirname(repo.utils), "logiqa.yaml");
  const asked = await loadTask(taskFile, { helpers: workspacePolicy(true, "ask", {}) });
  assert.equal(asked.task, undefined);
  const problem = asked.problems.find((p) => p.code === "task.python-function");
  assert.deepEqual(
    problem?.data?.pythonFiles?.map((f) => f.file),
    [repo.utils],
  );
  assert.equal(await exists(repo.marker), false);
  const answers = withAnswer({}, problem!.data!.pythonFiles!, true);
  const allowed = await loadTask(taskFile, { helpers: workspacePolicy(true, "ask", answers) });
  assert.equal(allowed.task?.items[0]?.context, "Q: Question 0?");
  assert.equal(await exists(repo.marker), true);
});

test("the workspace model under the ask policy: its checks import no helper until the answer allows it", async (t) => {
  const repo = await repositoryWithRun();
  t.after(() => fs.rm(repo.root, { recursive: true, force: true }));
  withHome(t, repo.root);
  const model = new WorkspaceModel();
  model.setHelpers(workspacePolicy(true, "ask", {}));
  model.filesFound([repo.config]);
  await model.update();
  const asking = model.problemsOf(path.join(path.dirname(repo.utils), "logiqa.yaml")).find((p) => p.data?.pythonFiles);
  assert.ok(asking, "the task's problem names the file to ask about");
  assert.equal(await exists(repo.marker), false);
  model.setHelpers(workspacePolicy(true, "ask", withAnswer({}, asking.data!.pythonFiles!, true)));
  await model.update();
  assert.equal(await exists(repo.marker), true);
});

test("a task whose process_docs decides its documents: no place without Python, the processed document's line with it", async (t) => {
  const repo = await repositoryWithRun();
  t.after(() => fs.rm(repo.root, { recursive: true, force: true }));
  withHome(t, repo.root);
  const taskFile = path.join(path.dirname(repo.utils), "logiqa.yaml");
  // process_docs could drop or reorder documents: without Python the data file's lines are not theirs
  await fs.appendFile(repo.utils, "def shout(dataset):\n    return dataset.map(lambda d: {**d, 'question': d['question'].upper()})\n");
  const task = await fs.readFile(taskFile, "utf8");
  await fs.writeFile(taskFile, task.replace("!function utils.text", '"Q: {{question}}"') + "process_docs: !function utils.shout\n");
  const model = new WorkspaceModel();
  model.setHelpers("refuse");
  const service = new WorkspaceService(model);
  const refused = await service.cellCases(repo.runDir, LOGIQA_CELL, "acc");
  assert.equal(refused.documents[0]!.place, undefined, "no line is guessed for a document process_docs makes");
  assert.match(refused.problem ?? "", /`process_docs` runs the Python helper `utils\.shout`/);
  assert.equal(await exists(repo.marker), false);
  model.setHelpers("run");
  const run = await service.cellCases(repo.runDir, LOGIQA_CELL, "acc");
  assert.deepEqual(run.documents[0]!.place, { file: repo.data, line: 14 });
  assert.equal(run.documents[0]!.text?.context, "Q: QUESTION 13?");
});
