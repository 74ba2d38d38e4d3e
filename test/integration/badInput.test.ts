// Bad input through the CLI: a non-zero exit and one line naming file, line and field; never a
// stack trace.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { bprof } from "../support/cli";
import { CONFIG_YAML, makeProfileProject, SPATIAL } from "../support/profileProject";
import { makeTinyProject, type TinyProject } from "../support/tinyProject";

let project: TinyProject;

before(async () => {
  project = await makeTinyProject(await fs.mkdtemp(path.join(os.tmpdir(), "bprof-bad-")));
});
after(async () => fs.rm(project.root, { recursive: true, force: true }));

/** The one line that is not a warning (a tiny fixture's benchmarks are too small to detect an AIS, and say so). */
function oneLine(stderr: string): string {
  const lines = stderr
    .trim()
    .split("\n")
    .filter((l) => !/: warning: .* \[config\.low-power\]$/.test(l));
  assert.equal(lines.length, 1, `expected one line, got:\n${stderr}`);
  assert.doesNotMatch(stderr, /\s+at\s+\S+\s+\(/, "no stack trace");
  return lines[0]!;
}

test("a missing config file", async () => {
  const missing = path.join(project.root, "absent.bprof.yaml");
  const r = await bprof(["run", missing]);
  assert.notEqual(r.exitCode, 0);
  assert.equal(oneLine(r.stderr), `${missing}:1:1: error: cannot read the config file: ${missing} [file.unreadable]`);
});

test("a config with a YAML syntax error names file, line and field", async () => {
  const file = path.join(project.root, "broken.bprof.yaml");
  await fs.writeFile(file, 'models:\n  - path: ./model\n    name: "unterminated\nbenchmarks:\n  - task: ./tasks/tiny_mc.yaml\n');
  const r = await bprof(["run", file]);
  assert.notEqual(r.exitCode, 0);
  const line = oneLine(r.stderr);
  assert.match(line, new RegExp(`^${escape(file)}:3:\\d+: error: YAML: .*\\(field models\\[0\\]\\.name\\) \\[yaml\\.syntax\\]$`));
});

test("a model folder without config.json names the config's models[0].path", async () => {
  const modelDir = path.join(project.root, "model-no-config");
  await fs.cp(project.modelDir, modelDir, { recursive: true });
  await fs.rm(path.join(modelDir, "config.json"));
  const file = path.join(project.root, "noconfig.bprof.yaml");
  await fs.writeFile(file, "models:\n  - path: ./model-no-config\nbenchmarks:\n  - task: ./tasks/tiny_mc.yaml\n");
  const r = await bprof(["run", file]);
  assert.notEqual(r.exitCode, 0);
  assert.equal(
    oneLine(r.stderr),
    `${file}:2:11: error: the model folder has no config.json: ${modelDir} (field models[0].path) [config.model-folder]`,
  );
});

test("an unknown key gets the nearest valid key", async () => {
  const file = path.join(project.root, "typo.bprof.yaml");
  await fs.writeFile(file, "models:\n  - path: ./model\nbenchmark:\n  - task: ./tasks/tiny_mc.yaml\n");
  const r = await bprof(["validate", file]);
  assert.equal(r.exitCode, 2);
  assert.match(r.stderr, /typo\.bprof\.yaml:3:1: error: unknown key `benchmark`; did you mean `benchmarks`\?/);
});

test("a truncated model.safetensors is an error at the config's model path, found before the runner starts", async () => {
  const modelDir = path.join(project.root, "model-truncated");
  await fs.cp(project.modelDir, modelDir, { recursive: true });
  const weights = path.join(modelDir, "model.safetensors");
  const size = (await fs.stat(weights)).size;
  await fs.truncate(weights, Math.floor(size / 2));
  const file = path.join(project.root, "truncated.bprof.yaml");
  await fs.writeFile(file, "models:\n  - path: ./model-truncated\nbenchmarks:\n  - task: ./tasks/tiny_mc.yaml\n");
  const runs = () => fs.readdir(path.join(project.root, ".bprof", "runs")).catch(() => []);
  const before = await runs();
  const r = await bprof(["run", file]);
  assert.equal(r.exitCode, 2, r.stderr);
  const line = oneLine(r.stderr);
  // The runner refuses such a file too (bad_safetensors, native-runner/tests/test_safetensors.cpp); the header check finds it first.
  assert.match(
    line,
    new RegExp(
      `^${escape(file)}:2:11: error: the weights are not a complete safetensors file \\(.*past the end of the data.*\\); download or copy them again: ${escape(weights)} \\(field models\\[0\\]\\.path\\) \\[config\\.model-folder\\]$`,
    ),
  );
  assert.deepEqual(await runs(), before, "no run folder was made");
});

test("a benchmark document whose choice cannot fit the model's max length names the data file and line", async () => {
  const tasks = path.join(project.root, "tasks");
  const docs = [
    ...(await fs.readFile(project.dataFile, "utf8")).trim().split("\n"),
    JSON.stringify({ question: "Which is longer?", choices: ["short", "long ".repeat(40)], answer: 0 }),
  ];
  await fs.writeFile(path.join(tasks, "long_choice.jsonl"), docs.join("\n") + "\n");
  await fs.writeFile(
    path.join(tasks, "long_choice.yaml"),
    (await fs.readFile(project.taskFile, "utf8"))
      .replace("task: tiny_mc", "task: long_choice")
      .replace("tiny_mc.jsonl", "long_choice.jsonl"),
  );
  const file = path.join(project.root, "long.bprof.yaml");
  await fs.writeFile(file, "models:\n  - path: ./model\n    max_length: 64\nbenchmarks:\n  - task: ./tasks/long_choice.yaml\n");
  const r = await bprof(["run", file]);
  assert.equal(r.exitCode, 2, r.stderr);
  assert.equal(
    oneLine(r.stderr),
    `${path.join(tasks, "long_choice.jsonl")}:4:1: error: benchmark \`long_choice\`, document 3: choice 1 is 201 tokens long, more than the model's max length (64): raise the model's \`max_length\` or leave the document out [task.document]`,
  );
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

test("a diagnostic item longer than the model's max length names the dataset's file and line, in validate and before the runner starts", async () => {
  const profile = await makeProfileProject();
  try {
    const dataset = path.join(profile.root, "diag", "spatial.diag.jsonl");
    const lines = (await fs.readFile(dataset, "utf8")).trim().split("\n");
    const long = { ...JSON.parse(lines[1]!), id: "spatial-long", context: "far away ".repeat(60) };
    lines.splice(1, 0, JSON.stringify(long));
    await fs.writeFile(dataset, lines.join("\n") + "\n");
    await fs.writeFile(profile.configPath, CONFIG_YAML.replace("    name: tiny-llama\n", "    name: tiny-llama\n    max_length: 200\n"));
    const validated = await bprof(["validate", profile.configPath]);
    assert.equal(validated.exitCode, 2, validated.stderr);
    assert.match(
      validated.stderr,
      new RegExp(`^${escape(dataset)}:2:1: error: ability .* item spatial-long: .* \\[diag\\.too-long\\]$`, "m"),
      "bprof validate finds it too",
    );
    const r = await bprof(["run", profile.configPath]);
    assert.equal(r.exitCode, 2, r.stderr);
    // The datasets' size warnings come first; the error is the last line, and there is no stack trace.
    assert.doesNotMatch(r.stderr, /\s+at\s+\S+\s+\(/);
    assert.match(
      r.stderr.trim().split("\n").at(-1)!,
      new RegExp(
        `^${escape(dataset)}:2:1: error: ability \`${escape(SPATIAL)}\`, item spatial-long: \\d+ tokens, more than the model's max length \\(200\\): shorten the item, or raise the model's \`max_length\` \\[diag\\.too-long\\]$`,
      ),
    );
    const [run] = await fs.readdir(path.join(profile.root, ".bprof", "runs"));
    const modelDir = path.join(profile.root, ".bprof", "runs", run!, "models", "tiny-llama");
    assert.equal(
      await fs.stat(path.join(modelDir, "runner")).then(
        () => true,
        () => false,
      ),
      false,
      "the runner never started",
    );
  } finally {
    await fs.rm(profile.root, { recursive: true, force: true });
  }
});
