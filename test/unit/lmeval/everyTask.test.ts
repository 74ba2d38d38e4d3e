// Every task file of lm-eval's own that a user has on disk loads unchanged, with the data the
// config's `data` names: the real benchmark files where they are here (BIG-Bench Hard, GSM8K),
// else a few documents written in the Hugging Face dataset's shape. A task whose Python needs a
// package the machine's python3 lacks loads where it has it, and otherwise fails at the key that
// names the helper, saying which module is missing.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { loadTask, type DataFiles } from "../../../src/core/lmeval/task";
import { errorsOf } from "../../../src/core/base/problems";

const shared = path.resolve(import.meta.dirname, "..", "..", "..", "..", "shared");
const tasksRoot = path.join(shared, "lm-eval-tasks");
const skip =
  existsSync(tasksRoot) && existsSync(path.join(shared, "benchmarks"))
    ? false
    : "../shared (lm-eval's task files and the benchmark files) is not here";

/** Documents in the shape of each Hugging Face dataset the task files read, with the split they score. */
const WRITTEN: Record<string, { split: string; docs: object[] }> = {
  arc: {
    split: "test",
    docs: [
      { id: "a1", question: "Which is a mammal?", choices: { text: ["shark", "whale", "trout"], label: ["A", "B", "C"] }, answerKey: "B" },
    ],
  },
  hellaswag: {
    split: "validation",
    docs: [
      {
        ind: 1,
        activity_label: "Baking",
        ctx_a: "A man mixes flour.",
        ctx_b: "he",
        ctx: "A man mixes flour. he",
        endings: ["adds eggs.", "flies away.", "sings [title].", "sleeps."],
        source_id: "x",
        split: "val",
        split_type: "indomain",
        label: "0",
      },
    ],
  },
  piqa: { split: "validation", docs: [{ goal: "Dry wet shoes.", sol1: "Stuff them with paper.", sol2: "Freeze them.", label: 0 }] },
  mmlu: { split: "test", docs: [{ question: "What is 2 + 2?", subject: "abstract_algebra", choices: ["3", "4", "5", "6"], answer: 1 }] },
  truthfulqa: {
    split: "validation",
    docs: [
      {
        question: "Can pigs fly?",
        mc1_targets: { choices: ["No.", "Yes."], labels: [1, 0] },
        mc2_targets: { choices: ["No.", "Not really.", "Yes."], labels: [1, 1, 0] },
      },
    ],
  },
  winogrande: {
    split: "validation",
    docs: [{ sentence: "The cup fell off the table because _ was round.", option1: "the cup", option2: "the table", answer: "1" }],
  },
  humaneval: {
    split: "test",
    docs: [
      {
        task_id: "t/0",
        prompt: "def add(a, b):\n",
        canonical_solution: "    return a + b\n",
        test: "def check(f):\n    assert f(1, 2) == 3\n",
        entry_point: "add",
      },
    ],
  },
};

/** The packages a task's Python imports that Debian's python3 does not have, by task file. */
const NEEDS: Record<string, string[]> = {
  "bbh/zeroshot/multistep_arithmetic_two.yaml": ["regex", "word2number"],
  "bbh/zeroshot/object_counting.yaml": ["regex", "word2number"],
  "truthfulqa/truthfulqa_mc2.yaml": ["numpy", "sacrebleu", "rouge_score"],
  "humaneval/humaneval.yaml": ["evaluate"],
};

let written: string;
before(async () => {
  written = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-every-task-"));
  for (const [family, { docs }] of Object.entries(WRITTEN))
    await fs.writeFile(path.join(written, `${family}.jsonl`), docs.map((d) => JSON.stringify(d)).join("\n") + "\n");
  const train = Array.from({ length: 6 }, (_, i) => ({ question: `What is ${i} + 1?`, answer: `${i} + 1 = ${i + 1}\n#### ${i + 1}` }));
  await fs.writeFile(path.join(written, "gsm8k-train.jsonl"), train.map((d) => JSON.stringify(d)).join("\n") + "\n");
});
after(() => fs.rm(written, { recursive: true, force: true }));

function dataFor(relative: string): DataFiles {
  const [family] = relative.split("/");
  if (family === "bbh") return path.join(shared, "benchmarks", "bbh", `${path.basename(relative, ".yaml")}.json`);
  if (family === "gsm8k")
    return { test: path.join(shared, "benchmarks", "gsm8k", "test.jsonl"), train: path.join(written, "gsm8k-train.jsonl") };
  const { split } = WRITTEN[family!]!;
  return { [split]: path.join(written, `${family}.jsonl`) };
}

async function taskFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await taskFiles(file)));
    // Files named _* are lm-eval's templates and groups, included or named, never a task of their own.
    else if (entry.name.endsWith(".yaml") && !entry.name.startsWith("_")) out.push(file);
  }
  return out.sort();
}

function pythonHas(module: string): boolean {
  try {
    execFileSync("python3", ["-c", `import ${module}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

test(
  "every task file of lm-eval's loads unchanged with `data`, or names the Python package it lacks at the helper's key",
  { skip, timeout: 120_000 },
  async () => {
    const files = await taskFiles(tasksRoot);
    assert.ok(files.length >= 26, `${files.length} task files`);
    const outcomes: string[] = [];
    for (const file of files) {
      const relative = path.relative(tasksRoot, file);
      const { task, problems } = await loadTask(file, { data: dataFor(relative), limit: 3 });
      const errors = errorsOf(problems);
      const missing = (NEEDS[relative] ?? []).filter((m) => !pythonHas(m));
      if (missing.length === 0) {
        assert.deepEqual(
          errors.map((e) => `${e.line}: ${e.message}`),
          [],
          relative,
        );
        assert.ok(task && task.items.length > 0, `${relative} has items`);
      } else {
        assert.equal(task, undefined, relative);
        assert.ok(errors.length > 0, relative);
        for (const e of errors) {
          assert.equal(e.code, "task.python-function", `${relative}: ${e.message}`);
          assert.match(e.message, /ModuleNotFoundError: No module named '([a-z_0-9]+)'$/, relative);
          assert.ok(
            missing.includes(/No module named '([a-z_0-9]+)'/.exec(e.message)![1]!),
            `${relative}: ${e.message} names a package this python3 lacks (${missing.join(", ")})`,
          );
        }
      }
      outcomes.push(`${relative}: ${missing.length === 0 ? "loads" : `needs ${missing.join(", ")}`}`);
    }
    assert.equal(outcomes.length, files.length, outcomes.join("\n"));
  },
);
