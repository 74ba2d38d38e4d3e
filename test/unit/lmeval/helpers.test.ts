// lm-eval's `!function` helpers, run by python3 as lm-eval runs them: hellaswag's process_docs on
// lm-eval's own task file (../shared/lm-eval-tasks, read in place), helpers of our own for what
// can go wrong, the kept answers that spare Python a second start, and the untrusted workspace.
import assert from "node:assert/strict";
import { existsSync, promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { loadTask, type MultipleChoiceItem } from "../../../src/core/lmeval/task";
import { errorsOf, formatProblem, type Problem } from "../../../src/core/base/problems";

const lmEvalTasks = path.resolve(import.meta.dirname, "..", "..", "..", "..", "shared", "lm-eval-tasks");
const skipShared = existsSync(lmEvalTasks) ? false : "../shared/lm-eval-tasks (lm-eval's task files) is not here";

let dir: string;
before(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-helpers-"));
});
after(() => fs.rm(dir, { recursive: true, force: true }));

/** Writes files into a fresh folder under `dir`; returns its path. */
async function folder(name: string, files: Record<string, string>): Promise<string> {
  const root = path.join(dir, name);
  await fs.mkdir(root, { recursive: true });
  for (const [file, text] of Object.entries(files)) await fs.writeFile(path.join(root, file), text);
  return root;
}

const messages = (problems: Problem[]) => errorsOf(problems).map((p) => `${path.basename(p.file)}:${p.line} ${p.code} ${p.message}`);

/** Two documents in Hugging Face's hellaswag shape (label is a string there). */
const HELLASWAG_DOCS = [
  {
    ind: 4,
    activity_label: "Removing ice from car",
    ctx_a: "Then, the man writes over the snow covering the window of a car.",
    ctx_b: "a woman wearing winter clothes",
    endings: [
      ", the man continues removing the snow on his car.",
      ", the woman [title] smiles.",
      ", the two walk away.",
      ", a man drives by.",
    ],
    label: "0",
  },
  {
    ind: 9,
    activity_label: "Baking cookies",
    ctx_a: "A kid is in the kitchen.",
    ctx_b: "the kid",
    endings: ["stirs the dough.", "leaves.", "sleeps.", "sings."],
    label: "0",
  },
];

test(
  "hellaswag as lm-eval ships it: process_docs runs in Python (with a stand-in for `datasets`) and its fields feed the templates",
  { skip: skipShared },
  async () => {
    const root = await folder("hellaswag", { "validation.jsonl": HELLASWAG_DOCS.map((d) => JSON.stringify(d)).join("\n") + "\n" });
    const { task, problems } = await loadTask(path.join(lmEvalTasks, "hellaswag", "hellaswag.yaml"), {
      data: { validation: path.join(root, "validation.jsonl") },
    });
    assert.deepEqual(messages(problems), []);
    const items = task!.items as MultipleChoiceItem[];
    // lm-eval's preprocess: " [title]" becomes ". ", other brackets go, double spaces become one.
    assert.equal(
      items[0]!.context,
      "Removing ice from car: Then, the man writes over the snow covering the window of a car. A woman wearing winter clothes",
    );
    assert.deepEqual(items[0]!.choices, [
      ", the man continues removing the snow on his car.",
      ", the woman. smiles.",
      ", the two walk away.",
      ", a man drives by.",
    ]);
    assert.equal(items[0]!.target, 0);
    assert.equal(items[1]!.context, "Baking cookies: A kid is in the kitchen. The kid");
    assert.deepEqual(
      items.map((i) => i.line),
      [1, 2],
      "process_docs kept every document in order: the data lines stay",
    );
  },
);

const TASK = (helpers: string) => `task: helpers
dataset_path: json
dataset_kwargs:
  data_files:
    test: docs.jsonl
output_type: multiple_choice
${helpers}`;
const DOCS = ['{"q": "Is ice cold?", "a": "yes", "b": "no"}', '{"q": "Is fire cold?", "a": "no", "b": "yes"}'].join("\n") + "\n";

test("doc_to_text, doc_to_choice and doc_to_target helpers: one Python process for all documents, the answer kept for the next check", async () => {
  const root = await folder("own", {
    "docs.jsonl": DOCS,
    "utils.py": [
      "import os",
      "with open(os.path.join(os.path.dirname(__file__), 'imports.log'), 'a') as log:",
      "    log.write('imported\\n')",
      "def text(doc):",
      "    print('helpers may print: it goes to stderr')",
      "    return 'Q: ' + doc['q'] + '\\nA:'",
      "def choices(doc):",
      "    return ['yes', 'no']",
      "def target(doc):",
      "    return doc['a']",
      "",
    ].join("\n"),
    "task.yaml": TASK("doc_to_text: !function utils.text\ndoc_to_choice: !function utils.choices\ndoc_to_target: !function utils.target\n"),
  });
  for (let check = 0; check < 2; check++) {
    const { task, problems } = await loadTask(path.join(root, "task.yaml"));
    assert.deepEqual(messages(problems), []);
    const items = task!.items as MultipleChoiceItem[];
    assert.deepEqual(
      items.map((i) => [i.context, i.choices, i.target]),
      [
        ["Q: Is ice cold?\nA:", ["yes", "no"], 0],
        ["Q: Is fire cold?\nA:", ["yes", "no"], 1],
      ],
    );
  }
  assert.equal(
    await fs.readFile(path.join(root, "imports.log"), "utf8"),
    "imported\n",
    "Python ran once: the second check used the kept answer",
  );
  // An edit of the helper file is a new answer.
  await fs.appendFile(path.join(root, "utils.py"), "# edited\n");
  await loadTask(path.join(root, "task.yaml"));
  assert.equal(await fs.readFile(path.join(root, "imports.log"), "utf8"), "imported\nimported\n");
});

