// `bprof validate` and a task's Python (issue 34): checking a task imports its `!function` helpers,
// which lm-eval would do only when it evaluates, so validate says which files ran, and
// `--no-task-python` refuses them (a marker file the helper writes shows whether it ran).
import assert from "node:assert/strict";
import { existsSync, promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { bprof } from "../support/cli";
import { makeTinyProject, type TinyProject } from "../support/tinyProject";

let project: TinyProject;
let scratch: string;
let marker: string;

before(async () => {
  scratch = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-task-python-"));
  project = await makeTinyProject(path.join(scratch, "project"));
  marker = path.join(scratch, "utils-ran");
  const tasks = path.dirname(project.taskFile);
  await fs.writeFile(
    path.join(tasks, "utils.py"),
    `open(${JSON.stringify(marker)}, "w").close()\ndef text(doc):\n    return "Question: " + doc["question"] + "\\nAnswer:"\n`,
  );
  const task = await fs.readFile(project.taskFile, "utf8");
  await fs.writeFile(project.taskFile, task.replace(/^doc_to_text: .*$/m, "doc_to_text: !function utils.text"));
});
after(() => fs.rm(scratch, { recursive: true, force: true }));

test("`bprof validate` runs a task's helpers, as lm-eval would when it evaluates, and says from which files", async () => {
  await fs.rm(marker, { force: true });
  const r = await bprof(["validate", "--no-target", project.configPath], { cwd: project.root });
  assert.equal(r.exitCode, 0, r.stderr);
  assert.equal(existsSync(marker), true, "the helper ran");
  assert.match(r.stderr, /^note: checking the tasks ran their Python \(tasks\/utils\.py\); --no-task-python refuses it$/m);
});

test("`bprof validate --no-task-python` refuses it: an error at the key, and the helper never runs", async () => {
  await fs.rm(marker, { force: true });
  const r = await bprof(["validate", "--no-task-python", project.configPath], { cwd: project.root });
  assert.equal(r.exitCode, 2, r.stderr);
  assert.equal(existsSync(marker), false, "the helper did not run");
  assert.match(
    r.stderr,
    /tiny_mc\.yaml:\d+:\d+: error: `doc_to_text` runs the Python helper `utils\.text`, and task Python is turned off .*--no-task-python.*\[task\.python-function\]/,
  );
  assert.doesNotMatch(r.stderr, /ran their Python/);
});
