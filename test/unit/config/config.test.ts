import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { loadProfile } from "../../../src/core/config/load";
import { editDistance, nearestWord } from "../../../src/core/base/nearest";
import { parseConfig } from "../../../src/core/config/parse";
import schema from "../../../src/core/config/schema.json";
import { IGNORED_TASK_KEYS, SUPPORTED_TASK_KEYS } from "../../../src/core/lmeval/spec";
import { formatProblem, PROBLEM_CODES } from "../../../src/core/base/problems";
import { makeTinyProject, withoutLowPower, type TinyProject } from "../../support/tinyProject";

const FILE = "/p/x.bprof.yaml";

test("a valid config parses with no problems", () => {
  const parsed = parseConfig("models:\n  - path: ./m\n    dtype: bfloat16\nbenchmarks:\n  - task: t.yaml\n    limit: 5\n", FILE);
  assert.deepEqual(parsed.problems, []);
  assert.deepEqual(parsed.config, { models: [{ path: "./m", dtype: "bfloat16" }], benchmarks: [{ task: "t.yaml", limit: 5 }] });
});

test("schema errors point at the offending node", () => {
  const text = "models:\n  - path: ./m\n    dtype: float8\nbenchmarks: []\ndevice: tpu\n";
  const lines = parseConfig(text, FILE).problems.map(formatProblem);
  assert.deepEqual(lines.sort(), [
    "/p/x.bprof.yaml:3:12: error: `models[0].dtype` must be one of: float32, bfloat16, float16 (field models[0].dtype) [config.not-allowed]",
    "/p/x.bprof.yaml:4:13: error: `benchmarks` must NOT have fewer than 1 items (field benchmarks) [config.invalid-value]",
    "/p/x.bprof.yaml:5:9: error: `device` is invalid: cpu, cuda or cuda:N. (field device) [config.invalid-value]",
  ]);
});

test("a missing required field is reported on its parent with the field's path", () => {
  const [d] = parseConfig("models:\n  - name: a\nbenchmarks:\n  - task: t.yaml\n", FILE).problems;
  assert.equal(d?.line, 2);
  assert.equal(d?.field, "models[0].path");
  assert.match(d!.message, /needs the field `path`/);
});

test("unknown keys are flagged on the key with the nearest valid key", () => {
  const [d] = parseConfig("modles:\n  - path: m\nbenchmarks:\n  - task: t\n", FILE).problems.filter((x) => x.message.includes("unknown"));
  assert.equal(
    formatProblem(d!),
    "/p/x.bprof.yaml:1:1: error: unknown key `modles`; did you mean `models`? (field modles) [config.unknown-key]",
  );
});

test("duplicate keys and syntax errors are YAML errors with a line", () => {
  const dup = parseConfig("models: []\nmodels: []\n", FILE).problems;
  assert.equal(dup[0]?.line, 2);
  assert.match(dup[0]!.message, /^YAML: /);
  const broken = parseConfig("models:\n  - path: [a\n", FILE).problems;
  assert.equal(broken[0]?.severity, "error");
});

test("nearestWord suggests close keys only", () => {
  assert.equal(nearestWord("benchmark", ["models", "benchmarks", "output"]), "benchmarks");
  assert.equal(nearestWord("zzzzzz", ["models", "benchmarks"]), undefined);
});

test("editDistance counts a swap of neighbours as one edit only when asked (typos in names), else as two (Levenshtein)", () => {
  assert.equal(editDistance("kitten", "sitting"), 3);
  assert.equal(editDistance("", "abc"), 3);
  assert.equal(editDistance("same", "same", { swaps: true }), 0);
  assert.equal(editDistance("modles", "models"), 2);
  assert.equal(editDistance("modles", "models", { swaps: true }), 1);
  // Optimal string alignment: a swapped pair is not edited again ("ca" -> "abc" is 3, not 2).
  assert.equal(editDistance("ca", "abc", { swaps: true }), 3);
});

let project: TinyProject;
before(async () => {
  project = await makeTinyProject(await fs.mkdtemp(path.join(os.tmpdir(), "bprof-config-")));
});
after(async () => fs.rm(project.root, { recursive: true, force: true }));

