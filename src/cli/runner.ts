// `bprof runner where` and `bprof runner build`: which bprof-runner this machine uses, and building
// it from the sources that came with bprof before a run needs it.
import { LOCAL_HOST } from "../core/base/host";
import { RunnerError } from "../core/base/runnerError";
import { buildFactsOn, expectedBuildLength, obtainRunner } from "../core/runner/build";
import { installCommands, type BuildFacts } from "../core/runner/facts";
import { checkoutRunner, defaultCacheDir, type RunnerSpec } from "../core/runner/locate";
import { bundledSourcesDir, runnerSources } from "../core/runner/sources";
import { progressView, type ProgressView } from "./progress";

export const RUNNER_USAGE = `  runner where                   which bprof-runner runs on this machine; what building one from
                                 the bundled sources needs, what is found and what is missing
  runner build                   build it now (into ~/.cache/bprof/runner), unless it is built
`;

/** The runner as the CLI finds it: --runner, $BPROF_RUNNER, else built here from the sources next to the bundle. */
export function runnerSpec(flag: string | undefined, view?: ProgressView): RunnerSpec {
  const named = flag ?? process.env.BPROF_RUNNER;
  return {
    ...(named ? { path: named } : {}),
    sourcesDir: bundledSourcesDir(__dirname),
    cacheDir: defaultCacheDir(),
    ...(view ? { onBuild: { onProgress: (p) => view.build(p) } } : {}),
  };
}

export async function runnerCommand(action: string | undefined, flag: string | undefined): Promise<number> {
  if (action === "where") return where(flag);
  if (action === "build") return build(flag);
  process.stderr.write(`bprof: runner needs \`where\` or \`build\`${action ? `, not \`${action}\`` : ""}\n${RUNNER_USAGE}`);
  return 2;
}

async function where(flag: string | undefined): Promise<number> {
  const spec = runnerSpec(flag);
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const named = spec.path ? `${spec.path} (named by ${flag ? "--runner" : "BPROF_RUNNER"})` : undefined;
  const checkout = checkoutRunner(spec.sourcesDir);
  const sources = await runnerSources(spec.sourcesDir);
  if (!sources) {
    out(`runner: ${named ?? checkout ?? "none"}`);
    process.stderr.write(`bprof: the runner's sources are not at ${spec.sourcesDir}: reinstall bprof\n`);
    return named || checkout ? 0 : 1;
  }
  const facts = await buildFactsOn({ host: LOCAL_HOST, sources, cacheDir: spec.cacheDir });
  const built = facts.cached ? `${facts.cached} (built for this version)` : undefined;
  const buildable = facts.missing.length === 0;
  out(
    `runner: ${named ?? (checkout ? `${checkout} (the source checkout's build)` : undefined) ?? built ?? (buildable ? `none built yet; the first run builds it${expectedBuildLength(facts)}, or \`bprof runner build\`` : "none, and it cannot be built here (below)")}`,
  );
  out(`sources: ${sources.dir} (sha256 ${sources.hash.slice(0, 12)})`);
  for (const line of factLines(facts)) out(line);
  if (!buildable) {
    out("install with:");
    for (const command of installCommands(facts)) out(`  ${command}`);
  }
  return named || checkout || facts.cached || buildable ? 0 : 1;
}

function factLines(facts: BuildFacts): string[] {
  const torch = facts.torch
    ? `${facts.torch.version}${facts.torch.cuda ? " (CUDA)" : ""} at ${facts.torch.dir}, from ${facts.torch.from}`
    : "not found";
  return [
    `cache: ${facts.cache} (key ${facts.key})`,
    `cmake: ${facts.cmake ?? "not found"}`,
    `c++: ${facts.cxx ?? "not found"}`,
    `build tool: ${facts.generator ?? "not found"}, ${facts.jobs} jobs`,
    `libtorch: ${torch}`,
    `nlohmann-json: ${facts.json ?? "not found"}`,
    ...(facts.missing.length > 0 ? [`missing: ${facts.missing.join(", ")}`] : []),
  ];
}

async function build(flag: string | undefined): Promise<number> {
  const view = progressView();
  const spec = runnerSpec(flag, view);
  const sources = await runnerSources(spec.sourcesDir);
  if (!sources) {
    process.stderr.write(`bprof: the runner's sources are not at ${spec.sourcesDir}: reinstall bprof\n`);
    return 1;
  }
  const abort = new AbortController();
  const onSignal = () => abort.abort();
  process.on("SIGINT", onSignal);
  try {
    const obtained = await obtainRunner({
      host: LOCAL_HOST,
      sources,
      cacheDir: spec.cacheDir,
      signal: abort.signal,
      onBuildStart: (facts) =>
        process.stderr.write(`building bprof-runner against libtorch ${facts.torch?.version ?? ""}${expectedBuildLength(facts)}\n`),
      onProgress: (p) => view.build(p),
    });
    view.done();
    process.stderr.write(obtained.built ? `built in ${obtained.built.seconds} s\n` : "already built for this version\n");
    process.stdout.write(`${obtained.runner}\n`);
    return 0;
  } catch (e) {
    view.done();
    if (!(e instanceof RunnerError)) throw e;
    process.stderr.write(`bprof: ${e.code}: ${e.message}\n`);
    return e.code === "cancelled" ? 130 : 1;
  } finally {
    process.off("SIGINT", onSignal);
  }
}
