// Which bprof-runner a run uses on a host. In order: one the user named (--runner, BPROF_RUNNER,
// benchmarkProfiler.runnerPath here; target.*.runner on a host), a source checkout's own build
// (native-runner/build, for the project's developers), else the one built from the bundled
// sources on that host, built now when there is none for this version yet.
import { existsSync, promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { hostName, type Host } from "../base/host";
import { RunnerError } from "../base/runnerError";
import { expectedBuildLength, obtainRunner, type BuildRequest } from "./build";
import { runnerSources, type RunnerSources } from "./sources";

/** How to get the runner, on this machine or on a target's host. */
export interface RunnerSpec {
  /** A runner the user named for this machine: used as it is. */
  path?: string;
  /** The runner's sources that came with bprof (native-runner/ next to the bundle). */
  sourcesDir: string;
  /** This machine's build cache. */
  cacheDir: string;
  python?: string;
  torchPrefix?: string;
  /** A build's progress and output. */
  onBuild?: Pick<BuildRequest, "onOutput" | "onProgress" | "onBuildStart">;
}

/** The spec, saying through `onStatus` when a build starts on a host and how long it should take. */
export function announcingBuilds(spec: RunnerSpec, onStatus: ((message: string) => void) | undefined, host: Host): RunnerSpec {
  if (!onStatus) return spec;
  return {
    ...spec,
    onBuild: {
      ...spec.onBuild,
      onBuildStart: (facts) => {
        onStatus(`building bprof-runner on ${hostName(host)} from the bundled sources, once for this version${expectedBuildLength(facts)}`);
        spec.onBuild?.onBuildStart?.(facts);
      },
    },
  };
}

/** The CLI's cache: $XDG_CACHE_HOME/bprof/runner, else ~/.cache/bprof/runner. */
export function defaultCacheDir(): string {
  return path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache"), "bprof", "runner");
}

/** A source checkout's build of the runner, when these sources have one. */
export function checkoutRunner(sourcesDir: string): string | undefined {
  const built = path.join(sourcesDir, "build", "bprof-runner");
  return existsSync(built) ? built : undefined;
}

/**
 * The runner `npm run setup` built in a source checkout (`checkout`/native-runner/build), when it
 * is a build of `bundled`: the checkout's runner sources are the same bytes, and none of them
 * changed after the build. An installed extension then runs it instead of building its own copy.
 */
export async function checkoutBuildOf(checkout: string, bundled: RunnerSources): Promise<string | undefined> {
  const dir = path.join(checkout, "native-runner");
  const built = path.join(dir, "build", "bprof-runner");
  const builtAt = await fs.stat(built).catch(() => undefined);
  if (!builtAt?.isFile()) return undefined;
  const sources = await runnerSources(dir);
  if (!sources || sources.hash !== bundled.hash) return undefined;
  const changed = await Promise.all(sources.files.map((f) => fs.stat(path.join(dir, f)).then((s) => s.mtimeMs)));
  return changed.every((t) => t <= builtAt.mtimeMs) ? built : undefined;
}

/** The runner on `host` (this machine unless an SSH host): named, a checkout's, cached, or built now. */
export async function runnerOn(host: Host, spec: RunnerSpec, signal?: AbortSignal): Promise<string> {
  if (host.kind === "local") {
    const named = spec.path ?? checkoutRunner(spec.sourcesDir);
    if (named) return named;
  }
  const sources = await runnerSources(spec.sourcesDir);
  if (!sources) {
    throw new RunnerError(
      "runner_not_found",
      `the runner's sources are not at ${spec.sourcesDir} (a broken install): reinstall Benchmark Profiler, or name a runner you built (benchmarkProfiler.runnerPath, BPROF_RUNNER, --runner)`,
    );
  }
  const request: BuildRequest = {
    host,
    sources,
    cacheDir: spec.cacheDir,
    ...onThisMachine(host, spec),
    ...(signal ? { signal } : {}),
    ...spec.onBuild,
  };
  return (await obtainRunner(request)).runner;
}

/** The Python and libtorch the user chose name paths on this machine: another host uses its own. */
export function onThisMachine(host: Host, spec: RunnerSpec): Pick<BuildRequest, "python" | "torchPrefix"> {
  if (host.kind !== "local") return {};
  return { ...(spec.python ? { python: spec.python } : {}), ...(spec.torchPrefix ? { torchPrefix: spec.torchPrefix } : {}) };
}