test("loadProfile resolves paths against the config file and loads the task", async () => {
  const { profile, problems } = await loadProfile(project.configPath);
  assert.deepEqual(withoutLowPower(problems), []);
  assert.equal(profile!.models[0]!.path, project.modelDir);
  assert.equal(profile!.models[0]!.name, "tiny-llama");
  assert.equal(profile!.outputDir, path.join(project.root, ".bprof"));
  assert.equal(profile!.benchmarks[0]!.name, "tiny_mc");
  assert.equal(profile!.benchmarks[0]!.task.items.length, 3);
});

test("loadProfile reports a missing task file and duplicate benchmark names on the config", async () => {
  const text =
    "models:\n  - path: ./model\nbenchmarks:\n  - task: ./tasks/tiny_mc.yaml\n  - task: ./tasks/tiny_mc.yaml\n  - task: ./nope.yaml\n";
  const { profile, problems } = await loadProfile(project.configPath, { text });
  assert.equal(profile, undefined);
  const lines = problems.map((d) => `${d.line}:${d.field}:${d.message}`);
  assert.ok(
    lines.some((l) => l.startsWith("5:benchmarks[1]:benchmark name `tiny_mc` is used twice")),
    lines.join("\n"),
  );
  assert.ok(
    lines.some((l) => l.startsWith("6:benchmarks[2].task:task file not found")),
    lines.join("\n"),
  );
});

test("loadProfile uses unsaved editor text over the file on disk", async () => {
  const { problems } = await loadProfile(project.configPath, { text: "models: 3\nbenchmarks: []\n" });
  assert.ok(problems.some((d) => d.field === "models"));
});

// ---------------------------------------------------------------------------------------------
// Inline task definitions

const INLINE_TASK =
  [
    "    task:",
    "      task: tiny_inline",
    "      dataset_path: json",
    "      dataset_kwargs:",
    "        data_files:",
    "          test: tasks/tiny_mc.jsonl",
    "      output_type: multiple_choice",
    '      doc_to_text: "Question: {{question}}\\nAnswer:"',
    "      doc_to_choice: choices",
    "      doc_to_target: answer",
  ].join("\n") + "\n";

test("an inline task loads like the same task in a file; data_files and include resolve against the config's folder", async () => {
  const text =
    `models:\n  - path: ./model\nbenchmarks:\n  - task: ./tasks/tiny_mc.yaml\n  - name: inline\n${INLINE_TASK}` +
    '  - name: included\n    task:\n      include: tasks/tiny_mc.yaml\n      task: tiny_included\n      doc_to_text: "Q: {{question}}\\nA:"\n';
  const { profile, problems } = await loadProfile(project.configPath, { text });
  assert.ok(profile, problems.map(formatProblem).join("\n"));
  assert.deepEqual(withoutLowPower(problems), []);
  const [file, inline, included] = profile.benchmarks;
  assert.equal(inline!.name, "inline");
  assert.equal(inline!.task.name, "tiny_inline");
  assert.equal(inline!.task.file, `${project.configPath}#benchmarks[1].task`);
  assert.equal(inline!.task.dataFile, project.dataFile);
  assert.deepEqual(inline!.task.items, file!.task.items);
  // The included file's keys, this definition's keys over them; its data_files still relative to the included file.
  assert.equal(included!.task.name, "tiny_included");
  assert.equal(included!.task.dataFile, project.dataFile);
  assert.equal(included!.task.items[0]!.context, "Q: Which colour is the sky on a clear day?\nA:");
});

