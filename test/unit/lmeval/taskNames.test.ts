// Tasks, groups and tags named as lm-eval names them, found under a config's `task_paths` (lm-eval's
// --include_path): lm-eval's own files in ../shared/lm-eval-tasks, read in place, with MMLU's
// documents from a hub cache laid out as huggingface_hub lays it out.
import assert from "node:assert/strict";
import { existsSync, promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { loadProfile } from "../../../src/core/config/load";
import type { MultipleChoiceItem } from "../../../src/core/lmeval/task";
import { errorsOf, formatProblem, type Problem } from "../../../src/core/base/problems";
import { makeTinyProject, type TinyProject } from "../../support/tinyProject";

const shared = path.resolve(import.meta.dirname, "..", "..", "..", "..", "shared");
const skip = existsSync(path.join(shared, "lm-eval-tasks")) ? false : "../shared/lm-eval-tasks (lm-eval's task files) is not here";
const tasks = (folder: string) => path.join(shared, "lm-eval-tasks", folder);

let project: TinyProject;
const savedCache = process.env.HF_HUB_CACHE;
before(async () => {
  project = await makeTinyProject(await fs.mkdtemp(path.join(os.tmpdir(), "bprof-task-names-")));
  // Two MMLU subjects in the converted layout of cais/mmlu: <subject>/<split>-*.
  const snapshot = path.join(project.root, "hub", "datasets--cais--mmlu", "snapshots", "c30699e");
  for (const [subject, question] of [
    ["abstract_algebra", "Find the order of the group Z_4."],
    ["college_physics", "What is the unit of force?"],
  ]) {
    await fs.mkdir(path.join(snapshot, subject!), { recursive: true });
    await fs.writeFile(
      path.join(snapshot, subject!, "test-00000-of-00001.jsonl"),
      JSON.stringify({ question: `  ${question} `, subject, choices: ["1", "2", "4", "8"], answer: 2 }) + "\n",
    );
  }
  process.env.HF_HUB_CACHE = path.join(project.root, "hub");
});
after(async () => {
  if (savedCache === undefined) delete process.env.HF_HUB_CACHE;
  else process.env.HF_HUB_CACHE = savedCache;
  await fs.rm(project.root, { recursive: true, force: true });
});

async function profileWith(lines: string[]) {
  await fs.writeFile(project.configPath, ["models:", "  - path: ./model", ...lines, ""].join("\n"));
  return loadProfile(project.configPath);
}

const lineOf = (problems: Problem[], code: string) =>
  problems.filter((p) => p.code === code).map((p) => `${p.line} ${p.severity} ${p.message}`);

test(
  "a group named by name expands to its tasks through a tag: mmlu_stem is MMLU's STEM subjects, each a benchmark",
  { skip },
  async () => {
    const { profile, problems } = await profileWith([
      `task_paths: [${tasks("mmlu")}]`,
      "benchmarks:",
      "  - task: mmlu_stem",
      "    limit: 1",
    ]);
    assert.deepEqual(errorsOf(problems).map(formatProblem), []);
    assert.deepEqual(
      profile!.benchmarks.map((b) => b.name),
      ["mmlu_abstract_algebra", "mmlu_college_physics"],
    );
    const [item] = profile!.benchmarks[0]!.task.items as MultipleChoiceItem[];
    assert.equal(
      item!.context,
      "The following are multiple choice questions (with answers) about abstract algebra.\n\nFind the order of the group Z_4.\nA. 1\nB. 2\nC. 4\nD. 8\nAnswer:",
    );
    assert.deepEqual([item!.choices, item!.target], [["A", "B", "C", "D"], 2]);
  },
);

test(
  "a task by name, with its data named in the config; a name found nowhere, or a group given what only one task can take, is an error at the entry",
  { skip },
  async () => {
    const { profile, problems } = await profileWith([
      `task_paths: [${tasks("bbh")}]`,
      "benchmarks:",
      "  - task: bbh_zeroshot_boolean_expressions",
      `    data: ${path.join(shared, "benchmarks", "bbh", "boolean_expressions.json")}`,
      "    limit: 2",
    ]);
    assert.deepEqual(errorsOf(problems).map(formatProblem), []);
    assert.deepEqual(
      profile!.benchmarks.map((b) => [b.name, b.task.file, b.task.items.length]),
      [["bbh_zeroshot_boolean_expressions", path.join(tasks("bbh"), "zeroshot", "boolean_expressions.yaml"), 2]],
    );

    const wrong = await profileWith([
      `task_paths: [${tasks("mmlu")}]`,
      "benchmarks:",
      "  - task: mmlu_sterm",
      "  - task: mmlu_stem",
      "    data: ./mmlu.jsonl",
    ]);
    assert.deepEqual(lineOf(wrong.problems, "config.task-not-found"), [
      `5 error no task, group or tag is named \`mmlu_sterm\` in task_paths (${tasks("mmlu")})`,
    ]);
    assert.deepEqual(lineOf(wrong.problems, "config.benchmark-data"), [
      `7 error data file not found: ${path.join(project.root, "mmlu.jsonl")}`,
    ]);

    const group = await profileWith([`task_paths: [${tasks("mmlu")}]`, "benchmarks:", "  - task: mmlu_stem", "    name: stem"]);
    assert.deepEqual(lineOf(group.problems, "config.invalid-value"), [
      "6 error `mmlu_stem` is 2 tasks: `name` would say the same of each; list the task you mean on its own",
    ]);

    const nowhere = await profileWith(["benchmarks:", "  - task: mmlu_stem"]);
    assert.deepEqual(lineOf(nowhere.problems, "config.task-not-found"), [
      "4 error `mmlu_stem` is not a task file here; to name an lm-eval task, group or tag, list the folders that hold it in `task_paths`",
    ]);
  },
);

test("a group whose tasks are not all under task_paths profiles those that are and says which are missing", { skip }, async () => {
  // The whole mmlu group names four sub-groups; only mmlu_stem's tag has tasks here.
  const { profile, problems } = await profileWith([`task_paths: [${tasks("mmlu")}]`, "benchmarks:", "  - task: mmlu", "    limit: 1"]);
  assert.deepEqual(errorsOf(problems).map(formatProblem), []);
  assert.deepEqual(
    profile!.benchmarks.map((b) => b.name),
    ["mmlu_abstract_algebra", "mmlu_college_physics"],
  );
  assert.deepEqual(lineOf(problems, "config.group-incomplete"), [
    "5 warning `mmlu` names 3 task(s) not found in task_paths, left out: `mmlu_other`, `mmlu_social_sciences`, `mmlu_humanities`",
  ]); // mmlu and mmlu_stem both carry aggregate_metric_list (acc weighted by size): each is scored over every task under it.
  assert.deepEqual(
    profile!.groups?.map((g) => [
      g.name,
      g.tasks,
      g.aggregates.map((a) => `${a.metric},${a.filter} ${a.weightBySize ? "by size" : "unweighted"}`),
    ]),
    [
      ["mmlu", ["mmlu_abstract_algebra", "mmlu_college_physics"], ["acc,none by size"]],
      ["mmlu_stem", ["mmlu_abstract_algebra", "mmlu_college_physics"], ["acc,none by size"]],
    ],
  );
});

test("a group after an entry with errors still expands to its tasks (each entry is checked on its own)", { skip }, async () => {
  const { problems, resolved } = await profileWith([
    `task_paths: [${tasks("mmlu")}]`,
    "benchmarks:",
    "  - task: ./no-such-task.yaml",
    "  - task: mmlu_stem",
    "    limit: 1",
  ]);
  assert.deepEqual(
    errorsOf(problems).map((p) => `${p.line} ${p.code}`),
    ["5 config.task-not-found"],
  );
  assert.deepEqual(
    resolved.benchmarks.map((b) => b.name),
    ["mmlu_abstract_algebra", "mmlu_college_physics"],
  );
});