test("a helper that raises, is missing, returns what is not data, or never ends: an error at its key naming it, with Python's last line", async () => {
  const root = await folder("faults", {
    "docs.jsonl": DOCS,
    "bad.py": [
      "import time",
      "def raises(doc):",
      "    if doc['q'].startswith('Is fire'):",
      "        raise ValueError('no answer for ' + doc['q'])",
      "    return 'x'",
      "def not_data(doc):",
      "    return {1, 2}",
      "def sleeps(doc):",
      "    time.sleep(30)",
      "",
    ].join("\n"),
  });
  const load = async (helpers: string, env: Record<string, string> = {}) => {
    await fs.writeFile(path.join(root, "task.yaml"), TASK(`doc_to_choice: ["yes", "no"]\ndoc_to_target: 0\n${helpers}`));
    const saved = { ...process.env };
    Object.assign(process.env, env);
    try {
      return messages((await loadTask(path.join(root, "task.yaml"))).problems);
    } finally {
      process.env = saved;
    }
  };
  assert.deepEqual(await load("doc_to_text: !function bad.raises\n"), [
    "task.yaml:9 task.python-function `doc_to_text` (`!function bad.raises`): ValueError: no answer for Is fire cold? in document 1 (docs.jsonl:2)",
  ]);
  assert.deepEqual(await load("doc_to_text: !function bad.missing\n"), [
    `task.yaml:9 task.python-function \`doc_to_text\` (\`!function bad.missing\`): LookupError: ${path.join(root, "bad.py")} has no missing`,
  ]);
  assert.deepEqual(await load("doc_to_text: !function nowhere.text\n"), [
    `task.yaml:9 task.python-function \`doc_to_text\` (\`!function nowhere.text\`): LookupError: no module file ${path.join(root, "nowhere.py")}`,
  ]);
  assert.deepEqual(await load("doc_to_text: !function bad.not_data\n"), [
    "task.yaml:9 task.python-function `doc_to_text` (`!function bad.not_data`): TypeError: doc_to_text returned a set, which is not plain data (text, numbers, lists, dicts) in document 0 (docs.jsonl:1)",
  ]);
  const started = Date.now();
  assert.deepEqual(await load("doc_to_text: !function bad.sleeps\n", { BPROF_HELPER_TIME_LIMIT_S: "2" }), [
    "task.yaml:9 task.python-function `doc_to_text` (`!function bad.sleeps`): the helpers did not finish within 2 s (BPROF_HELPER_TIME_LIMIT_S sets the limit)",
  ]);
  assert.ok(Date.now() - started < 20_000, "the limit stopped Python");
  assert.deepEqual(await load("doc_to_text: !function bad.raises\n", { BPROF_PYTHON: path.join(root, "no-python") }), [
    `task.yaml:9 task.python-function \`doc_to_text\` (\`!function bad.raises\`): ${path.join(root, "no-python")} was not found: this task's \`!function\` helpers need Python 3 (install it, or set BPROF_PYTHON to one)`,
  ]);
  // A filter class is tried when the task loads: a function that cannot be built as one fails at its line.
  const filters = await load("doc_to_text: q\nfilter_list:\n  - name: custom\n    filter:\n      - function: !function bad.raises\n");
  assert.deepEqual(filters, [
    "task.yaml:13 task.python-function filter `!function bad.raises` of pipeline `custom`: TypeError: raises() missing 1 required positional argument: 'doc'",
  ]);
  // A !function metric scores generations; in a multiple-choice task it is refused at its key, once.
  const metrics = await load("doc_to_text: q\nmetric_list:\n  - metric: !function bad.raises\n");
  assert.deepEqual(metrics, [
    "task.yaml:11 task.python-function a `!function` metric runs only in a generate_until task (a multiple_choice task scores itself with process_results)",
  ]);
});

test("in an untrusted workspace helpers do not run: the task says so at the key", async () => {
  const root = await folder("untrusted", {
    "docs.jsonl": DOCS,
    "utils.py": "import os\nopen(os.path.join(os.path.dirname(__file__), 'ran'), 'w').close()\ndef text(doc):\n    return doc['q']\n",
    "task.yaml": TASK('doc_to_text: !function utils.text\ndoc_to_choice: ["yes", "no"]\ndoc_to_target: 0\n'),
  });
  const { problems } = await loadTask(path.join(root, "task.yaml"), { helpers: "refuse" });
  assert.deepEqual(messages(problems), [
    "task.yaml:7 task.python-function `doc_to_text` runs the Python helper `utils.text`, and helpers run only in a trusted workspace: trust this folder to check and run this task",
  ]);
  assert.equal(existsSync(path.join(root, "ran")), false, "Python never ran");
  assert.equal(formatProblem(problems[0]!).includes("(field doc_to_text)"), true);
});
