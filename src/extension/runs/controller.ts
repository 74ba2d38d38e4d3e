// The runs this window starts: one per config at a time, each with a notification that shows its
// progress and can cancel it, and one status bar item for all of them. Starting, resuming and
// cancelling go through here; what a run does is the core's runProfile / resumeRun, and where a
// run stands afterwards is written in its folder (src/core/results/runs.ts), which the Runs tree
// reads, so runs of the CLI or of an earlier window show there too.
import * as path from "node:path";
import * as vscode from "vscode";
import { directInputs, loadProfile } from "../../core/config/load";
import { RunnerError } from "../../core/base/runnerError";
import { describeTarget, namedRunnerKey, namedRunnerOf, type Target } from "../../core/config/target";
import { errorsOf } from "../../core/base/problems";
import { progressText, runShare, type RunProgress } from "../../core/plan/progressText";
import { resumeRun, runProfile, runTargetKind, unsafeCodeBenchmarks, type RunOptions, type RunOutcome } from "../../core/run/runProfile";
import type { LoadedRun } from "../../core/report/load";
import { failureSummary, latestEventsFile } from "../../core/results/runs";
import { buildProgressText } from "../../core/runner/build";
import type { RunnerSpec } from "../../core/runner/locate";
import type { Log } from "../output";
import { trusted } from "../trust";
import type { Workspace } from "../workspace/workspace";
import type { Runner } from "./runner";

/** workspaceState: the runners configs name that the user allowed, by namedRunnerKey. */
const NAMED_RUNNERS_ALLOWED = "benchmarkProfiler.namedRunnersAllowed";

export interface ActiveRun {
  configFile: string;
  /** Known once the run folder exists. */
  runDir?: string;
  progress?: RunProgress;
  abort: AbortController;
}

/** What the runs need: the workspace (its task-Python answers, refreshed after a run), the runner, the log. */
export interface RunControllerNeeds {
  readonly workspace: Workspace;
  /** This workspace's memory: the runners a config names that the user allowed. */
  readonly state: vscode.Memento;
  readonly runner: Runner;
  readonly output: vscode.OutputChannel;
  readonly log: Log;
}

export class RunController implements vscode.Disposable {
  private readonly active = new Map<string, ActiveRun>();
  private readonly status = vscode.window.createStatusBarItem("benchmarkProfiler.runs", vscode.StatusBarAlignment.Left, 10);
  private readonly changed = new vscode.EventEmitter<void>();
  /** Fires when a run starts, progresses, or ends. */
  readonly onDidChange = this.changed.event;
  private readonly resultsAsked = new vscode.EventEmitter<LoadedRun>();
  /**
   * Fires when a finished run's results are to be shown (at once, unless
   * `benchmarkProfiler.openResultsWhenDone` is off, and on its notification's Show Results): the
   * results panel listens, so the controller needs no panel.
   */
  readonly onDidAskForResults = this.resultsAsked.event;

  constructor(private readonly needs: RunControllerNeeds) {
    this.status.name = "Benchmark Profiler runs";
    this.status.command = "workbench.view.extension.benchmarkProfiler";
  }

  /** The run this window has going in `runDir`, if any. */
  activeIn(runDir: string): ActiveRun | undefined {
    return [...this.active.values()].find((r) => r.runDir === runDir);
  }

  /** Profiles a config in a new run folder. */
  async start(configUri: vscode.Uri): Promise<void> {
    const configFile = configUri.fsPath;
    if (this.refuseSecond(configFile) || !(await trusted("Profiling"))) return;
    const open = vscode.workspace.textDocuments.find((d) => d.uri.fsPath === configFile);
    // The tasks' Python runs as the workspace's checks let it (the user's answers, the setting).
    const inputs = { ...directInputs(), helpers: this.needs.workspace.helperPolicy };
    const { profile, problems } = await loadProfile(configFile, open ? { text: open.getText(), inputs } : { inputs });
    if (!profile) {
      void vscode.window.showErrorMessage(
        `Profile failed: ${path.basename(configFile)} has ${errorsOf(problems).length} error(s); see the Problems panel`,
      );
      return;
    }
    const confirmUnsafeCode = await confirmGeneratedCode(unsafeCodeBenchmarks(profile));
    if (confirmUnsafeCode === undefined || !(await this.allowsNamedRunner(profile.target))) return;
    const where = describeTarget(profile.target);
    const runner = await this.runnerFor(profile.target.kind);
    if (!runner) return;
    this.needs.log(`profiling ${configFile} on ${where}${runner.path ? ` with ${runner.path}` : ""}`);
    await this.follow(
      configFile,
      `Profiling ${path.basename(configFile)} (${where})`,
      runner,
      (options) => runProfile(profile, { ...options, confirmUnsafeCode }),
      profile.benchmarks.length,
    );
  }

