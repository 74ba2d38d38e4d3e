// Building bprof-runner on the host that runs it: build-runner.sh, sent to the host as it is,
// finds cmake, a compiler and a libtorch there and builds the bundled sources into a cache keyed
// by sources, libtorch and compiler. A later run on the same host finds the runner at once.
// Over SSH the sources go to the host first (once per version, as a tar stream).
import { execa } from "execa";
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { hostCommand, hostName, runOnHost, shellWord, type Host } from "../base/host";
import { RunnerError } from "../base/runnerError";
import { buildEnd, buildFacts, factLines, missingMessage, type BuildFacts } from "./facts";
import { BUILD_SCRIPT, type RunnerSources } from "./sources";
import { formatDuration } from "../plan/estimate";

export type BuildStep = "configure" | "compile" | "check";

export interface BuildProgress {
  step: BuildStep;
  /** Build steps of the compile (ninja's or make's count); 0 before it starts. */
  done: number;
  total: number;
  elapsedSeconds: number;
  /**
   * The time left, from what was measured on this host: the compile's own pace once a step of it is
   * done, before that the host's last build; undefined when neither is known (no guess is made).
   */
  remainingSeconds?: number;
}

export interface BuildRequest {
  host: Host;
  sources: RunnerSources;
  /** The cache on this machine; a remote host keeps its own (~/.cache/bprof/runner there). */
  cacheDir?: string;
  /** The Python whose PyTorch to build against first (default python3). */
  python?: string;
  /** A libtorch named by the user (its CMake prefix), instead of looking for one. */
  torchPrefix?: string;
  signal?: AbortSignal;
  /** Every line the build prints (configure, compile, check). */
  onOutput?: (line: string) => void;
  onProgress?: (progress: BuildProgress) => void;
  /** Called once a build is needed, before it starts. */
  onBuildStart?: (facts: BuildFacts) => void;
}

export interface ObtainedRunner {
  runner: string;
  facts: BuildFacts;
  /** Set when this call built it. */
  built?: { seconds: number };
}

/** What the host has for a build, and the runner already built there for these sources, if any. */
export async function buildFactsOn(request: BuildRequest): Promise<BuildFacts> {
  const script = await scriptFor(request, "where");
  const result = await runOnHost(request.host, script, { what: "look for what building bprof-runner needs" });
  const facts = buildFacts(factLines(result.stdout));
  if (!facts) {
    throw new RunnerError(
      "target_failed",
      `could not ask ${hostName(request.host)} what building bprof-runner needs (exit ${result.exitCode}): ${result.stderr.trim().split("\n").slice(-2).join(" ") || "no answer"}`,
    );
  }
  return facts;
}

/** The runner for these sources on the host: the cached one, else one built now. */
export async function obtainRunner(request: BuildRequest): Promise<ObtainedRunner> {
  const facts = await buildFactsOn(request);
  if (facts.cached) return { runner: facts.cached, facts };
  if (facts.missing.length > 0) throw new RunnerError("runner_build_needs", missingMessage(facts, hostName(request.host), request.python));
  request.onBuildStart?.(facts);
  const sourcesDir = request.host.kind === "local" ? request.sources.dir : await sourcesOnHost(request.host, request.sources, facts.cache);
  return build(request, facts, sourcesDir);
}

/**
 * How long a build should take, as a clause: " (about 6 min 16 s, as the last build here)" when the
 * host has built the runner before, else "": a guess from the cores was off by a factor of eight.
 */
export function expectedBuildLength(facts: BuildFacts): string {
  return facts.lastSeconds === undefined ? "" : ` (about ${formatDuration(facts.lastSeconds)}, as the last build here)`;
}

/** "compile 12/22 · about 3 min 10 s left", "configure": a build's step, its count, and the time left when measured. */
export function buildProgressText(p: BuildProgress): string {
  const steps = p.total > 0 ? ` ${p.done}/${p.total}` : "";
  const left = p.remainingSeconds === undefined ? "" : ` · about ${formatDuration(p.remainingSeconds)} left`;
  return `${p.step}${steps}${left}`;
}

