// bprof: the headless face of Benchmark Profiler. Same core as the extension.
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { parseArgs } from "node:util";
import { directInputs, loadProfile } from "../core/config/load";
import { onPythonImports } from "../core/lmeval/helpers";
import { errorsOf, formatProblem } from "../core/base/problems";
import { RunnerError } from "../core/base/runnerError";
import { checkTarget } from "../core/launch/check";
import { usableCores } from "../core/launch/cores";
import { describeTarget, namedRunnerOf } from "../core/config/target";
import { JobCompileError } from "../core/plan/job";
import { isDirectory, isFile, writeFileAtomic } from "../core/base/fsutil";
import { ConfinedFolder, UnsafeFolderError } from "../core/base/confinedFolder";
import { isReportFormat, renderReport, REPORT_EXTENSIONS, REPORT_FORMATS } from "../core/report";
import { loadRun, ReportInputError } from "../core/report/load";
import { pairsCostLine } from "../core/config/pairs";
import { rankingRuleCount } from "../core/config/abilities";
import { compareProfiles, type ProfileRef } from "../core/report/compare";
import { COMPARE_FORMATS, isCompareFormat, renderComparison } from "../core/report/compareFormats";
import { buildReport } from "../core/report/model";
import { newestPace, resolveRunDir } from "../core/results/runs";
import { devicePlanLines, jobProblems, shardSplitLines } from "../core/plan/compile";
import { ResumeError, resumeRun, runProfile, type RunOptions, type RunOutcome } from "../core/run/runProfile";
import { newestBaselines } from "../core/run/baselines";
import { powerLines } from "../core/config/power";
import { formatAisTables, formatBaseline, formatRunSummary, wrapLine } from "./aisTable";
import { DEMO_USAGE, prepareDemo } from "./demo";
import { generateCommand, GENERATE_USAGE } from "./generate";
import { reviewCommand, REVIEW_USAGE } from "./review";
import { convertCommand, CONVERT_USAGE } from "./convert";
import { draftCommand, DRAFT_USAGE } from "./draft";
import { progressView } from "./progress";
import { guardTerminalOutput } from "./terminal";
import { runnerCommand, runnerSpec, RUNNER_USAGE } from "./runner";

const USAGE = `usage: bprof <command> [options]

commands:
  validate <config.bprof.yaml>   check a config and everything it names, and say the smallest
                                 AIS each benchmark detects; for an ssh or slurm target also the
                                 host, its bprof-runner, the model folders there and sbatch
                                 --test-only
    --no-target                  only what this machine can check
    --no-task-python             do not run the tasks' Python (their !function helpers, filters
                                 and scorers): a task that has some is an error instead
  run <config.bprof.yaml>        profile: score the benchmarks with bprof-runner and, when the
                                 config has abilities, ablate them and report AIS
    --confirm-run-unsafe-code    let tasks with "unsafe_code: true" (humaneval) run the code
                                 the model generates to score it (as lm-eval's flag)
  run --resume <run-dir-or-id> [config.bprof.yaml]
                                 finish an interrupted run in its folder (an id is looked up in
                                 the config's output folder, else in ./.bprof/runs)
  report <run-dir-or-id> [config.bprof.yaml]
                                 a finished run as a report (an id is looked up as for --resume):
    --format F                   html (default: one self-contained page with the AIS heatmaps),
                                 md, csv, json or latex (a booktabs table for one k)
    --out FILE                   where to write it (default: report.<ext> in the run folder; - for stdout)
    --metric M                   html, md, latex: acc or acc_norm for multiple-choice benchmarks (acc by
                                 default; generate_until benchmarks always show exact_match);
                                 csv, json: only acc, acc_norm or exact_match (default: all)
    --k K                        only this k of the sweep (latex: the largest by default)
  compare <run-a>[:model] <run-b>[:model]
                                 two profiles side by side (two models of one run, or two runs):
                                 AIS(A) - AIS(B) per ability and benchmark with a bootstrap
                                 interval, the rank correlation per benchmark, cells of opposite sign
    --format F                   md (default), html (the difference heatmap in one page), csv, json
                                 or latex (a booktabs table)
    --out FILE                   where to write it (default: stdout)
    --k K, --metric M            the k compared (default the largest both ran); acc or acc_norm
${GENERATE_USAGE}${DRAFT_USAGE}${CONVERT_USAGE}${REVIEW_USAGE}${DEMO_USAGE}${RUNNER_USAGE}
options:
  --runner PATH   bprof-runner executable (default: $BPROF_RUNNER, the source checkout's build,
                  else the one built from the bundled sources, built on first use)
  -h, --help      this text
`;

