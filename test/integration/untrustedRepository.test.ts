// A repository the user opens, through the CLI as a user runs it (issue 34): a config whose ssh
// options would run a command is refused before ssh is started; the build script does not take a
// libtorch from the folder it starts in; a report is not written through symlinks planted where
// its temporary files go; a run folder's files cannot point bprof at files outside it.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { promisify } from "node:util";
import { after, before, test } from "node:test";
import { bprof, repoRoot } from "../support/cli";
import { writeFixtureRun } from "../support/reportFixture";
import { makeTinyProject, type TinyProject } from "../support/tinyProject";

let project: TinyProject;
let scratch: string;

before(async () => {
  scratch = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-untrusted-cli-"));
  project = await makeTinyProject(path.join(scratch, "project"));
});
after(() => fs.rm(scratch, { recursive: true, force: true }));

/** A folder with an `ssh` that records that it was started, to put first on PATH. */
async function recordingSsh(dir: string): Promise<{ bin: string; started: string }> {
  const bin = path.join(dir, "bin");
  const started = path.join(dir, "ssh-was-started");
  await fs.mkdir(bin, { recursive: true });
  await fs.writeFile(path.join(bin, "ssh"), `#!/bin/sh\necho "$@" >> ${JSON.stringify(started)}\nexit 255\n`, { mode: 0o755 });
  return { bin, started };
}

test("a ProxyJump that holds a command is refused by `bprof validate` before ssh is started", async () => {
  const dir = await fs.mkdtemp(path.join(scratch, "proxyjump-"));
  const { bin, started } = await recordingSsh(dir);
  const marker = path.join(dir, "marker");
  const config = path.join(project.root, "jump.bprof.yaml");
  await fs.writeFile(
    config,
    (await fs.readFile(project.configPath, "utf8")) +
      `target:\n  ssh:\n    host: gpu1\n    options:\n      ProxyJump: ${JSON.stringify(`x$(touch ${marker})@host`)}\n`,
  );
  const r = await bprof(["validate", config], { cwd: project.root, env: { PATH: `${bin}:${process.env.PATH}` } });
  assert.equal(r.exitCode, 2, r.stderr);
  assert.match(r.stderr, /ProxyJump must be comma-separated \[user@\]host\[:port\] items.*\[config\.ssh-option-value\]$/m);
  assert.equal(existsSync(started), false, "ssh was never started");
  assert.equal(existsSync(marker), false, "the command in ProxyJump did not run");
});

