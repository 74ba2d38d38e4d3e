// The configs the editor writes for a user: New Profiling Config's text and the snippet of an empty
// *.bprof.yaml validate (schema and files) once their model and task are filled; a new config
// never replaces a file.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { loadProfile } from "../../../src/core/config/load";
import { freeConfigFile, isTaskText, newConfigText, writeNewFileAtomic } from "../../../src/core/config/newConfig";
import { parseConfig } from "../../../src/core/config/parse";
import { errorsOf, formatProblem } from "../../../src/core/base/problems";
import { makeTinyProject, type TinyProject } from "../../support/tinyProject";

const REPO = path.resolve(import.meta.dirname, "..", "../..");
let project: TinyProject;
before(async () => {
  project = await makeTinyProject(await fs.mkdtemp(path.join(os.tmpdir(), "bprof-newconfig-")));
});
after(() => fs.rm(project.root, { recursive: true, force: true }));

test("New Profiling Config's text names the model and tasks relative to the config, and validates", async () => {
  const configFile = path.join(project.root, "mine.bprof.yaml");
  const text = newConfigText({ configFile, modelDir: project.modelDir, taskFiles: [project.taskFile] });
  assert.match(text, /^ {2}- path: \.\/model$/m);
  assert.match(text, /^ {2}- task: \.\/tasks\/tiny_mc\.yaml$/m);
  assert.match(text, /^# abilities:$/m, "abilities wait, commented, for a diagnostic dataset");
  assert.ok(isTaskText(await fs.readFile(project.taskFile, "utf8")), "the task file is offered as a benchmark");
  assert.ok(!isTaskText(text), "a config is not");
  const parsed = parseConfig(text, configFile);
  assert.deepEqual(parsed.problems.map(formatProblem), []);
  const loaded = await loadProfile(configFile, { text });
  assert.deepEqual(errorsOf(loaded.problems).map(formatProblem), []);
  assert.ok(loaded.profile, "it loads as a profile");
  // A model outside the config's folder and a path with spaces still read back.
  const elsewhere = newConfigText({
    configFile: path.join(project.root, "sub", "x.bprof.yaml"),
    modelDir: "/models/my model",
    taskFiles: [],
  });
  assert.equal(
    parseConfig(elsewhere, "/p/x.bprof.yaml").config?.models[0]?.path,
    path.relative(path.join(project.root, "sub"), "/models/my model"),
  );
});

test("the snippet of an empty *.bprof.yaml validates once its model path and task are filled", async () => {
  const snippets = JSON.parse(await fs.readFile(path.join(REPO, "media", "snippets", "bprof.json"), "utf8")) as Record<
    string,
    { body: string[]; isFileTemplate?: boolean }
  >;
  const [snippet] = Object.values(snippets);
  assert.equal(snippet!.isFileTemplate, true, "offered for an empty file");
  const filled = (values: Record<string, string>) =>
    snippet!.body
      .join("\n")
      .replace(/\$\{(\d+):([^}]*)\}/g, (_m, n: string, placeholder: string) => values[n] ?? placeholder)
      .replace(/\$0/g, "");
  const configFile = path.join(project.root, "snippet.bprof.yaml");
  assert.deepEqual(parseConfig(filled({}), configFile).problems.map(formatProblem), [], "as inserted, it matches the schema");
  const text = filled({ "1": "./model", "2": "./tasks/tiny_mc.yaml" });
  const loaded = await loadProfile(configFile, { text });
  assert.deepEqual(errorsOf(loaded.problems).map(formatProblem), []);
});

test("a new config takes a free name and never replaces a file", async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-newfile-"));
  try {
    const taken = new Set([path.join(dir, "llama-3.bprof.yaml")]);
    assert.equal(
      freeConfigFile(dir, "llama-3", (f) => taken.has(f)),
      path.join(dir, "llama-3-2.bprof.yaml"),
    );
    assert.equal(
      freeConfigFile(dir, "my model!", () => false),
      path.join(dir, "my-model.bprof.yaml"),
    );
    const file = path.join(dir, "a.bprof.yaml");
    await writeNewFileAtomic(file, "first\n");
    await assert.rejects(writeNewFileAtomic(file, "second\n"), { code: "EEXIST" });
    assert.equal(await fs.readFile(file, "utf8"), "first\n", "the file stays as it was");
    assert.deepEqual(await fs.readdir(dir), ["a.bprof.yaml"], "no temporary is left");
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
});

test("the first hour's commands are in the palette, and the Getting Started walkthrough links to them and to its pages", async () => {
  interface Manifest {
    contributes: {
      commands: { command: string }[];
      menus: { commandPalette: { command: string; when?: string }[] };
      snippets: { language: string; path: string }[];
      walkthroughs: { steps: { id: string; description: string; media: { markdown: string }; completionEvents: string[] }[] }[];
    };
  }
  const manifest = JSON.parse(await fs.readFile(path.join(REPO, "package.json"), "utf8")) as Manifest;
  const contributed = new Set(manifest.contributes.commands.map((c) => c.command));
  const hidden = new Set(manifest.contributes.menus.commandPalette.filter((m) => m.when === "false").map((m) => m.command));
  for (const name of ["openDemo", "newConfig", "createDataset", "profile", "showLatestResults"]) {
    assert.ok(contributed.has(`benchmarkProfiler.${name}`), `${name} is a command`);
    assert.ok(!hidden.has(`benchmarkProfiler.${name}`), `${name} is in the command palette`);
  }
  for (const snippet of manifest.contributes.snippets) await fs.access(path.join(REPO, snippet.path));
  const [walkthrough] = manifest.contributes.walkthroughs;
  assert.deepEqual(
    walkthrough!.steps.map((s) => s.id),
    ["openDemo", "readHeatmap", "writeConfig", "makeDataset", "profile"],
  );
  for (const step of walkthrough!.steps) {
    await fs.access(path.join(REPO, step.media.markdown));
    const linked = /\(command:([\w.]+)\)/.exec(step.description)?.[1];
    assert.ok(linked && contributed.has(linked), `${step.id} links to a command: ${linked}`);
    assert.deepEqual(step.completionEvents, [`onCommand:${linked}`]);
  }
});