/** Exit codes shared with the runner: 0 ok, 1 failure, 2 bad input, 130 cancelled. */
const EXIT = { ok: 0, failed: 1, badInput: 2, cancelled: 130 } as const;

async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        runner: { type: "string" },
        dir: { type: "string" },
        resume: { type: "string" },
        help: { type: "boolean", short: "h" },
        format: { type: "string" },
        out: { type: "string" },
        metric: { type: "string" },
        k: { type: "string" },
        ability: { type: "string" },
        n: { type: "string" },
        seed: { type: "string" },
        review: { type: "string" },
        model: { type: "string" },
        shots: { type: "string" },
        "max-tokens": { type: "string" },
        examples: { type: "string" },
        "no-target": { type: "boolean" },
        "no-task-python": { type: "boolean" },
        "confirm-run-unsafe-code": { type: "boolean" },
      },
    });
  } catch (e) {
    return usageError((e as Error).message);
  }
  const { values, positionals } = parsed;
  const [command, target] = positionals;
  if (values.help || !command) {
    process.stdout.write(USAGE);
    return values.help ? EXIT.ok : EXIT.badInput;
  }
  switch (command) {
    case "validate":
      return target
        ? validate(target, values.runner, !values["no-target"], !values["no-task-python"])
        : usageError("validate needs a config file");
    case "run":
      if (values.resume !== undefined) return resume(values.resume, target, values.runner, values["confirm-run-unsafe-code"]);
      return target ? run(target, values.runner, values["confirm-run-unsafe-code"]) : usageError("run needs a config file");
    case "report":
      return target ? report(target, positionals[2], values) : usageError("report needs a run folder or a run id");
    case "compare":
      return target && positionals[2] && positionals.length === 3
        ? compare(target, positionals[2], values)
        : usageError("compare needs two profiles: <run-a>[:model] <run-b>[:model]");
    case "generate":
      if (target) return usageError("generate takes no file argument (use --out)");
      return values.model !== undefined ? draftCommand({ ...values, model: values.model }) : generateCommand(values);
    case "convert":
      return target && positionals.length === 2 ? convertCommand(target, values.out) : usageError("convert needs one file of items");
    case "review":
      return reviewCommand(positionals.slice(1), values);
    case "demo":
      return demo(values.dir ?? path.join(process.cwd(), ".bprof", "demo"), values.runner);
    case "runner":
      return positionals.length > 2 ? usageError("runner takes one action: where or build") : runnerCommand(target, values.runner);
    default:
      return usageError(`unknown command \`${command}\``);
  }
}

function usageError(message: string): number {
  process.stderr.write(`bprof: ${message}\n${USAGE}`);
  return EXIT.badInput;
}

/**
 * The config and what it names; then, for a remote target, what only the target can say. Checking
 * a task imports its Python (lm-eval would only when it evaluates), so validate says which files
 * ran, and `--no-task-python` refuses them.
 */
async function validate(configFile: string, runner: string | undefined, askTarget: boolean, taskPython: boolean): Promise<number> {
  const imported = new Set<string>();
  const stop = onPythonImports((files) => files.forEach((f) => imported.add(f)));
  const inputs = { ...directInputs(), helpers: taskPython ? ("run" as const) : ("never" as const) };
  // the newest finished run's baselines, for each benchmark's power (before a run they are assumed)
  const baselines = await newestBaselines(configFile);
  const { profile, problems, power } = await loadProfile(configFile, { inputs, ...(baselines ? { baselines } : {}) }).finally(stop);
  // What only the jobs can say (a document or item past the model's window) is asked once the rest is fine.
  if (profile && errorsOf(problems).length === 0) problems.push(...(await jobProblems(profile)));
  for (const d of problems) process.stderr.write(formatProblem(d) + "\n");
  if (imported.size > 0) process.stderr.write(ranPythonLine([...imported]) + "\n");
  if (!profile || errorsOf(problems).length > 0) return EXIT.badInput;
  process.stdout.write(`${path.resolve(configFile)}: ok\n`);
  for (const line of powerLines(power ?? [])) process.stdout.write(line + "\n");
  for (const line of await devicePlanLines(profile)) process.stdout.write(line + "\n");
  for (const line of await shardSplitLines(profile, await usableCores(), (model) => newestPace(profile.configFile, model)))
    process.stdout.write(line + "\n");
  if (profile.ablation?.pairs?.length) {
    const items = profile.benchmarks.reduce((n, b) => n + b.task.items.length, 0);
    const rules = rankingRuleCount(profile.ablation);
    process.stdout.write(pairsCostLine(profile.ablation.pairs, profile.ablation.k.length, items, rules) + "\n");
  }
  if (!askTarget || profile.target.kind === "local") return EXIT.ok;
  process.stdout.write(`target: ${describeTarget(profile.target)}\n`);
  const checks = await checkTarget(profile.target, profile.models, runnerSpec(runner));
  for (const check of checks) (check.ok ? process.stdout : process.stderr).write(`  ${check.ok ? "ok" : "error"}: ${check.message}\n`);
  return checks.every((c) => c.ok) ? EXIT.ok : EXIT.failed;
}

