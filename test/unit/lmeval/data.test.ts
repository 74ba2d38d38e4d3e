// lm-eval's own task files, unchanged, over data the config names (`benchmarks[].data`): the
// task files of ../shared/lm-eval-tasks and the benchmark files of ../shared/benchmarks, read in place.
import assert from "node:assert/strict";
import { existsSync, promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { loadProfile } from "../../../src/core/config/load";
import type { GenerationItem, MultipleChoiceItem } from "../../../src/core/lmeval/task";
import { errorsOf, formatProblem } from "../../../src/core/base/problems";
import { makeTinyProject, type TinyProject } from "../../support/tinyProject";

const shared = path.resolve(import.meta.dirname, "..", "..", "..", "..", "shared");
const skip =
  existsSync(path.join(shared, "lm-eval-tasks")) && existsSync(path.join(shared, "benchmarks"))
    ? false
    : "../shared (lm-eval's task files and the benchmark files) is not here";
const lmEval = (file: string) => path.join(shared, "lm-eval-tasks", file);
const benchmark = (file: string) => path.join(shared, "benchmarks", file);

let project: TinyProject;
before(async () => {
  project = await makeTinyProject(await fs.mkdtemp(path.join(os.tmpdir(), "bprof-lmeval-data-")));
});
after(() => fs.rm(project.root, { recursive: true, force: true }));

async function profileWith(benchmarks: string) {
  await fs.writeFile(project.configPath, `models:\n  - path: ./model\nbenchmarks:\n${benchmarks}`);
  return loadProfile(project.configPath);
}

const PIQA_DOCS = [
  { goal: "How do I dry wet shoes quickly?", sol1: "Stuff them with newspaper.", sol2: "Put them in the freezer.", label: 0 },
  { goal: "How can I keep bread fresh?", sol1: "Leave it in the sun.", sol2: "Keep it in a sealed bag.", label: 1 },
];

test("BIG-Bench Hard, GSM8K and PIQA task files as lm-eval ships them, with `data` naming their documents", { skip }, async () => {
  await fs.writeFile(path.join(project.root, "piqa.jsonl"), PIQA_DOCS.map((d) => JSON.stringify(d)).join("\n") + "\n");
  const { profile, problems } = await profileWith(
    [
      `  - task: ${lmEval("bbh/zeroshot/boolean_expressions.yaml")}`,
      `    data: ${benchmark("bbh/boolean_expressions.json")}`,
      `  - task: ${lmEval("gsm8k/gsm8k.yaml")}`,
      `    data: {test: ${benchmark("gsm8k/test.jsonl")}}`,
      "    num_fewshot: 0",
      `  - task: ${lmEval("piqa/piqa.yaml")}`,
      "    data: {validation: ./piqa.jsonl}",
      "",
    ].join("\n"),
  );
  assert.deepEqual(errorsOf(problems).map(formatProblem), []);
  const [bbh, gsm8k, piqa] = profile!.benchmarks;

  // BBH's file is one object: the documents are its `examples`, beside the canary string.
  assert.equal(bbh!.name, "bbh_zeroshot_boolean_expressions");
  assert.equal(bbh!.task.items.length, 250);
  const first = bbh!.task.items[0] as GenerationItem;
  assert.deepEqual(
    [first.context, first.target],
    ["Evaluate the result of a random Boolean expression.\n\nQ: not ( True ) and ( True ) is\nA:", "False"],
  );
  assert.deepEqual(
    bbh!.task.filters.map((f) => f.name),
    ["strict-match", "flexible-extract"],
  );

  assert.equal(gsm8k!.task.items.length, 1319);
  assert.ok((gsm8k!.task.items[0] as GenerationItem).context.startsWith("Question: Janet\u2019s ducks lay 16 eggs per day."));

  // piqa.yaml has `test_split: null`: lm-eval scores its validation split.
  const items = piqa!.task.items as MultipleChoiceItem[];
  assert.deepEqual(
    items.map((i) => [i.context, i.choices, i.target]),
    [
      ["Question: How do I dry wet shoes quickly?\nAnswer:", ["Stuff them with newspaper.", "Put them in the freezer."], 0],
      ["Question: How can I keep bread fresh?\nAnswer:", ["Leave it in the sun.", "Keep it in a sealed bag."], 1],
    ],
  );
  assert.equal(piqa!.task.dataFile, path.join(project.root, "piqa.jsonl"));
});

test(
  "`data` that is missing, of an unknown format, or short of a split the task reads is an error where it is said",
  { skip },
  async () => {
    const { problems } = await profileWith(
      [
        `  - task: ${lmEval("gsm8k/gsm8k.yaml")}`,
        "    data: ./nowhere/test.jsonl",
        `  - task: ${lmEval("gsm8k/gsm8k.yaml")}`,
        "    name: gsm8k-text",
        "    data: {test: ./notes.txt}",
        `  - task: ${lmEval("gsm8k/gsm8k.yaml")}`,
        "    name: gsm8k-5-shot",
        `    data: ${benchmark("gsm8k/test.jsonl")}`,
        "",
      ].join("\n"),
    );
    const errors = errorsOf(problems).map((p) => `${path.basename(p.file)}:${p.line} ${p.code} ${p.message}`);
    assert.ok(
      errors.includes(`tiny.bprof.yaml:5 config.benchmark-data data file not found: ${path.join(project.root, "nowhere", "test.jsonl")}`),
      errors.join("\n"),
    );
    assert.ok(
      errors.includes("tiny.bprof.yaml:8 config.benchmark-data notes.txt is not .json, .jsonl, .csv, .parquet or .arrow"),
      errors.join("\n"),
    );
    // gsm8k.yaml draws its 5 few-shot examples from `train`: the error is at that key of the task file.
    const fewshotLine =
      (await fs.readFile(lmEval("gsm8k/gsm8k.yaml"), "utf8")).split("\n").findIndex((l) => l.startsWith("fewshot_split:")) + 1;
    assert.ok(
      errors.includes(
        `gsm8k.yaml:${fewshotLine} task.data-file the task reads split \`train\`, and the config's \`data\` names no file for it: write \`data: {test: ..., train: ...}\``,
      ),
      errors.join("\n"),
    );
  },
);

test("humaneval, whose metric runs the generated code: a warning at `unsafe_code` that a run asks for confirmation", { skip }, async () => {
  const { problems } = await profileWith(
    [`  - task: ${lmEval("humaneval/humaneval.yaml")}`, `    data: ${benchmark("gsm8k/test.jsonl")}`, ""].join("\n"),
  );
  const warning = problems.find((p) => p.code === "task.unsafe-code");
  assert.ok(warning, problems.map(formatProblem).join("\n"));
  assert.deepEqual([warning.line, warning.severity, warning.field], [3, "warning", "unsafe_code"]);
  assert.match(
    warning.message,
    /^this task runs the code the model generates to score it: a run asks you to confirm it first \(bprof: --confirm-run-unsafe-code/,
  );
});