test("an inline task's errors point into the config: unknown keys with the nearest one, task checks, missing data", async () => {
  const unknown = await loadProfile(project.configPath, {
    text: `models:\n  - path: ./model\nbenchmarks:\n  - name: inline\n${INLINE_TASK}      doc_to_txt: q\n`,
  });
  assert.equal(unknown.profile, undefined);
  assert.deepEqual(unknown.problems.map(formatProblem), [
    `${project.configPath}:15:7: error: unknown key \`doc_to_txt\`; did you mean \`doc_to_text\`? (field benchmarks[0].task.doc_to_txt) [config.unknown-key]`,
  ]);

  const text = INLINE_TASK.replace("      doc_to_choice: choices\n", "")
    .replace("      doc_to_target: answer\n", "      doc_to_target: answer\n      metric_list: [{metric: !function utils.score}]\n")
    .replace("tasks/tiny_mc.jsonl", "tasks/missing.jsonl");
  const { profile, problems } = await loadProfile(project.configPath, {
    text: `models:\n  - path: ./model\nbenchmarks:\n  - name: inline\n${text}`,
  });
  assert.equal(profile, undefined);
  const lines = problems.map(formatProblem);
  assert.ok(
    lines.some(
      (l) =>
        l.startsWith(`${project.configPath}:14:`) &&
        l.includes("error: a `!function` metric runs only in a generate_until task") &&
        l.endsWith("[task.python-function]"),
    ),
    lines.join("\n"),
  );
  assert.ok(
    lines.some((l) =>
      l.startsWith(
        `${project.configPath}:6:7: error: a multiple_choice task needs \`doc_to_choice\` (field benchmarks[0].task.doc_to_choice)`,
      ),
    ),
    lines.join("\n"),
  );

  const missing = await loadProfile(project.configPath, {
    text: `models:\n  - path: ./model\nbenchmarks:\n  - name: inline\n${INLINE_TASK.replace("tasks/tiny_mc.jsonl", "tasks/missing.jsonl")}`,
  });
  assert.deepEqual(missing.problems.map(formatProblem), [
    `${project.configPath}:10:11: error: data file not found: ${path.join(project.root, "tasks", "missing.jsonl")} (field benchmarks[0].task.dataset_kwargs.data_files) [task.data-file]`,
  ]);
});

test("the schema's inline task keys are exactly the task keys the loader reads or accepts", () => {
  const benchmark = schema.properties.benchmarks.items.properties.task.anyOf[1] as { properties: Record<string, unknown> };
  assert.deepEqual(Object.keys(benchmark.properties).sort(), [...SUPPORTED_TASK_KEYS, ...IGNORED_TASK_KEYS].sort());
});

test("model options: chat_template (true, false or a name), fewshot_as_multiturn and max_length are checked by the schema", () => {
  const ok = parseConfig(
    "models:\n  - path: ./m\n    chat_template: default\n    fewshot_as_multiturn: true\n    max_length: 4096\nbenchmarks:\n  - task: t.yaml\n",
    FILE,
  );
  assert.deepEqual(ok.problems, []);
  const bad = parseConfig(
    "models:\n  - path: ./m\n    chat_template: 1\n    max_length: 1\nbenchmarks:\n  - task: t.yaml\n",
    FILE,
  ).problems.map(formatProblem);
  assert.ok(
    bad.some((l) => l.startsWith("/p/x.bprof.yaml:3:20: error: `models[0].chat_template` is invalid: Apply the model's chat template")),
    bad.join("\n"),
  );
  assert.ok(
    bad.includes("/p/x.bprof.yaml:4:17: error: `models[0].max_length` must be >= 2 (field models[0].max_length) [config.invalid-value]"),
    bad.join("\n"),
  );
});

test("max_length: the config's, else config.json's max_position_embeddings, as lm-eval's max_length", async () => {
  const { profile } = await loadProfile(project.configPath);
  assert.equal(profile!.models[0]!.maxLength, 2048);
  const set = await loadProfile(project.configPath, {
    text: "models:\n  - path: ./model\n    max_length: 64\nbenchmarks:\n  - task: ./tasks/tiny_mc.yaml\n",
  });
  assert.equal(set.profile!.models[0]!.maxLength, 64);
});

test("every problem code is documented in docs/problems.md with its severity", async () => {
  const doc = await fs.readFile(new URL("../../../docs/problems.md", import.meta.url), "utf8");
  for (const [code, { severity }] of Object.entries(PROBLEM_CODES)) {
    assert.ok(doc.includes(`| \`${code}\` | ${severity} |`), `docs/problems.md lists ${code} (${severity})`);
  }
});