  /** Resumes an interrupted run in its folder (the folder holds the config it ran). */
  async resume(runDir: string, configFile: string): Promise<void> {
    if (this.refuseSecond(configFile) || !(await trusted("Resuming a run"))) return;
    // A resumed run compiles the config's jobs again, so the config says whether it runs generated code.
    const { profile } = await loadProfile(configFile, { inputs: { ...directInputs(), helpers: this.needs.workspace.helperPolicy } });
    const confirmUnsafeCode = await confirmGeneratedCode(profile ? unsafeCodeBenchmarks(profile) : []);
    if (confirmUnsafeCode === undefined || (profile && !(await this.allowsNamedRunner(profile.target)))) return;
    const runner = await this.runnerFor(await runTargetKind(runDir));
    if (!runner) return;
    this.needs.log(`resuming ${runDir}`);
    await this.follow(configFile, `Resuming ${path.basename(runDir)}`, runner, (options) =>
      resumeRun(runDir, { ...options, confirmUnsafeCode }),
    );
  }

  /**
   * Whether the runner the config names (not one bprof built) may run: asked once per host and
   * path in this workspace, as task Python is, since a config can come with a repository.
   */
  private async allowsNamedRunner(target: Target): Promise<boolean> {
    const named = namedRunnerOf(target);
    if (!named) return true;
    const allowed = this.needs.state.get<string[]>(NAMED_RUNNERS_ALLOWED, []);
    if (allowed.includes(namedRunnerKey(named))) return true;
    const run = "Run It";
    const choice = await vscode.window.showWarningMessage(
      `This config names the runner to start on ${named.host}: ${named.runner} (${named.field}).`,
      {
        modal: true,
        detail:
          "It is a program the config names, not the runner Benchmark Profiler builds from its own sources. Run it only if you know it; leave the key out to have the runner built there. The answer is kept for this workspace.",
      },
      run,
    );
    if (choice !== run) return false;
    await this.needs.state.update(NAMED_RUNNERS_ALLOWED, [...allowed, namedRunnerKey(named)]);
    this.needs.log(`runner named by the config allowed: ${named.runner} on ${named.host}`);
    return true;
  }

  /**
   * The runner spec of a run. For one on this machine the runner is had first (built when this
   * version has none, with its own notification): a run starts only with one. Undefined when it
   * cannot be had; the user was told why.
   */
  private async runnerFor(target: Target["kind"] | undefined): Promise<RunnerSpec | undefined> {
    const runner = await this.needs.runner.spec();
    if (target !== "local") return runner;
    const local = await this.needs.runner.local();
    return local ? { ...runner, path: local } : undefined;
  }

  /** Cancels a run of this window; the runner finishes the item it is on and the folder stays resumable. */
  cancel(runDir: string): boolean {
    const run = this.activeIn(runDir);
    run?.abort.abort();
    return run !== undefined;
  }

  private refuseSecond(configFile: string): boolean {
    if (!this.active.has(configFile)) return false;
    void vscode.window
      .showWarningMessage(
        `${path.basename(configFile)} is being profiled already: cancel that run first, or wait for it to end.`,
        "Show Runs",
      )
      .then((c) => c && vscode.commands.executeCommand("benchmarkProfiler.runs.focus"));
    return true;
  }

