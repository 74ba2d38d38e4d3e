// What a repository the user opens can put in front of bprof (issue 34): a config's ssh options
// that would run a command, symlinks where bprof writes its temporary files, a run-state.json that
// names a process to signal, run folders whose files point out of them. Each is refused or made
// harmless, and nothing outside is read, written or signalled.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { parse as parseCsv } from "csv-parse/sync";
import { writeFileAtomic, writeJsonAtomic } from "../../../src/core/base/fsutil";
import { renderReport } from "../../../src/core/report/index";
import { loadRun, ReportInputError, RunItems } from "../../../src/core/report/load";
import { askRunToStop, RUN_STATE } from "../../../src/core/results/runs";
import { modelFolderName } from "../../../src/core/config/modelFolder";
import { formatProblem } from "../../../src/core/base/problems";
import { fixtureResults, MODEL, MODEL_FOLDER, writeFixtureRun } from "../../support/reportFixture";
import { configTrials } from "../../support/configTrials";

const trials = configTrials("bprof-untrusted-");

const sshTarget = (lines: string) => `${trials.config}target:\n  ssh:\n${lines}`;
const optionsOf = (options: Record<string, string>) =>
  sshTarget(
    `    host: gpu1\n    options:\n${Object.entries(options)
      .map(([k, v]) => `      ${k}: ${JSON.stringify(v)}\n`)
      .join("")}`,
  );

test("ssh options: only those on the allow-list, with plain values; the rest refused at their key with the reason", async () => {
  const allowed = await trials.problemsOf(
    optionsOf({
      Port: "2222",
      StrictHostKeyChecking: "accept-new",
      UserKnownHostsFile: "~/.ssh/known_hosts_lab",
      ProxyJump: "me@bastion:2022,jump2",
      ServerAliveInterval: "30",
      Ciphers: "aes256-gcm@openssh.com,chacha20-poly1305@openssh.com",
      LogLevel: "ERROR",
      Compression: "yes",
    }),
  );
  assert.deepEqual(allowed.filter((p) => p.field?.startsWith("target.")).map(formatProblem), [], "the options users need are accepted");

  const refused = await trials.problemsOf(
    optionsOf({
      ProxyJump: "x$(id>marker)@host",
      XAuthLocation: "/tmp/evil",
      ForwardX11: "yes",
      UserKnownHostsFile: "/tmp/%d/known`id`",
      StrictHostKeyChecking: "maybe",
      ServerAliveInterval: "30; id",
      ControlPersist: "yes",
    }),
  );
  const byField = new Map(refused.filter((p) => p.field?.startsWith("target.")).map((p) => [p.field, p]));
  assert.deepEqual(
    [...byField.keys()].sort(),
    [
      "target.ssh.options.ControlPersist",
      "target.ssh.options.ForwardX11",
      "target.ssh.options.ProxyJump",
      "target.ssh.options.ServerAliveInterval",
      "target.ssh.options.StrictHostKeyChecking",
      "target.ssh.options.UserKnownHostsFile",
      "target.ssh.options.XAuthLocation",
    ],
    refused.map(formatProblem).join("\n"),
  );
  assert.equal(byField.get("target.ssh.options.XAuthLocation")!.code, "config.ssh-option-not-allowed");
  assert.match(byField.get("target.ssh.options.XAuthLocation")!.message, /not one bprof passes to ssh.*~\/\.ssh\/config/);
  assert.equal(byField.get("target.ssh.options.ProxyJump")!.code, "config.ssh-option-value");
  assert.match(byField.get("target.ssh.options.ProxyJump")!.message, /\[user@\]host\[:port\]/);
  assert.equal(byField.get("target.ssh.options.UserKnownHostsFile")!.code, "config.ssh-option-value");
  assert.equal(byField.get("target.ssh.options.ServerAliveInterval")!.code, "config.ssh-option-value");
  // The value's problem sits on the value, the keyword's on the key.
  const lines = trials.config.split("\n").length;
  assert.equal(byField.get("target.ssh.options.ProxyJump")!.line, lines + 4);
  assert.equal(byField.get("target.ssh.options.ProxyJump")!.column, 18);
  assert.equal(byField.get("target.ssh.options.XAuthLocation")!.column, 7);

  // Keywords that run a command keep their own code and message.
  const proxyCommand = await trials.problemsOf(optionsOf({ proxycommand: "nc %h %p" }));
  assert.deepEqual(
    proxyCommand.filter((p) => p.field?.startsWith("target.")).map((p) => p.code),
    ["config.ssh-option-runs-commands"],
  );
});

