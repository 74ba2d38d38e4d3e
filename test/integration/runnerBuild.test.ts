// Building bprof-runner from its sources with build-runner.sh, on this machine and for real: what a
// missing libtorch says before anything compiles, what a failed step keeps, and that a cancel
// leaves neither a compiler running nor a half-built folder. (The successful build, and its reuse,
// are covered end to end by the demo, SSH and VS Code tests.)
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { RunnerError } from "../../src/core/base/runnerError";
import { buildFactsOn, obtainRunner, type BuildProgress } from "../../src/core/runner/build";
import { runnerSources, type RunnerSources } from "../../src/core/runner/sources";
import { repoRoot } from "../support/cli";

const SOURCES_DIR = path.join(repoRoot, "native-runner");
const LOCAL = { kind: "local" } as const;

async function tempDir(name: string): Promise<string> {
  return fs.mkdtemp(path.join(os.tmpdir(), `bprof-${name}-`));
}

async function sources(dir = SOURCES_DIR): Promise<RunnerSources> {
  const found = await runnerSources(dir);
  assert.ok(found, `no runner sources in ${dir}`);
  return found;
}

/** Processes whose command line names `text` (ps, so it sees compilers of any parent). */
function processesNaming(text: string): string[] {
  const ps = execFileSync("ps", ["-eo", "pid=,args="], { encoding: "utf8" });
  return ps.split("\n").filter((line) => line.includes(text) && !line.includes("ps -eo"));
}

test("a libtorch that is not there is named, with install commands, before anything compiles", async () => {
  const cache = await tempDir("runner-cache");
  const empty = await tempDir("no-torch");
  const request = { host: LOCAL, sources: await sources(), cacheDir: cache, torchPrefix: empty };
  const facts = await buildFactsOn(request);
  assert.ok(
    facts.missing.some((m) => m.includes(empty)),
    `missing: ${facts.missing.join("; ")}`,
  );
  await assert.rejects(obtainRunner(request), (e: unknown) => {
    assert.ok(e instanceof RunnerError);
    assert.equal(e.code, "runner_build_needs");
    assert.match(e.message, /libtorch .*is missing/);
    assert.match(e.message, new RegExp(`none at ${empty.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
    return true;
  });
  assert.deepEqual(await fs.readdir(cache), [], "nothing is created in the cache when the build cannot start");
});

test("a step that fails keeps its log, and the error names the step and the first error", { timeout: 120_000 }, async (t) => {
  const cache = await tempDir("runner-cache");
  const broken = await tempDir("broken-sources");
  await fs.cp(SOURCES_DIR, broken, { recursive: true, filter: (f) => !/\/(build|tests|fuzz)(\/|$)/.test(f.slice(SOURCES_DIR.length)) });
  await fs.appendFile(path.join(broken, "CMakeLists.txt"), '\nmessage(FATAL_ERROR "this project is broken on purpose")\n');
  const request = { host: LOCAL, sources: await sources(broken), cacheDir: cache };
  const facts = await buildFactsOn(request);
  if (facts.missing.length > 0) return t.skip(`this machine cannot build the runner: ${facts.missing.join("; ")}`);
  const lines: string[] = [];
  await assert.rejects(obtainRunner({ ...request, onOutput: (l) => lines.push(l) }), (e: unknown) => {
    assert.ok(e instanceof RunnerError);
    assert.equal(e.code, "runner_build_failed");
    assert.match(e.message, /failed at its configure step: CMake Error/);
    assert.match(e.message, /The whole log: .*failed-[0-9a-f]{16}\.log$/);
    return true;
  });
  assert.ok(
    lines.some((l) => l.includes("broken on purpose")),
    "the build's output reached onOutput",
  );
  const kept = (await fs.readdir(cache)).filter((f) => f.startsWith("failed-"));
  assert.equal(kept.length, 1);
  assert.match(await fs.readFile(path.join(cache, kept[0]!), "utf8"), /broken on purpose/);
  assert.deepEqual(
    (await fs.readdir(cache)).filter((f) => f.includes(".build-")),
    [],
    "the work folder is gone",
  );
});

test("a cancelled build stops its compilers and leaves no half-built folder", { timeout: 180_000 }, async (t) => {
  // compiled for real: from the test run's compiler cache the build could end before the cancel
  process.env.BPROF_CCACHE = "0";
  t.after(() => delete process.env.BPROF_CCACHE);
  const cache = await tempDir("runner-cache");
  const request = { host: LOCAL, sources: await sources(), cacheDir: cache };
  const facts = await buildFactsOn(request);
  if (facts.missing.length > 0) return t.skip(`this machine cannot build the runner: ${facts.missing.join("; ")}`);
  const controller = new AbortController();
  const seen: BuildProgress[] = [];
  const obtaining = obtainRunner({
    ...request,
    signal: controller.signal,
    onProgress: (p) => {
      seen.push(p);
      // Cancel once the compilers are at work: the case that leaves processes behind if done wrong.
      if (p.step === "compile" && p.done >= 1) controller.abort();
    },
  });
  await assert.rejects(obtaining, (e: unknown) => e instanceof RunnerError && e.code === "cancelled" && /was cancelled/.test(e.message));
  assert.ok(
    seen.some((p) => p.step === "compile" && p.total > 0),
    "progress counted the compile's steps",
  );
  // a first build here: no estimate until the compile's pace is measured, then one from it
  const compiling = seen.filter((p) => p.step === "compile");
  assert.ok(
    seen.filter((p) => p.step !== "compile" || p.done === 0).every((p) => p.remainingSeconds === undefined),
    "no estimate before a step of the compile is timed",
  );
  assert.ok(
    compiling.filter((p) => p.done > 0).every((p) => p.remainingSeconds !== undefined && p.remainingSeconds >= 0),
    "an estimate from the compile's pace",
  );
  assert.deepEqual(processesNaming(cache), [], "no process of the build is left");
  assert.deepEqual(await fs.readdir(cache), [], "no work folder and no runner are left in the cache");
});