  private async follow(
    configFile: string,
    title: string,
    runner: RunnerSpec,
    start: (options: RunOptions) => Promise<RunOutcome>,
    benchmarks?: number,
  ): Promise<void> {
    const run: ActiveRun = { configFile, abort: new AbortController() };
    this.active.set(configFile, run);
    this.changedNow();
    try {
      const outcome = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title, cancellable: true },
        (progress, token) => {
          token.onCancellationRequested(() => run.abort.abort());
          let reported = 0;
          return start({
            // A target's host builds its runner during the run: its steps show in this notification.
            runner: {
              ...runner,
              onBuild: {
                ...runner.onBuild,
                onProgress: (p) => progress.report({ message: `building bprof-runner: ${buildProgressText(p)}` }),
              },
            },
            signal: run.abort.signal,
            onRunFolder: (dir) => {
              run.runDir = dir;
              this.changedNow();
            },
            onWarning: (m) => this.needs.log(`warning: ${m}`),
            onStatus: (message, model) => {
              this.needs.log(`${model}: ${message}`);
              progress.report({ message: `${model}: ${message}` });
            },
            onProgress: (p) => {
              run.progress = p;
              // A notification's bar only grows: the whole run's share (the furthest it got), the message the phase and time left.
              const fraction = 100 * runShare(p);
              progress.report({ message: progressText(p), increment: Math.max(0, fraction - reported) });
              reported = Math.max(reported, fraction);
              this.changedSoon();
            },
          });
        },
      );
      this.needs.log(`run ${outcome.runId} finished: ${outcome.resultsFile}`);
      this.end(configFile);
      const loaded: LoadedRun = { dir: outcome.runDir, resultsFile: outcome.resultsFile, results: outcome.results };
      if (vscode.workspace.getConfiguration("benchmarkProfiler").get<boolean>("openResultsWhenDone", true)) this.resultsAsked.fire(loaded);
      const show = "Show Results";
      const choice = await vscode.window.showInformationMessage(
        `Profile finished: run ${outcome.runId}, ${outcome.itemCount} items scored on ${benchmarks ?? outcome.results.models[0]?.benchmarks.length ?? 0} benchmark(s).`,
        show,
      );
      if (choice === show) this.resultsAsked.fire(loaded);
    } catch (e) {
      this.end(configFile);
      const cancelled = e instanceof RunnerError && e.code === "cancelled";
      const error =
        e instanceof RunnerError ? { code: e.code, message: e.message } : { message: e instanceof Error ? e.message : String(e) };
      // What failed: the model and phase the run was in, then the error; its log is the events file written last.
      const text = cancelled ? `Run ${path.basename(run.runDir ?? "")} cancelled; it can be resumed.` : failureSummary(error, run.progress);
      this.needs.log(cancelled ? text : `run failed: ${text}`);
      const resumable = e instanceof RunnerError && e.resumable && run.runDir !== undefined;
      const events = run.runDir && !cancelled ? await latestEventsFile(run.runDir) : undefined;
      const [resume, showLog, showOutput] = ["Resume", "Show Log", "Show Output"];
      const actions = [...(resumable ? [resume] : []), ...(cancelled ? [] : [events ? showLog : showOutput])];
      const choice = await (cancelled
        ? vscode.window.showInformationMessage(text, ...actions)
        : vscode.window.showErrorMessage(text, ...actions));
      if (choice === resume && run.runDir) await this.resume(run.runDir, configFile);
      else if (choice === showLog && events) await vscode.window.showTextDocument(vscode.Uri.file(events), { preview: true });
      else if (choice === showOutput) this.needs.output.show(true);
    }
  }

  private end(configFile: string): void {
    this.active.delete(configFile);
    this.needs.workspace.refresh();
    this.changedNow();
  }

  private pendingChange: NodeJS.Timeout | undefined;

  /** Progress comes many times a second: the tree and the status bar follow at most twice a second. */
  private changedSoon(): void {
    this.pendingChange ??= setTimeout(() => this.changedNow(), 500);
  }

  private changedNow(): void {
    clearTimeout(this.pendingChange);
    this.pendingChange = undefined;
    this.updateStatus();
    this.changed.fire();
  }

  private updateStatus(): void {
    const runs = [...this.active.values()];
    if (runs.length === 0) {
      this.status.hide();
      return;
    }
    const first = runs[0]!;
    const p = first.progress;
    // the notification's words: the status bar and the Runs view say the same of the same run
    this.status.text = `$(sync~spin) ${p ? progressText(p) : "starting"}${runs.length > 1 ? ` (+${runs.length - 1})` : ""}`;
    this.status.tooltip = runs
      .map((r) => `${path.basename(r.configFile)}: ${r.progress ? progressText(r.progress) : "starting"}`)
      .join("\n");
    this.status.show();
  }

  dispose(): void {
    for (const run of this.active.values()) run.abort.abort();
    clearTimeout(this.pendingChange);
    this.status.dispose();
    this.changed.dispose();
    this.resultsAsked.dispose();
  }
}

/**
 * Whether the user lets benchmarks score by running the code the model generates, asked in a
 * modal as lm-eval asks for --confirm_run_unsafe_code: false when none does, undefined when the
 * user declined (nothing starts).
 */
async function confirmGeneratedCode(benchmarks: readonly string[]): Promise<boolean | undefined> {
  if (benchmarks.length === 0) return false;
  const run = "Run Generated Code";
  const choice = await vscode.window.showWarningMessage(
    `${benchmarks.join(", ")} score${benchmarks.length === 1 ? "s" : ""} each document by running the code the model generates, on this machine, once the runner is done.`,
    { modal: true, detail: "The code runs with your permissions, outside any sandbox. Run it only for models and task files you trust." },
    run,
  );
  return choice === run ? true : undefined;
}