test("an ssh host or user that starts with a dash or holds shell characters is refused by the schema", async () => {
  for (const lines of [
    "    host: 'gpu1$(id)'\n",
    "    host: 'me;id@gpu1'\n",
    "    host: gpu1\n    user: '-oProxyCommand=id'\n",
    "    host: gpu1\n    user: 'me`id`'\n",
  ]) {
    const problems = (await trials.problemsOf(sshTarget(lines))).filter((p) => p.field?.startsWith("target."));
    assert.deepEqual(
      problems.map((p) => p.code),
      ["config.invalid-value"],
      `${lines}: ${problems.map(formatProblem).join("\n")}`,
    );
  }
  const fine = await trials.problemsOf(sshTarget("    host: me@gpu-1.lab.example.org\n    user: me.you_2\n"));
  assert.deepEqual(fine.filter((p) => p.field?.startsWith("target.")).map(formatProblem), []);
});

test("writeFileAtomic never writes through a symlink planted at a temporary name, and leaves no temporary", async () => {
  const dir = await fs.mkdtemp(path.join(trials.project.root, "atomic-"));
  const victim = path.join(dir, "victim.txt");
  await fs.writeFile(victim, "the user's file\n");
  const file = path.join(dir, "report.html");
  // The names the old writer used (file.<pid>.tmp) for this process and its neighbours, and a few others.
  const planted = [...Array.from({ length: 200 }, (_, i) => `${file}.${process.pid - 100 + i}.tmp`), `${file}.tmp`, `${file}.merge.tmp`];
  for (const name of planted) await fs.symlink(victim, name);
  await writeFileAtomic(file, "<html>report</html>\n");
  assert.equal(await fs.readFile(victim, "utf8"), "the user's file\n", "the victim is untouched");
  assert.equal(await fs.readFile(file, "utf8"), "<html>report</html>\n");
  assert.equal((await fs.lstat(file)).isSymbolicLink(), false, "the file is a file of its own, not the planted link");
  const left = (await fs.readdir(dir)).filter((n) => n.endsWith(".tmp"));
  assert.equal(left.length, planted.length, "only the planted links remain: no temporary of ours is left");
  // A link at the file itself is replaced, never written through.
  const linked = path.join(dir, "linked.json");
  await fs.symlink(victim, linked);
  await writeJsonAtomic(linked, { a: 1 });
  assert.equal(await fs.readFile(victim, "utf8"), "the user's file\n");
  assert.deepEqual(JSON.parse(await fs.readFile(linked, "utf8")), { a: 1 });
});