async function run(configFile: string, runner?: string, confirmUnsafeCode = false): Promise<number> {
  const baselines = await newestBaselines(configFile);
  const { profile, problems } = await loadProfile(configFile, baselines ? { baselines } : {});
  for (const d of problems) process.stderr.write(formatProblem(d) + "\n");
  if (!profile) return EXIT.badInput;
  if (profile.target.kind !== "local") process.stderr.write(`target: ${describeTarget(profile.target)}\n`);
  const named = namedRunnerOf(profile.target);
  // run because the user asked to run this config; said, since validate never runs it
  if (named)
    process.stderr.write(`note: the config's runner runs on ${named.host}: ${named.runner} (${named.field}), not one bprof built\n`);
  return withRunner(runner, (options) => runProfile(profile, { ...options, confirmUnsafeCode }));
}

async function resume(ref: string, configFile: string | undefined, runner?: string, confirmUnsafeCode = false): Promise<number> {
  const runDir = await resolveRunDir(ref, configFile);
  if (!runDir) {
    process.stderr.write(
      `bprof: no run folder \`${ref}\`${configFile ? ` in the output folder of ${configFile}` : " (give a run folder, or the config whose runs hold it)"}\n`,
    );
    return EXIT.badInput;
  }
  process.stderr.write(`resuming ${runDir}\n`);
  return withRunner(runner, (options) => resumeRun(runDir, { ...options, confirmUnsafeCode }));
}

/** What validate says when checking the tasks ran their Python: from which files (`--no-task-python` refuses them). */
function ranPythonLine(files: readonly string[]): string {
  const shown = files.map((f) => path.relative(process.cwd(), f) || f).sort();
  return `note: checking the tasks ran their Python (${shown.join(", ")}); --no-task-python refuses it`;
}

/** A report that could not be written (a folder without permission, a full disk): what and where, exit 1. */
function failedWrite(e: unknown): number {
  const error = e as NodeJS.ErrnoException;
  if (typeof error?.code !== "string" || typeof error.path !== "string") throw e;
  process.stderr.write(`bprof: cannot write ${error.path}: ${error.message}\n`);
  return EXIT.failed;
}

/** One line on stderr and the bad-input exit code: how `report` refuses what it cannot use. */
function badInput(message: string): number {
  process.stderr.write(`bprof: ${message}\n`);
  return EXIT.badInput;
}