test("`bprof report` writes its file whole, never through symlinks planted at temporary names", async () => {
  const dir = await writeFixtureRun();
  try {
    const victim = path.join(scratch, "victim.txt");
    await fs.writeFile(victim, "the user's file\n");
    const report = path.join(dir, "report.md");
    // The old temporary name was report.md.<pid>.tmp: links for the pids the next processes get.
    const { stdout } = await promisify(execFile)("sh", ["-c", "echo $$"]);
    const next = Number(stdout.trim());
    for (let pid = next; pid < next + 3000; pid++) await fs.symlink(victim, `${report}.${pid}.tmp`);
    const r = await bprof(["report", dir, "--format", "md"]);
    assert.equal(r.exitCode, 0, r.stderr);
    assert.equal(await fs.readFile(victim, "utf8"), "the user's file\n", "the victim is untouched");
    assert.match(await fs.readFile(report, "utf8"), /^# Benchmark profile/);
    assert.equal((await fs.lstat(report)).isSymbolicLink(), false);
  } finally {
    await fs.rm(path.dirname(path.dirname(dir)), { recursive: true, force: true });
  }
});

test("build-runner.sh does not take a libtorch from the folder it starts in, unless BPROF_TORCH_PREFIX names it", async () => {
  const dir = await fs.mkdtemp(path.join(scratch, "torch-in-cwd-"));
  const marker = path.join(dir, "cmake-ran");
  // A PyTorch package as Python would find it first from this folder, whose CMake code would run.
  const config = path.join(dir, "torch", "share", "cmake", "Torch");
  await fs.mkdir(config, { recursive: true });
  await fs.writeFile(path.join(dir, "torch", "__init__.py"), "");
  await fs.writeFile(path.join(config, "TorchConfig.cmake"), `file(WRITE ${JSON.stringify(marker)} "owned")\n`);
  await fs.writeFile(path.join(config, "TorchConfigVersion.cmake"), 'set(PACKAGE_VERSION "9.9.9")\n');
  const env: Record<string, string> = { ...process.env, BPROF_RUNNER_CACHE: path.join(dir, "cache") } as Record<string, string>;
  delete env.BPROF_TORCH_PREFIX;
  // Python's own ways of adding a folder to its path point here too: none of them counts.
  env.PYTHONPATH = dir;
  const where = async (extra: Record<string, string> = {}) => {
    const { stdout } = await promisify(execFile)("sh", [path.join(repoRoot, "native-runner", "build-runner.sh"), "where"], {
      cwd: dir,
      env: { ...env, ...extra },
    });
    return Object.fromEntries(
      stdout
        .split("\n")
        .map((line) => /^@@bprof (\S+) (.*)$/.exec(line))
        .filter((m) => m !== null)
        .map((m) => [m[1]!, m[2]!]),
    );
  };
  const found = await where();
  assert.ok(!(found.torch ?? "").startsWith(dir), `the libtorch in the starting folder was taken: ${found.torch} (${found.torch_from})`);
  assert.equal(existsSync(marker), false);
  // Named explicitly, it is the one used.
  const named = await where({ BPROF_TORCH_PREFIX: path.join(dir, "torch") });
  assert.equal(named.torch, config);
  assert.equal(named.torch_from, "BPROF_TORCH_PREFIX");
});

/** A finished score run of the tiny project, made resumable again: its results.json removed. */
async function resumableRun(): Promise<string> {
  const r = await bprof(["run", project.configPath], { cwd: project.root });
  assert.equal(r.exitCode, 0, r.stderr);
  const runs = path.join(project.root, ".bprof", "runs");
  const dir = path.join(runs, (await fs.readdir(runs)).sort().at(-1)!);
  await fs.rm(path.join(dir, "results.json"));
  return dir;
}

test("`bprof run --resume` refuses a run folder with a planted link, and appends nothing to the link's target", async () => {
  const victim = path.join(scratch, "bashrc");
  const original = "# the user's shell start-up file\n";
  await fs.writeFile(victim, original);
  const dir = await resumableRun();
  // the events log (appended to on resume), then a runner file (written by the runner) as links
  for (const planted of ["models/tiny-llama/events.jsonl", "models/tiny-llama/runner/scores.jsonl"]) {
    const at = path.join(dir, planted);
    const kept = path.join(scratch, "kept");
    await fs.rename(at, kept);
    await fs.symlink(victim, at);
    const r = await bprof(["run", "--resume", dir], { cwd: project.root });
    assert.equal(r.exitCode, 2, r.stderr);
    assert.match(r.stderr, new RegExp(`cannot resume .*: ${planted.replace(/\./g, "\\.")} is a link or a special file`));
    assert.doesNotMatch(r.stderr, /internal error|\n\s+at /);
    assert.equal(await fs.readFile(victim, "utf8"), original, "nothing was appended to the link's target");
    await fs.rm(at);
    await fs.rename(kept, at);
  }
  // the folder as bprof wrote it resumes
  const r = await bprof(["run", "--resume", dir], { cwd: project.root });
  assert.equal(r.exitCode, 0, r.stderr);
});

test("`bprof report --out` into a device, a link to one or a FIFO writes into it and leaves it as it was", async () => {
  const dir = await writeFixtureRun();
  try {
    const link = path.join(scratch, "null-link");
    await fs.symlink("/dev/null", link);
    const outs = [link];
    if (process.getuid?.() === 0) {
      // a copy of /dev/null: the old rename turned the device at --out into a regular file
      const device = path.join(scratch, "null-device");
      await promisify(execFile)("mknod", [device, "c", "1", "3"]);
      outs.push(device);
    }
    for (const out of outs) {
      const r = await bprof(["report", dir, "--format", "md", "--out", out]);
      assert.equal(r.exitCode, 0, r.stderr);
      const compared = await bprof(["compare", dir, dir, "--out", out]);
      assert.equal(compared.exitCode, 0, compared.stderr);
      assert.ok((await fs.stat(out)).isCharacterDevice(), `${out} is still a device`);
    }
    assert.ok((await fs.lstat(link)).isSymbolicLink());
    const fifo = path.join(scratch, "report-pipe");
    await promisify(execFile)("mkfifo", [fifo]);
    const reading = promisify(execFile)("cat", [fifo]);
    const r = await bprof(["report", dir, "--format", "md", "--out", fifo]);
    assert.equal(r.exitCode, 0, r.stderr);
    assert.match((await reading).stdout, /^# Benchmark profile/);
    assert.ok((await fs.lstat(fifo)).isFIFO());
    // a planted link where the run folder's own report goes is refused, its target untouched
    const victim = path.join(scratch, "report-victim");
    await fs.writeFile(victim, "mine\n");
    await fs.symlink(victim, path.join(dir, "report.md"));
    const planted = await bprof(["report", dir, "--format", "md"]);
    assert.equal(planted.exitCode, 2, planted.stderr);
    assert.match(planted.stderr, /report\.md in the run folder .* is a link/);
    assert.equal(await fs.readFile(victim, "utf8"), "mine\n");
  } finally {
    await fs.rm(path.dirname(path.dirname(dir)), { recursive: true, force: true });
  }
});
