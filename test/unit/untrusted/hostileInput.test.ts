// Input that is broken, or written to do harm: each gives a problem at its file, line and field
// (never an exception or a stack trace), and nothing the config names is run by checking it.
import assert from "node:assert/strict";
import { existsSync, promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { loadProfile } from "../../../src/core/config/load";
import { loadDiagnosticDataset } from "../../../src/core/diagnostic/dataset";
import { writeFileAtomic } from "../../../src/core/base/fsutil";
import { checkTarget } from "../../../src/core/launch/check";
import { runnerOutcome } from "../../../src/core/launch/outcome";
import { RunnerError } from "../../../src/core/base/runnerError";
import { resolveTarget } from "../../../src/core/config/target";
import { formatProblem, type Problem } from "../../../src/core/base/problems";
import { modelFolderName } from "../../../src/core/config/modelFolder";
import { runProfile } from "../../../src/core/run/runProfile";
import { configTrials } from "../../support/configTrials";

const trials = configTrials("bprof-hostile-");

function withCode(problems: Problem[], code: string): Problem[] {
  return problems.filter((p) => p.code === code);
}

/** Nine levels of nine aliases: 9^6 values once expanded, the "billion laughs" pattern. */
const ALIAS_BOMB = [
  "a: &a [x, x, x, x, x, x, x, x, x]",
  ..."bcdef".split("").map((k, i) => `${k}: &${k} [${Array(9).fill(`*${"abcdef"[i]}`).join(", ")}]`),
].join("\n");

test("a YAML alias bomb in a config is one problem at its first alias, not an internal error", async () => {
  const problems = await trials.problemsOf(`${trials.config}${ALIAS_BOMB}\n`);
  const [bomb] = withCode(problems, "yaml.syntax");
  assert.ok(bomb, problems.map(formatProblem).join("\n"));
  assert.match(bomb.message, /alias.*write the values out/i);
  const firstAlias = `${trials.config}${ALIAS_BOMB}`.split("\n").findIndex((l) => l.includes("*a")) + 1;
  assert.equal(bomb.line, firstAlias);
  assert.equal(bomb.field, "b[0]");
});

test("a YAML alias bomb in a task file is a problem of the task file", async () => {
  const task = await fs.readFile(trials.project.taskFile, "utf8");
  await fs.writeFile(trials.project.taskFile, `${task}${ALIAS_BOMB}\n`);
  try {
    const problems = (await loadProfile(trials.project.configPath)).problems;
    const bomb = withCode(problems, "yaml.syntax").find((p) => p.file === trials.project.taskFile);
    assert.ok(bomb, problems.map(formatProblem).join("\n"));
  } finally {
    await fs.writeFile(trials.project.taskFile, task);
  }
});

test("bytes that are not UTF-8 are an error at their line and column, in a config, a dataset and a data file", async () => {
  const latin1 = (text: string) => Buffer.from(text, "latin1");
  // A config: line 2, after "  - path: ./model # caf".
  const configProblems = await (async () => {
    const lines = trials.config.split("\n");
    lines[1] = `${lines[1]} # caf\u00e9`;
    await fs.writeFile(trials.project.configPath, latin1(lines.join("\n")));
    try {
      return (await loadProfile(trials.project.configPath)).problems;
    } finally {
      await fs.writeFile(trials.project.configPath, trials.config);
    }
  })();
  const [inConfig] = withCode(configProblems, "file.not-utf8");
  assert.ok(inConfig, configProblems.map(formatProblem).join("\n"));
  assert.deepEqual(
    [inConfig.file, inConfig.line, inConfig.column],
    [trials.project.configPath, 2, trials.config.split("\n")[1]!.length + 7],
  );

  const dataset = path.join(trials.project.root, "latin1.diag.jsonl");
  await fs.writeFile(
    dataset,
    Buffer.concat([
      Buffer.from('{"id": "a", "ability": "x", "question": "q", "answer": "a"}\n'),
      latin1('{"id": "b", "ability": "x", "question": "na\u00efve", "answer": "a"}\n'),
    ]),
  );
  const [inDataset] = (await loadDiagnosticDataset(dataset)).problems;
  assert.deepEqual([inDataset?.code, inDataset?.line, inDataset?.column], ["file.not-utf8", 2, 44]);

  const data = await fs.readFile(trials.project.dataFile);
  await fs.writeFile(
    trials.project.dataFile,
    Buffer.concat([data, latin1('{"question": "\u00ff", "choices": ["a", "b"], "answer": 0}\n')]),
  );
  try {
    const problems = (await loadProfile(trials.project.configPath)).problems;
    const inData = problems.find((p) => p.file === trials.project.dataFile);
    assert.ok(inData, problems.map(formatProblem).join("\n"));
    assert.deepEqual([inData.code, inData.line, inData.column], ["file.not-utf8", data.toString("utf8").split("\n").length, 15]);
    assert.match(inData.message, /not UTF-8/);
  } finally {
    await fs.writeFile(trials.project.dataFile, data);
  }
});

test("ssh options that run a command or load code are refused on their key; ordinary ones are not", async () => {
  const target = (options: string) => `${trials.config}target:\n  ssh:\n    host: gpu1\n    options:\n${options}`;
  const problems = await trials.problemsOf(
    target(
      "      ProxyJump: bastion\n      proxycommand: nc %h %p\n      LocalCommand: touch /tmp/x\n      KnownHostsCommand: /bin/true\n      PKCS11Provider: /tmp/x.so\n",
    ),
  );
  const refused = withCode(problems, "config.ssh-option-runs-commands");
  assert.deepEqual(
    refused.map((p) => p.field),
    [
      "target.ssh.options.proxycommand",
      "target.ssh.options.LocalCommand",
      "target.ssh.options.KnownHostsCommand",
      "target.ssh.options.PKCS11Provider",
    ],
  );
  assert.match(refused[0]!.message, /ssh's ProxyCommand runs a command .* ~\/\.ssh\/config/);
  // A key that smuggles a value in: the schema refuses it before ssh could read it as one option.
  const smuggled = await trials.problemsOf(target('      "ProxyCommand=touch /tmp/x #": yes\n'));
  assert.ok(
    smuggled.some(
      (p) => p.code === "config.invalid-value" && /is not an ssh option/.test(p.message) && p.line === trials.config.split("\n").length + 4,
    ),
    smuggled.map(formatProblem).join("\n"),
  );
  // The same rule under a Slurm login node.
  const viaLogin = await trials.problemsOf(
    `${trials.config}target:\n  slurm:\n    ssh:\n      host: login1\n      options:\n        LocalCommand: id\n`,
  );
  assert.deepEqual(
    withCode(viaLogin, "config.ssh-option-runs-commands").map((p) => p.field),
    ["target.slurm.ssh.options.LocalCommand"],
  );
});

test("model names that share a run folder, or would escape it, are refused or made safe", async () => {
  const model = (name: string) => `  - path: ./model\n    name: ${JSON.stringify(name)}\n`;
  const text = trials.config.replace(/^models:\n(?: {2}.*\n)+/m, `models:\n${model("a b")}${model("a_b")}`);
  const problems = withCode(await trials.problemsOf(text), "config.duplicate-name");
  assert.equal(problems.length, 1);
  assert.match(problems[0]!.message, /model names `a b` and `a_b` share the run's folder models\/a_b/);
  for (const name of ["..", ".", "", "/"]) {
    const folder = modelFolderName(name);
    assert.ok(!["", ".", ".."].includes(folder) && !folder.includes("/"), `${JSON.stringify(name)} -> ${folder}`);
  }
});

test("a write that fails leaves the old file and no temporary beside it", async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-atomic-"));
  const file = path.join(dir, "results.json");
  // A folder where the file should go: the rename fails after the temporary was written.
  await fs.mkdir(file);
  await fs.writeFile(path.join(file, "keep"), "");
  await assert.rejects(writeFileAtomic(file, "{}"));
  assert.deepEqual(await fs.readdir(dir), ["results.json"]);
  await fs.rm(dir, { recursive: true });
});

test("checking a Slurm target does not run the runner a config names on this machine", async () => {
  const marker = path.join(trials.project.root, "ran");
  const runner = path.join(trials.project.root, "evil.sh");
  await fs.writeFile(runner, `#!/bin/sh\ntouch ${JSON.stringify(marker)}\n`, { mode: 0o755 });
  const target = resolveTarget({ slurm: { runner } }, trials.project.root);
  const checks = await checkTarget(target, [], {
    sourcesDir: path.join(trials.project.root, "none"),
    cacheDir: path.join(trials.project.root, "cache"),
  });
  assert.ok(
    checks.some((c) => c.ok && c.message.includes(`${runner}\` on this machine is an executable file (not run before the run itself)`)),
    JSON.stringify(checks),
  );
  assert.equal(existsSync(marker), false, "the named runner was not started");
});

test("an `output` that is a file, or lies under one, is a problem at `output`; at run time the error names the path and the field", async () => {
  const blocker = path.join(trials.project.root, "not-a-folder");
  await fs.writeFile(blocker, "");
  const isFile = await trials.problemsOf(`${trials.config}output: ./not-a-folder\n`);
  const [asFile] = withCode(isFile, "config.output");
  assert.ok(asFile, isFile.map(formatProblem).join("\n"));
  assert.equal(asFile.line, trials.config.split("\n").length);
  assert.match(asFile.message, /is a file, not a folder/);
  const under = withCode(await trials.problemsOf(`${trials.config}output: ./not-a-folder/runs\n`), "config.output");
  assert.match(under[0]?.message ?? "", new RegExp(`cannot be made: ${blocker.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} is a file`));

  // A file that appears after validation (another process): the run stops with where and what to do.
  await fs.writeFile(trials.project.configPath, `${trials.config}output: ./later\n`);
  const { profile } = await loadProfile(trials.project.configPath);
  await fs.writeFile(trials.project.configPath, trials.config);
  assert.ok(profile);
  await fs.writeFile(path.join(trials.project.root, "later"), "");
  await assert.rejects(runProfile(profile, { runner: { sourcesDir: "/nonexistent", cacheDir: "/nonexistent" } }), (e: unknown) => {
    assert.ok(e instanceof RunnerError);
    assert.equal(e.code, "output_failed");
    assert.match(
      e.message,
      /^cannot write .*later.* \(the run's files go under .*later, the config's `output`\): a file stands where a folder must be/,
    );
    return true;
  });
});

test("how an interrupted runner ended: a cancel after its summary cancels nothing; a kill from outside can be resumed", () => {
  const summary = { type: "summary", status: "ok", seconds: 1 } as const;
  const end = { last: summary, exitCode: 0, cancelled: true, stderrTail: "", where: "" };
  assert.deepEqual(runnerOutcome(end), summary, "Ctrl-C after the last variant: the run is done");
  assert.throws(
    () => runnerOutcome({ ...end, last: { type: "progress", phase: "variants", done: 3, total: 9 } as never, exitCode: 130 }),
    (e: unknown) => e instanceof RunnerError && e.code === "cancelled",
  );
  assert.throws(
    () => runnerOutcome({ ...end, last: undefined, exitCode: undefined, cancelled: false, signal: "SIGKILL" }),
    (e: unknown) => {
      assert.ok(e instanceof RunnerError);
      assert.equal(e.code, "killed");
      assert.ok(e.resumable);
      assert.match(e.message, /killed by SIGKILL .* a resume continues where it stopped/);
      return true;
    },
  );
});

/** The task file's problems with its doc_to_text replaced by `template`. */
async function taskProblems(template: string): Promise<Problem[]> {
  const task = await fs.readFile(trials.project.taskFile, "utf8");
  await fs.writeFile(trials.project.taskFile, task.replace(/^doc_to_text: .*$/m, `doc_to_text: ${JSON.stringify(template)}`));
  try {
    return (await loadProfile(trials.project.configPath)).problems.filter(
      (p) => p.file === trials.project.taskFile || p.file.endsWith(".jsonl"),
    );
  } finally {
    await fs.writeFile(trials.project.taskFile, task);
  }
}

test("a template's own faults are one problem at its task key: a syntax error, an undefined name, a loop past the limits, a render that fails at once", async () => {
  const task = await fs.readFile(trials.project.taskFile, "utf8");
  const keyLine = task.split("\n").findIndex((l) => l.startsWith("doc_to_text:")) + 1;
  const cases: [string, RegExp][] = [
    ["Q: {% if %}", /^doc_to_text: Jinja syntax: /],
    [
      "Q: {{questoin}}\nA:",
      /^doc_to_text: `questoin` is undefined \(the document's fields: `question`, `choices`, `answer`\) in document 0$/,
    ],
    ["{% for i in range(100000000) %}{{i}}{% endfor %}", /^doc_to_text: range\(\) of 100,000,000 items is past the limit/],
    [
      "{% for i in range(2000) %}{% for j in range(2000) %}{{j}}{% endfor %}{% endfor %}",
      /^doc_to_text: the template (did not finish within|printed more than)/,
    ],
    // A render that fails on the first document is the template's too (a later one is the data's: task.test.ts).
    ["Q: {{ question - 1 }}", /^doc_to_text: .* in document 0$/],
  ];
  for (const [template, message] of cases) {
    const problems = await taskProblems(template);
    assert.equal(problems.length, 1, `${template}:\n${problems.map(formatProblem).join("\n")}`);
    assert.equal(problems[0]!.code, "task.template");
    assert.equal(problems[0]!.line, keyLine, "at the doc_to_text key, not at the data file's lines");
    assert.match(problems[0]!.message, message);
  }
  // `is defined` and `default` still see an undefined name without raising, as with StrictUndefined.
  assert.deepEqual(await taskProblems("{{ hint | default('') }}{% if hint is defined %}!{% endif %}{{question}}"), []);
});

test("a repository's `.bprof` that links out of the config's folder is a problem at `output`; a folder named outright is taken as it is", async () => {
  const elsewhere = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-users-folder-"));
  const link = path.join(trials.project.root, ".bprof");
  await fs.symlink(elsewhere, link);
  try {
    const [problem] = withCode(await trials.problemsOf(trials.config), "config.output");
    assert.ok(problem, "the default output through a link is refused");
    assert.match(problem.message, /lies in the config's folder but .*\.bprof is a link out of it \(to .*bprof-users-folder-/);
    assert.equal(problem.line, 1);
    const named = withCode(await trials.problemsOf(`${trials.config}output: ${JSON.stringify(elsewhere)}\n`), "config.output");
    assert.deepEqual(named, [], "the folder the link leads to, named in `output`, is the user's choice");
  } finally {
    await fs.rm(link);
    await fs.rm(elsewhere, { recursive: true, force: true });
  }
});
