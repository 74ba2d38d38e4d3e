import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { loadProfile } from "../../src/core/config/load";
import { nearestWord } from "../../src/core/config/nearest";
import { parseConfig } from "../../src/core/config/parse";
import { formatDiagnostic } from "../../src/core/diagnostics";
import { makeTinyProject, type TinyProject } from "../support/tinyProject";

const FILE = "/p/x.bprof.yaml";

test("a valid config parses with no diagnostics", () => {
  const parsed = parseConfig("models:\n  - path: ./m\n    dtype: bfloat16\nbenchmarks:\n  - task: t.yaml\n    limit: 5\n", FILE);
  assert.deepEqual(parsed.diagnostics, []);
  assert.deepEqual(parsed.config, { models: [{ path: "./m", dtype: "bfloat16" }], benchmarks: [{ task: "t.yaml", limit: 5 }] });
});

test("schema errors point at the offending node", () => {
  const text = "models:\n  - path: ./m\n    dtype: float8\nbenchmarks: []\ndevice: tpu\n";
  const lines = parseConfig(text, FILE).diagnostics.map(formatDiagnostic);
  assert.deepEqual(lines.sort(), [
    "/p/x.bprof.yaml:3:12: error: `models[0].dtype` must be one of: float32, bfloat16, float16 (field models[0].dtype)",
    "/p/x.bprof.yaml:4:13: error: `benchmarks` must NOT have fewer than 1 items (field benchmarks)",
    "/p/x.bprof.yaml:5:9: error: `device` is invalid: cpu, cuda or cuda:N. (field device)",
  ]);
});

test("a missing required field is reported on its parent with the field's path", () => {
  const [d] = parseConfig("models:\n  - name: a\nbenchmarks:\n  - task: t.yaml\n", FILE).diagnostics;
  assert.equal(d?.line, 2);
  assert.equal(d?.field, "models[0].path");
  assert.match(d!.message, /needs the field `path`/);
});

test("unknown keys are flagged on the key with the nearest valid key", () => {
  const [d] = parseConfig("modles:\n  - path: m\nbenchmarks:\n  - task: t\n", FILE).diagnostics.filter((x) => x.message.includes("unknown"));
  assert.equal(formatDiagnostic(d!), "/p/x.bprof.yaml:1:1: error: unknown key `modles`; did you mean `models`? (field modles)");
});

test("duplicate keys and syntax errors are YAML errors with a line", () => {
  const dup = parseConfig("models: []\nmodels: []\n", FILE).diagnostics;
  assert.equal(dup[0]?.line, 2);
  assert.match(dup[0]!.message, /^YAML: /);
  const broken = parseConfig("models:\n  - path: [a\n", FILE).diagnostics;
  assert.equal(broken[0]?.severity, "error");
});

test("nearestWord suggests close keys only", () => {
  assert.equal(nearestWord("benchmark", ["models", "benchmarks", "output"]), "benchmarks");
  assert.equal(nearestWord("zzzzzz", ["models", "benchmarks"]), undefined);
});

let project: TinyProject;
before(async () => {
  project = await makeTinyProject(await fs.mkdtemp(path.join(os.tmpdir(), "bprof-config-")));
});
after(async () => fs.rm(project.root, { recursive: true, force: true }));

test("loadProfile resolves paths against the config file and loads the task", async () => {
  const { profile, diagnostics } = await loadProfile(project.configPath);
  assert.deepEqual(diagnostics, []);
  assert.equal(profile!.models[0]!.path, project.modelDir);
  assert.equal(profile!.models[0]!.name, "tiny-llama");
  assert.equal(profile!.outputDir, path.join(project.root, ".bprof"));
  assert.equal(profile!.benchmarks[0]!.name, "tiny_mc");
  assert.equal(profile!.benchmarks[0]!.task.items.length, 3);
});

test("loadProfile reports a missing task file and duplicate benchmark names on the config", async () => {
  const text = "models:\n  - path: ./model\nbenchmarks:\n  - task: ./tasks/tiny_mc.yaml\n  - task: ./tasks/tiny_mc.yaml\n  - task: ./nope.yaml\n";
  const { profile, diagnostics } = await loadProfile(project.configPath, { text });
  assert.equal(profile, undefined);
  const lines = diagnostics.map((d) => `${d.line}:${d.field}:${d.message}`);
  assert.ok(lines.some((l) => l.startsWith("5:benchmarks[1]:benchmark name `tiny_mc` is used twice")), lines.join("\n"));
  assert.ok(lines.some((l) => l.startsWith("6:benchmarks[2].task:task file not found")), lines.join("\n"));
});

test("loadProfile uses unsaved editor text over the file on disk", async () => {
  const { diagnostics } = await loadProfile(project.configPath, { text: "models: 3\nbenchmarks: []\n" });
  assert.ok(diagnostics.some((d) => d.field === "models"));
});