/** The time left of a build `elapsed` seconds in: at the compile's pace (`compile` from its first step), else after the last build's length. */
export function buildSecondsLeft(
  elapsed: number,
  compile: { done: number; total: number; seconds: number } | undefined,
  lastSeconds: number | undefined,
): number | undefined {
  if (compile && compile.done > 0 && compile.total > 0) return (compile.seconds / compile.done) * (compile.total - compile.done);
  return lastSeconds === undefined ? undefined : Math.max(0, lastSeconds - elapsed);
}

async function scriptFor(request: BuildRequest, mode: "where" | "build", sourcesDir?: string): Promise<string> {
  const script = await fs.readFile(path.join(request.sources.dir, BUILD_SCRIPT), "utf8");
  const env: Record<string, string | undefined> = {
    BPROF_SOURCES: sourcesDir,
    BPROF_SOURCES_HASH: request.sources.hash,
    BPROF_RUNNER_CACHE: request.host.kind === "local" ? request.cacheDir : undefined,
    BPROF_PYTHON: request.python,
    BPROF_TORCH_PREFIX: request.torchPrefix,
  };
  const assignments = Object.entries(env)
    .filter(([, v]) => v !== undefined && v !== "")
    .map(([k, v]) => `${k}=${shellWord(v!)}; export ${k}`);
  return [`set -- ${mode}`, ...assignments, script].join("\n");
}

async function build(request: BuildRequest, facts: BuildFacts, sourcesDir: string): Promise<ObtainedRunner> {
  const where = hostName(request.host);
  const { file, args } = hostCommand(request.host, await scriptFor(request, "build", sourcesDir));
  const started = Date.now();
  let compileStarted: number | undefined;
  // Its own process group here, so that a cancel reaches cmake, ninja and the compilers too.
  const child = execa(file, args, {
    reject: false,
    stdin: "ignore",
    detached: request.host.kind === "local",
    buffer: { stdout: true, stderr: true },
  });
  let step: BuildStep = "configure";
  let work: string | undefined;
  const output: string[] = [];
  const progress = (done: number, total: number) => {
    const now = Date.now();
    if (step === "compile") compileStarted ??= now;
    const compile = compileStarted === undefined ? undefined : { done, total, seconds: (now - compileStarted) / 1000 };
    const elapsedSeconds = (now - started) / 1000;
    const remainingSeconds = buildSecondsLeft(elapsedSeconds, step === "compile" ? compile : undefined, facts.lastSeconds);
    request.onProgress?.({ step, done, total, elapsedSeconds, ...(remainingSeconds !== undefined ? { remainingSeconds } : {}) });
  };
  let pending = "";
  child.stdout!.setEncoding("utf8");
  child.stdout!.on("data", (chunk: string) => {
    const lines = (pending + chunk).split("\n");
    pending = lines.pop()!;
    for (const line of lines) {
      const fact = /^@@bprof (\S+) (.*)$/.exec(line);
      if (fact?.[1] === "step") {
        step = fact[2] as BuildStep;
        progress(0, 0);
      } else if (fact?.[1] === "work") work = fact[2];
      if (fact) continue;
      output.push(line);
      request.onOutput?.(line);
      // ninja: "[12/26] Building CXX object ..."; make: "[ 42%] Building ...".
      const ninja = /^\[(\d+)\/(\d+)\]/.exec(line);
      const make = /^\[\s*(\d+)%\]/.exec(line);
      if (ninja) progress(Number(ninja[1]), Number(ninja[2]));
      else if (make) progress(Number(make[1]), 100);
    }
  });
  const onAbort = () => void stopBuild(request.host, child.pid, work);
  request.signal?.addEventListener("abort", onAbort, { once: true });
  const result = await child;
  request.signal?.removeEventListener("abort", onAbort);
  if (request.signal?.aborted) {
    if (request.host.kind === "local") await cleanedUpLocalBuild(child.pid, work);
    throw new RunnerError("cancelled", `the build of bprof-runner on ${where} was cancelled`);
  }
  const end = buildEnd(factLines(String(result.stdout ?? "")));
  if (end.runner) return { runner: end.runner, facts, ...(end.built ? { built: end.built } : {}) };
  if (end.failed) {
    const firstError = output.find((l) => /\berror\b|CMake Error/i.test(l))?.trim();
    throw new RunnerError(
      "runner_build_failed",
      `building bprof-runner on ${where} failed at its ${end.failed.step} step${firstError ? `: ${firstError}` : ""}. The whole log: ${end.failed.log}`,
    );
  }
  if (request.host.kind === "ssh" && result.exitCode === 255)
    throw new RunnerError("target_unreachable", `the connection to ${where} dropped while bprof-runner was being built there`);
  const said = String(result.stderr ?? "")
    .trim()
    .split("\n")
    .slice(-3)
    .join(" ");
  throw new RunnerError(
    "runner_build_failed",
    `building bprof-runner on ${where} stopped (exit ${result.exitCode})${said ? `: ${said}` : ""}`,
  );
}

