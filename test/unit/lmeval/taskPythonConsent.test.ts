// Consent to a task's Python is to exactly the code that runs, byte for byte: a bytecode cache
// planted beside a helper, a sibling module it imports (hashed and named with it), a module at
// the working folder's root that shadows the standard library, and a `!function` whose module is
// a path: none of them runs unless it is the source the user (or the policy) allowed.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { errorsOf, type Problem } from "../../../src/core/base/problems";
import { loadTask } from "../../../src/core/lmeval/task";
import { consentKey, workspacePolicy, type HelperFile } from "../../../src/core/lmeval/taskPython";
import { importedModules } from "../../../src/core/lmeval/pythonImports";

let dir: string;
before(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-consent-"));
});
after(() => fs.rm(dir, { recursive: true, force: true }));

const DOCS = [{ q: "Is water wet?" }, { q: "Is fire cold?" }].map((d) => JSON.stringify(d)).join("\n") + "\n";
const TASK = (docToText: string) =>
  `task: t\ndataset_path: json\ndataset_kwargs:\n  data_files:\n    test: docs.jsonl\noutput_type: multiple_choice\ndoc_to_text: ${docToText}\ndoc_to_choice: ["yes", "no"]\ndoc_to_target: 0\n`;

/** A task folder with the files given; returns its path. */
async function taskFolder(name: string, files: Record<string, string>): Promise<string> {
  const root = path.join(dir, name);
  await fs.mkdir(root, { recursive: true });
  for (const [file, text] of Object.entries({ "docs.jsonl": DOCS, ...files })) {
    await fs.mkdir(path.dirname(path.join(root, file)), { recursive: true });
    await fs.writeFile(path.join(root, file), text);
  }
  return root;
}

/** Python that leaves `marker` behind when it runs. */
const leaves = (marker: string) => `open(${JSON.stringify(marker)}, "w").close()\n`;
const errors = (problems: Problem[]) => errorsOf(problems).map((p) => `${p.code} ${p.message}`);

test("a bytecode cache planted beside a helper is never run in place of the source that was hashed", async () => {
  const marker = path.join(dir, "pyc-ran");
  const root = await taskFolder("pyc", {
    "utils.py": "def text(doc):\n    return 'Q: ' + doc['q']\n",
    "evil.py": `${leaves(marker)}def text(doc):\n    return 'owned'\n`,
    "task.yaml": TASK("!function utils.text"),
  });
  // evil.py compiled to where Python's cache of utils.py lies, in the mode that never checks the source
  execFileSync("python3", [
    "-c",
    "import importlib.util, py_compile, sys; py_compile.compile(sys.argv[1], cfile=importlib.util.cache_from_source(sys.argv[2]), invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)",
    path.join(root, "evil.py"),
    path.join(root, "utils.py"),
  ]);
  const { task, problems } = await loadTask(path.join(root, "task.yaml"), { helpers: "run" });
  assert.deepEqual(errors(problems), []);
  assert.equal(task?.items[0]?.context, "Q: Is water wet?");
  assert.equal(existsSync(marker), false, "the planted bytecode did not run");
  assert.deepEqual(await fs.readdir(path.join(root, "__pycache__")), ["utils.cpython-" + pythonTag() + ".pyc"], "no bytecode was written");
});

function pythonTag(): string {
  return execFileSync("python3", ["-c", "import sys; print(sys.implementation.cache_tag.split('-')[1])"]).toString().trim();
}

test("a helper's sibling modules are hashed and named with it: an allowed helper does not run a sibling nobody allowed", async () => {
  const root = await taskFolder("sibling", {
    "utils.py": "from common import prefix\ndef text(doc):\n    return prefix() + doc['q']\n",
    "common.py": "def prefix():\n    return 'Q: '\n",
    "task.yaml": TASK("!function utils.text"),
  });
  const taskFile = path.join(root, "task.yaml");
  const asked = await loadTask(taskFile, { helpers: workspacePolicy(true, "ask", {}) });
  const ask = errorsOf(asked.problems)[0]?.data?.pythonFiles as HelperFile[] | undefined;
  assert.deepEqual(
    ask?.map((f) => path.basename(f.file)),
    ["utils.py", "common.py"],
    "the question names the module the helper imports",
  );
  // an answer about utils.py alone (what consent covered before) does not let common.py run
  const utilsOnly = { [consentKey(ask![0]!)]: true };
  const refused = await loadTask(taskFile, { helpers: workspacePolicy(true, "ask", utilsOnly) });
  assert.match(errors(refused.problems).join("\n"), /imports `common\.py`/);
  const both = { ...utilsOnly, [consentKey(ask![1]!)]: true };
  const allowed = await loadTask(taskFile, { helpers: workspacePolicy(true, "ask", both) });
  assert.equal(allowed.task?.items[0]?.context, "Q: Is water wet?");
  // the sibling edited after its consent: asked about again, not run
  await fs.writeFile(path.join(root, "common.py"), "def prefix():\n    return 'Changed: '\n");
  const edited = await loadTask(taskFile, { helpers: workspacePolicy(true, "ask", both) });
  assert.match(errors(edited.problems).join("\n"), /imports `common\.py`/);
});