async function report(
  ref: string,
  configFile: string | undefined,
  options: { format?: string; out?: string; metric?: string; k?: string },
): Promise<number> {
  const format = options.format ?? "html";
  if (!isReportFormat(format)) return badInput(`unknown report format \`${format}\` (formats: ${REPORT_FORMATS.join(", ")})`);
  const metric = options.metric;
  if (metric !== undefined && metric !== "acc" && metric !== "acc_norm" && metric !== "exact_match") {
    return badInput(`unknown metric \`${metric}\` (metrics: acc, acc_norm, exact_match)`);
  }
  let k: number | undefined;
  if (options.k !== undefined) {
    k = Number(options.k);
    if (options.k.trim() === "" || !Number.isFinite(k) || k <= 0 || k >= 1)
      return badInput(`--k must be a number in (0, 1), one of the run's k values; got \`${options.k}\``);
  }
  const target = (await isFile(ref)) ? path.resolve(ref) : await resolveRunDir(ref, configFile);
  if (!target) {
    return badInput(
      `no run folder \`${ref}\`${configFile ? ` in the output folder of ${configFile}` : " (give a run folder, its results.json, or a run id under ./.bprof/runs)"}`,
    );
  }
  let script: string | undefined;
  if (format === "html") {
    const bundle = path.join(__dirname, "report.js");
    script = await fs.readFile(bundle, "utf8").catch(() => undefined);
    if (script === undefined) {
      process.stderr.write(`bprof: the HTML report's script ${bundle} is missing; build it with \`npm run build\`\n`);
      return EXIT.failed;
    }
  }
  try {
    const run = await loadRun(target);
    const rendered = await renderReport(run, {
      format,
      ...(metric ? { metric } : {}),
      ...(k !== undefined ? { k } : {}),
      ...(script !== undefined ? { script } : {}),
    });
    for (const warning of rendered.warnings) process.stderr.write(`warning: ${warning}\n`);
    if (options.out === "-") {
      process.stdout.write(rendered.text);
      return EXIT.ok;
    }
    const name = `report.${REPORT_EXTENSIONS[format]}`;
    let out = path.resolve(options.out ?? path.join(run.dir, name));
    if (await isDirectory(out)) out = path.join(out, name);
    // the run folder may have come with a repository: its report is written inside it, never through a link
    if (options.out === undefined) await (await ConfinedFolder.at(run.dir, "the run folder")).writeFile(name, rendered.text);
    else await writeFileAtomic(out, rendered.text);
    process.stdout.write(`${out}\n`);
    return EXIT.ok;
  } catch (e) {
    if (e instanceof ReportInputError || e instanceof UnsafeFolderError) return badInput(e.message);
    return failedWrite(e);
  }
}

async function compare(
  refA: string,
  refB: string,
  options: { format?: string; out?: string; metric?: string; k?: string },
): Promise<number> {
  const format = options.format ?? "md";
  if (!isCompareFormat(format)) return badInput(`unknown comparison format \`${format}\` (formats: ${COMPARE_FORMATS.join(", ")})`);
  const metric = options.metric;
  if (metric !== undefined && metric !== "acc" && metric !== "acc_norm")
    return badInput(`unknown metric \`${metric}\` (compare: acc or acc_norm)`);
  const k = options.k === undefined ? undefined : Number(options.k);
  if (k !== undefined && (options.k!.trim() === "" || !Number.isFinite(k) || k <= 0 || k >= 1)) {
    return badInput(`--k must be a number in (0, 1), one of the runs' k values; got \`${options.k}\``);
  }
  try {
    const a = await profileRef(refA);
    const b = await profileRef(refB);
    if (typeof a === "string") return badInput(a);
    if (typeof b === "string") return badInput(b);
    let script: string | undefined;
    if (format === "html") {
      const bundle = path.join(__dirname, "report.js");
      script = await fs.readFile(bundle, "utf8").catch(() => undefined);
      if (script === undefined) {
        process.stderr.write(`bprof: the HTML comparison's script ${bundle} is missing; build it with \`npm run build\`\n`);
        return EXIT.failed;
      }
    }
    const comparison = await compareProfiles(a, b, { ...(k !== undefined ? { k } : {}), ...(metric ? { metric } : {}) });
    const text = renderComparison(comparison, format, script !== undefined ? { script } : {});
    if (options.out === undefined || options.out === "-") {
      process.stdout.write(text);
      return EXIT.ok;
    }
    const out = path.resolve(options.out);
    await writeFileAtomic(out, text);
    process.stdout.write(`${out}\n`);
    return EXIT.ok;
  } catch (e) {
    if (e instanceof ReportInputError || e instanceof UnsafeFolderError) return badInput(e.message);
    return failedWrite(e);
  }
}

/** `run[:model]`: a run folder, its results.json or a run id, and optionally one of its models; a string says what is wrong. */
async function profileRef(ref: string): Promise<ProfileRef | string> {
  const whole = await runTarget(ref);
  if (whole) return { run: await loadRun(whole) };
  const colon = ref.lastIndexOf(":");
  const target = colon > 0 ? await runTarget(ref.slice(0, colon)) : undefined;
  if (!target)
    return `no run folder \`${ref}\` (give a run folder, its results.json or a run id under ./.bprof/runs, then :model to pick a model)`;
  return { run: await loadRun(target), model: ref.slice(colon + 1) };
}