test("a model name with a line break, HTML, Markdown and LaTeX cannot add lines or markup to a report", async () => {
  const name =
    "evil\n# Injected heading\n<script>alert(1)</script> *bold* [link](http://x) | cell \\input{/etc/passwd} $x$ %comment\r\n=cmd";
  const results = fixtureResults();
  results.models[0]!.name = name;
  const dir = await writeFixtureRun(results);
  try {
    await fs.rename(path.join(dir, "models", MODEL_FOLDER), path.join(dir, "models", modelFolderName(name)));
    // The run id is the results file's word, not the folder's: it can carry the same.
    await writeJsonAtomic(path.join(dir, "results.json"), { ...results, run_id: `r1${name}` });
    const run = await loadRun(dir);
    const render = (format: "html" | "md" | "csv" | "latex") => renderReport(run, { format, script: "/* */" }).then((r) => r.text);

    const md = await render("md");
    assert.doesNotMatch(md, /^# Injected/m, "no line of the name starts a Markdown line");
    assert.doesNotMatch(md, /^=cmd/m);
    assert.doesNotMatch(md, /<script>alert/);
    assert.doesNotMatch(md, /(?<!\\)\*bold(?<!\\)\*/);
    assert.doesNotMatch(md, /(?<!\\)\[link(?<!\\)\]/);

    const html = await render("html");
    // A line break in HTML text is only white space: markup is what the name must not bring.
    assert.doesNotMatch(html, /<script>alert/);
    assert.match(html, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);

    const latex = await render("latex");
    assert.doesNotMatch(latex, /\\input\{/, "no LaTeX command from the name");
    assert.doesNotMatch(latex, /(?<!\\)%comment/, "no LaTeX comment from the name");
    assert.doesNotMatch(latex, /(?<!\\)\$x(?<!\\)\$/);
    assert.doesNotMatch(latex, /^# Injected/m);
    assert.doesNotMatch(latex, /^=cmd/m);

    // CSV: the name is one field of each row, whole (a line break inside quotes is RFC 4180's).
    const csv = await render("csv");
    const rows = parseCsv(csv) as string[][];
    const modelColumn = rows[0]!.indexOf("model");
    assert.ok(rows.length > 1);
    for (const row of rows.slice(1)) {
      assert.equal(row.length, rows[0]!.length, "no row gains or loses a column");
      assert.equal(row[modelColumn], name);
    }
  } finally {
    await fs.rm(path.dirname(path.dirname(dir)), { recursive: true, force: true });
  }
});

/** A sleeping child in its own process group, and whether it still lives. */
function sentinel(): { pid: number; alive: () => boolean; stop: () => void } {
  const child = spawn("sleep", ["60"], { detached: true, stdio: "ignore" });
  child.unref();
  const pid = child.pid!;
  const alive = () => {
    try {
      process.kill(pid, 0);
      return child.exitCode === null && child.signalCode === null;
    } catch {
      return false;
    }
  };
  return { pid, alive, stop: () => alive() && process.kill(pid, "SIGKILL") };
}

test("a run-state.json cannot make Cancel signal every process, this one, or one on another machine", async () => {
  const dir = await fs.mkdtemp(path.join(trials.project.root, "run-state-"));
  const guard = sentinel();
  // SIGINT to this process would end the test runner: count it instead of dying of it.
  let interrupted = 0;
  const onSigint = () => interrupted++;
  process.on("SIGINT", onSigint);
  try {
    const crafted: [string, unknown][] = [
      ["pid -1 (every process of the user)", { state: "running", pid: -1, hostname: os.hostname() }],
      ["pid 0 (this process group)", { state: "running", pid: 0, hostname: os.hostname() }],
      ["a pid that is text", { state: "running", pid: "1; rm -rf ~", hostname: os.hostname() }],
      ["a pid that is not an integer", { state: "running", pid: 1.5, hostname: os.hostname() }],
      ["this process's own pid", { state: "running", pid: process.pid, hostname: os.hostname() }],
      ["the sentinel's group, negated", { state: "running", pid: -guard.pid, hostname: os.hostname() }],
      ["another machine", { state: "running", pid: guard.pid, hostname: `not-${os.hostname()}` }],
    ];
    for (const [what, state] of crafted) {
      await fs.writeFile(path.join(dir, RUN_STATE), JSON.stringify(state));
      const answer = await askRunToStop(dir);
      assert.ok("refused" in answer, `${what}: refused`);
      assert.ok(answer.refused.length > 0);
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(guard.alive(), true, `${what}: the sentinel lives`);
      assert.equal(interrupted, 0, `${what}: this process got no SIGINT`);
    }
    const elsewhere = await askRunToStop(dir);
    assert.ok("refused" in elsewhere);
    assert.match(elsewhere.refused, new RegExp(`on "not-${os.hostname()}", not on this machine: stop it there`));

    // The one case that is signalled: a positive pid of another process on this machine.
    await fs.writeFile(path.join(dir, RUN_STATE), JSON.stringify({ state: "running", pid: guard.pid, hostname: os.hostname() }));
    assert.deepEqual(await askRunToStop(dir), { pid: guard.pid });
    for (let i = 0; i < 50 && guard.alive(); i++) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(guard.alive(), false, "SIGINT reached the run's own process");
  } finally {
    process.off("SIGINT", onSigint);
    guard.stop();
  }
});

test("a run folder's items_file, items.jsonl or results.json cannot lead out of the run folder", async () => {
  const secret = path.join(trials.project.root, "secret.txt");
  await fs.writeFile(secret, "TOP SECRET\n");
  const variantsOf = (results: ReturnType<typeof fixtureResults>) => results.models[0]!.profile!.variants;

  for (const itemsFile of ["../../../../secret.txt", "/etc/passwd", "variants/../../../x"]) {
    const dir = await writeFixtureRun();
    try {
      const results = fixtureResults();
      for (const v of variantsOf(results)) v.items_file = itemsFile;
      await writeJsonAtomic(path.join(dir, "results.json"), results);
      await assert.rejects(loadRun(dir), (e: unknown) => {
        assert.ok(e instanceof ReportInputError, String(e));
        assert.match(
          e.message,
          /results\.json: models\[0\]\.profile\.variants\[0\]\.items_file: expected a path inside the model's folder/,
        );
        return true;
      });
    } finally {
      await fs.rm(path.dirname(path.dirname(dir)), { recursive: true, force: true });
    }
  }

  // Links out of the folder: each variant's items file, then items.jsonl, then results.json itself.
  const dir = await writeFixtureRun();
  try {
    const modelDir = path.join(dir, "models", MODEL_FOLDER);
    for (const v of variantsOf(fixtureResults())) {
      await fs.rm(path.join(modelDir, v.items_file));
      await fs.symlink(secret, path.join(modelDir, v.items_file));
    }
    const md = (await renderReport(await loadRun(dir), { format: "md", script: "" })).text;
    assert.match(
      md,
      /variants\/\S+\.items\.jsonl leads out of the run folder .*: it is not read \(named by results\.json's items\\?_file\)/,
    );
    assert.doesNotMatch(md, /not a JSON line/, "the file out of the folder was not read");

    await fs.rm(path.join(modelDir, "items.jsonl"));
    await fs.symlink(secret, path.join(modelDir, "items.jsonl"));
    const items = new RunItems(dir);
    await assert.rejects(items.baseline(MODEL), /items\.jsonl leads out of the run folder/);

    await fs.rename(path.join(dir, "results.json"), path.join(trials.project.root, "elsewhere.json"));
    await fs.symlink(path.join(trials.project.root, "elsewhere.json"), path.join(dir, "results.json"));
    await assert.rejects(loadRun(dir), /results\.json leads out of the run folder/);
  } finally {
    await fs.rm(path.dirname(path.dirname(dir)), { recursive: true, force: true });
  }
});