/** Ends a build: its process group here; there, every process working in its folder, then the folder. */
async function stopBuild(host: Host, pid: number | undefined, work: string | undefined): Promise<void> {
  if (host.kind === "local") {
    signalGroup(pid, "SIGTERM");
    return;
  }
  if (work)
    await runOnHost(host, `pkill -TERM -f ${shellWord(work)}; sleep 1; rm -rf ${shellWord(work)}`, { what: "stop the build" }).catch(
      () => undefined,
    );
}

/** After a cancel here: once no compiler of the build is left (SIGKILL after 5 s), its folder goes. */
async function cleanedUpLocalBuild(pid: number | undefined, work: string | undefined): Promise<void> {
  for (let waited = 0; pid !== undefined && signalGroup(pid, waited >= 5000 ? "SIGKILL" : 0); waited += 100) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (work) await fs.rm(work, { recursive: true, force: true });
}

/** Whether the process group was still there to signal. */
function signalGroup(pid: number | undefined, signal: NodeJS.Signals | 0): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

/** The sources on the host, under its cache; copied there when this version's are not. */
export async function sourcesOnHost(host: Host, sources: RunnerSources, cache: string): Promise<string> {
  const root = `${cache}/sources`;
  const dir = `${root}/${sources.hash}`;
  const present = await runOnHost(host, `test -f ${shellWord(dir)}/${BUILD_SCRIPT}`, { what: "look for the runner's sources" });
  if (present.exitCode === 0) return dir;
  // Unpacked beside, then renamed: a copy cut short is never taken for the sources. Older versions' go.
  const unpack = [
    `tmp=${shellWord(dir)}.tmp-$$`,
    `mkdir -p "$tmp" && tar -xf - -C "$tmp" && { mv "$tmp" ${shellWord(dir)} 2>/dev/null || rm -rf "$tmp"; }`,
    `for d in ${shellWord(root)}/*; do [ "$d" = ${shellWord(dir)} ] || rm -rf "$d"; done`,
  ].join("\n");
  const { file, args } = hostCommand(host, unpack);
  const packed = execa("tar", ["-cf", "-", "-C", sources.dir, ...sources.files], { reject: false, stdin: "ignore", encoding: "buffer" });
  const received = await packed.pipe(file, args, { reject: false });
  const sent = await packed;
  if (sent.exitCode !== 0 || received.exitCode !== 0) {
    if (host.kind === "ssh" && received.exitCode === 255)
      throw new RunnerError(
        "target_unreachable",
        `the connection to ${hostName(host)} dropped while the runner's sources were copied there`,
      );
    const why =
      String(received.stderr ?? "").trim() || String(Buffer.from(sent.stderr ?? "")).trim() || `exit ${sent.exitCode}/${received.exitCode}`;
    throw new RunnerError("target_failed", `could not copy the runner's sources to ${hostName(host)}:${dir}: ${why}`);
  }
  return dir;
}