test("a module the imports do not name (computed at run time) is refused when it is imported, never run unasked", async () => {
  const marker = path.join(dir, "dynamic-ran");
  const root = await taskFolder("dynamic", {
    "utils.py": "import importlib\ndef text(doc):\n    return importlib.import_module('dyn' + 'amic').text(doc)\n",
    "dynamic.py": `${leaves(marker)}def text(doc):\n    return doc['q']\n`,
    "task.yaml": TASK("!function utils.text"),
  });
  const { problems } = await loadTask(path.join(root, "task.yaml"), { helpers: "run" });
  assert.match(errors(problems).join("\n"), /dynamic\.py is not among the task's Python files allowed to run/);
  assert.equal(existsSync(marker), false);
});

test("a module at the working folder's root does not shadow one the bridge or a helper imports", async () => {
  const marker = path.join(dir, "shadow-ran");
  const repository = await taskFolder("shadow", {
    "json.py": leaves(marker),
    "random.py": leaves(marker),
    "tasks/utils.py": "import collections\ndef text(doc):\n    return 'Q: ' + doc['q']\n",
    "collections.py": leaves(marker),
    "tasks/docs.jsonl": DOCS,
    "tasks/task.yaml": TASK("!function utils.text"),
  });
  const cwd = process.cwd();
  process.chdir(repository);
  try {
    const { task, problems } = await loadTask(path.join(repository, "tasks", "task.yaml"), { helpers: "run" });
    assert.deepEqual(errors(problems), []);
    assert.equal(task?.items[0]?.context, "Q: Is water wet?");
  } finally {
    process.chdir(cwd);
  }
  assert.equal(existsSync(marker), false, "no module of the working folder ran");
});

test("a `!function` whose module is a path (absolute, a leading dot, ..) is an error at its key, and nothing is run", async () => {
  const marker = path.join(dir, "outside-ran");
  const outside = path.join(dir, "outside");
  await fs.mkdir(outside, { recursive: true });
  await fs.writeFile(path.join(outside, "evil.py"), `${leaves(marker)}def text(doc):\n    return 'owned'\n`);
  for (const [name, module] of [
    ["absolute", `${outside}/evil`],
    ["dot", ".evil"],
    ["parent", "..outside.evil"],
  ] as const) {
    const root = await taskFolder(`path-${name}`, { "task.yaml": TASK(`!function ${module}.text`) });
    const { problems } = await loadTask(path.join(root, "task.yaml"), { helpers: "run" });
    const [problem] = errorsOf(problems);
    assert.equal(problem?.code, "task.python-function", `${name}: ${errors(problems).join("\n")}`);
    assert.match(problem.message, /is not `module\.function` of Python names/);
    assert.equal(problem.line, 7);
  }
  assert.equal(existsSync(marker), false, "the file outside the task's folder never ran");
});

test("the imports read off a helper: plain, from, relative, parenthesized, aliased, and import_module with a literal", () => {
  const source = [
    "import os, re as regex",
    "from common import (a,",
    "    b)  # two names",
    "from .pkg import sub",
    "from . import sibling",
    "from lm_eval.filters.extraction import Filter",
    "x = importlib.import_module('plugins.extra')",
    "import a.b.c",
  ].join("\n");
  assert.deepEqual(importedModules(source, "top").sort(), [
    "a.b.c",
    "common",
    "common.a",
    "common.b",
    "lm_eval.filters.extraction",
    "lm_eval.filters.extraction.Filter",
    "os",
    "plugins.extra",
    "re",
    "top",
    "top.pkg",
    "top.pkg.sub",
    "top.sibling",
  ]);
  // a top-level module's relative import leads nowhere
  assert.deepEqual(importedModules("from . import x\n", ""), []);
});