async function runTarget(ref: string): Promise<string | undefined> {
  return (await isFile(ref)) ? path.resolve(ref) : await resolveRunDir(ref, undefined);
}

async function withRunner(runner: string | undefined, start: (options: RunOptions) => Promise<RunOutcome>): Promise<number> {
  const view = progressView();
  let runDir: string | undefined;
  const abort = new AbortController();
  // `on`, not `once`: execa's exit hook re-raises a signal nobody else listens to, which would kill
  // this process before the runner has stopped. A second Ctrl-C quits at once.
  const onSignal = () => {
    if (abort.signal.aborted) process.exit(EXIT.cancelled);
    view.interrupt();
    process.stderr.write("stopping the run at the next item (Ctrl-C again to quit now)\n");
    abort.abort();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  try {
    const outcome = await start({
      runner: runnerSpec(runner, view),
      onProgress: (p) => view.update(p),
      onVariant: (v) => view.variant(v),
      onWarning: (m) => {
        view.interrupt();
        process.stderr.write(`warning: ${m}\n`);
      },
      onStatus: (message, model) => {
        view.interrupt();
        process.stderr.write(`${model}: ${message}\n`);
      },
      onRunFolder: (dir) => {
        runDir = dir;
      },
      signal: abort.signal,
    });
    view.done();
    // The report model `bprof report` renders, so the tables say what the reports say.
    const built = await buildReport({ dir: outcome.runDir, resultsFile: outcome.resultsFile, results: outcome.results });
    // On a terminal every line fits it; piped output keeps the full tables.
    const width = process.stdout.isTTY ? process.stdout.columns : undefined;
    const fit = (line: string) => (width === undefined ? [line] : wrapLine(line, width));
    for (const model of built.models) {
      for (const b of model.baseline) process.stdout.write(fit(`${model.name}  ${formatBaseline(b)}`).join("\n") + "\n");
    }
    for (const model of built.models) {
      const tables = formatAisTables(model, width);
      if (tables) process.stdout.write(`\n${tables}`);
    }
    const summary = built.models.flatMap((model) => formatRunSummary(model, width));
    if (summary.length > 0) process.stdout.write(`\n${summary.join("\n")}\n\n`);
    process.stdout.write(fit(`run ${outcome.runId}: ${outcome.resultsFile}`).join("\n") + "\n");
    // The report, with every interval, is what the run names last.
    process.stdout.write("HTML report: ");
    await report(outcome.runDir, undefined, {});
    return EXIT.ok;
  } catch (e) {
    view.done();
    if (e instanceof RunnerError) {
      process.stderr.write(`bprof: ${e.code}: ${e.message}\n`);
      if (runDir && e.resumable) process.stderr.write(`resume with: bprof run --resume ${runDir}\n`);
      return e.code === "cancelled" ? EXIT.cancelled : e.exitCode === 2 ? EXIT.badInput : EXIT.failed;
    }
    if (e instanceof JobCompileError) {
      process.stderr.write(`${e.message}\n`);
      return EXIT.badInput;
    }
    if (e instanceof ResumeError) {
      process.stderr.write(`bprof: ${e.message}\n`);
      return EXIT.badInput;
    }
    throw e;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

/** The built-in demo: copy the workspace, profile it, then write the HTML report of the run. */
async function demo(dir: string, runner?: string): Promise<number> {
  let configFile: string;
  try {
    configFile = await prepareDemo(__dirname, dir);
  } catch (e) {
    process.stderr.write(`bprof demo: ${(e as Error).message}\n`);
    return EXIT.failed;
  }
  process.stdout.write(`demo workspace: ${path.dirname(configFile)}\n`);
  const baselines = await newestBaselines(configFile);
  const { profile, problems } = await loadProfile(configFile, baselines ? { baselines } : {});
  for (const d of problems) process.stderr.write(formatProblem(d) + "\n");
  if (!profile) return EXIT.badInput;
  return withRunner(runner, (options) => runProfile(profile, options));
}

// What the CLI prints holds what files hold (names, messages, reports): no control character of theirs reaches the terminal.
guardTerminalOutput();
main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`bprof: internal error: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(EXIT.failed);
  },
);
