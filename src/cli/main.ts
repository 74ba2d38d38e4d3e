// bprof: the headless face of Benchmark Profiler. Same core as the extension.
import * as path from "node:path";
import { parseArgs } from "node:util";
import { loadProfile } from "../core/config/load";
import { makeTinyProject } from "../core/demo/tinyProject";
import { errorsOf, formatDiagnostic } from "../core/diagnostics";
import { RunnerError } from "../core/launch/local";
import { resolveRunnerPath } from "../core/launch/runner";
import { runProfile } from "../core/run";
import { progressView } from "./progress";

const USAGE = `usage: bprof <command> [options]

commands:
  validate <config.bprof.yaml>   check a config and everything it names
  run <config.bprof.yaml>        profile: score the benchmarks with bprof-runner
  demo [--dir DIR]               make the tiny demo project and run it

options:
  --runner PATH   bprof-runner executable (default: $BPROF_RUNNER, the source checkout's build, PATH)
  -h, --help      this text
`;

/** Exit codes shared with the runner: 0 ok, 1 failure, 2 bad input, 130 cancelled. */
const EXIT = { ok: 0, failed: 1, badInput: 2, cancelled: 130 } as const;

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { runner: { type: "string" }, dir: { type: "string" }, help: { type: "boolean", short: "h" } },
  });
  const [command, target] = positionals;
  if (values.help || !command) {
    process.stdout.write(USAGE);
    return values.help ? EXIT.ok : EXIT.badInput;
  }
  switch (command) {
    case "validate":
      return target ? validate(target) : usageError("validate needs a config file");
    case "run":
      return target ? run(target, values.runner) : usageError("run needs a config file");
    case "demo":
      return demo(values.dir ?? path.join(process.cwd(), ".bprof", "demo"), values.runner);
    default:
      return usageError(`unknown command \`${command}\``);
  }
}

function usageError(message: string): number {
  process.stderr.write(`bprof: ${message}\n${USAGE}`);
  return EXIT.badInput;
}

async function validate(configFile: string): Promise<number> {
  const { diagnostics } = await loadProfile(configFile);
  for (const d of diagnostics) process.stderr.write(formatDiagnostic(d) + "\n");
  if (errorsOf(diagnostics).length > 0) return EXIT.badInput;
  process.stdout.write(`${path.resolve(configFile)}: ok\n`);
  return EXIT.ok;
}

async function run(configFile: string, runner?: string): Promise<number> {
  const { profile, diagnostics } = await loadProfile(configFile, { forRun: true });
  for (const d of diagnostics) process.stderr.write(formatDiagnostic(d) + "\n");
  if (!profile) return EXIT.badInput;

  const view = progressView();
  const abort = new AbortController();
  const onSignal = () => abort.abort();
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    const outcome = await runProfile(profile, {
      runnerPath: resolveRunnerPath(runner, __dirname),
      onProgress: (p) => view.update(p),
      onWarning: (m) => process.stderr.write(`warning: ${m}\n`),
      signal: abort.signal,
    });
    view.done();
    for (const model of outcome.results.models) {
      for (const b of model.benchmarks) {
        process.stdout.write(`${model.name}  ${b.name}  acc ${b.acc.toFixed(4)}  acc_norm ${b.acc_norm.toFixed(4)}  chance ${b.chance.toFixed(4)}  (${b.items} items)\n`);
      }
    }
    process.stdout.write(`run ${outcome.runId}: ${outcome.resultsFile}\n`);
    return EXIT.ok;
  } catch (e) {
    view.done();
    if (e instanceof RunnerError) {
      process.stderr.write(`bprof: ${e.code}: ${e.message}\n`);
      return e.code === "cancelled" ? EXIT.cancelled : e.exitCode === 2 ? EXIT.badInput : EXIT.failed;
    }
    throw e;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

async function demo(dir: string, runner?: string): Promise<number> {
  const project = await makeTinyProject(path.resolve(dir));
  process.stdout.write(`demo project: ${project.root}\n`);
  return run(project.configPath, runner);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`bprof: internal error: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(EXIT.failed);
  },
);
