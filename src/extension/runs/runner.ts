// The runner this window uses: the one named in the settings (or $BPROF_RUNNER), else a source
// checkout's own build of the same sources (a workspace folder where `npm run setup` built it),
// else the one built from the sources that came with the extension, on this machine, into the
// extension's global storage. The first run of a version builds it, with a notification that shows progress
// and can cancel, and its output in the Output channel; what a build needs and lacks is said once,
// with the commands that install it.
import * as path from "node:path";
import * as vscode from "vscode";
import { LOCAL_HOST } from "../../core/base/host";
import { RunnerError } from "../../core/base/runnerError";
import { buildProgressText, expectedBuildLength, obtainRunner, type BuildProgress } from "../../core/runner/build";
import { checkoutBuildOf, checkoutRunner, onThisMachine, type RunnerSpec } from "../../core/runner/locate";
import { runnerSources } from "../../core/runner/sources";
import type { Log } from "../output";
import { EXTENSION_ID } from "../extensionId";

/** What the runner needs of the extension: its folder (the bundled sources), its storage (the build), the log. */
export interface RunnerNeeds {
  readonly extension: vscode.ExtensionContext;
  readonly output: vscode.OutputChannel;
  readonly log: Log;
}

export class Runner {
  /** The build under way, shared by every run that waits for it. */
  private building: Promise<string | undefined> | undefined;

  constructor(private readonly needs: RunnerNeeds) {}

  /** How runs find the runner: named, or built (here or on a target's host) from the bundled sources. */
  async spec(): Promise<RunnerSpec> {
    const settings = vscode.workspace.getConfiguration(EXTENSION_ID);
    // Both settings name programs to run or build against: Restricted Mode ignores them (restrictedConfigurations).
    const named = settings.get<string>("runnerPath") || process.env.BPROF_RUNNER;
    const torchPrefix = settings.get<string>("torchPrefix") || process.env.BPROF_TORCH_PREFIX;
    const python = await selectedPython();
    return {
      ...(named ? { path: named } : {}),
      sourcesDir: path.join(this.needs.extension.extensionPath, "native-runner"),
      cacheDir: path.join(this.needs.extension.globalStorageUri.fsPath, "runner"),
      ...(python ? { python } : {}),
      ...(torchPrefix ? { torchPrefix } : {}),
      onBuild: { onOutput: (line) => this.needs.log(`build: ${line}`) },
    };
  }

  /** This machine's runner, built first when needed; undefined when it cannot be had (the user was told why). */
  async local(): Promise<string | undefined> {
    const spec = await this.spec();
    const named = spec.path ?? checkoutRunner(spec.sourcesDir) ?? (await this.workspaceCheckoutRunner(spec));
    if (named) return named;
    this.building ??= this.build(spec).finally(() => (this.building = undefined));
    return this.building;
  }

  /** A source checkout among the workspace's folders whose runner build is of the bundled sources (`npm run setup` built it). */
  private async workspaceCheckoutRunner(spec: RunnerSpec): Promise<string | undefined> {
    const bundled = await runnerSources(spec.sourcesDir);
    if (!bundled) return undefined;
    for (const folder of vscode.workspace.workspaceFolders ?? []) {
      if (folder.uri.scheme !== "file") continue;
      const built = await checkoutBuildOf(folder.uri.fsPath, bundled);
      if (built) {
        this.needs.log(`runner: ${built}, the build of this source checkout (its sources are the extension's)`);
        return built;
      }
    }
    return undefined;
  }

  private async build(spec: RunnerSpec): Promise<string | undefined> {
    const sources = await runnerSources(spec.sourcesDir);
    if (!sources) {
      void vscode.window.showErrorMessage(
        `The runner's sources are missing from the extension (${spec.sourcesDir}): reinstall Benchmark Profiler, or set benchmarkProfiler.runnerPath.`,
      );
      return undefined;
    }
    const abort = new AbortController();
    try {
      const obtained = await obtainRunner({
        host: LOCAL_HOST,
        sources,
        cacheDir: spec.cacheDir,
        ...onThisMachine(LOCAL_HOST, spec),
        signal: abort.signal,
        ...spec.onBuild,
        // Only a build shows a notification: a cached runner is found in well under a second.
        onBuildStart: (facts) => {
          this.needs.log(
            `building bprof-runner in ${spec.cacheDir} against libtorch ${facts.torch?.version} (${facts.torch?.dir}), ${facts.jobs} jobs`,
          );
          void vscode.window.withProgress(
            { location: vscode.ProgressLocation.Notification, title: "Building bprof-runner", cancellable: true },
            (progress, token) => {
              token.onCancellationRequested(() => abort.abort());
              progress.report({ message: `once for this version of Benchmark Profiler${expectedBuildLength(facts)}` });
              return new Promise<void>((resolve) => {
                this.reportBuild = (p) => (p ? progress.report({ message: buildProgressText(p) }) : resolve());
              });
            },
          );
        },
        onProgress: (p) => this.reportBuild?.(p),
      });
      if (obtained.built) this.needs.log(`built ${obtained.runner} in ${obtained.built.seconds} s`);
      return obtained.runner;
    } catch (e) {
      if (!(e instanceof RunnerError)) throw e;
      this.needs.log(`runner: ${e.code}: ${e.message}`);
      await showBuildError(this.needs.output, e);
      return undefined;
    } finally {
      this.reportBuild?.(undefined);
      this.reportBuild = undefined;
    }
  }

  /** Feeds the build's notification; undefined closes it. */
  private reportBuild: ((progress: BuildProgress | undefined) => void) | undefined;
}

/** Missing tools: the commands that install them, to copy. A failed build: its log. Cancelled: nothing to add. */
async function showBuildError(output: vscode.OutputChannel, e: RunnerError): Promise<void> {
  if (e.code === "cancelled") {
    void vscode.window.showInformationMessage("The runner's build was cancelled; the next run builds it again.");
    return;
  }
  if (e.code === "runner_build_needs") {
    const [headline, ...rest] = e.message.split("\n");
    const commands = rest.filter((l) => l.startsWith("  ")).map((l) => l.trim());
    const copy = "Copy Commands";
    const choice = await vscode.window.showErrorMessage(headline!, { modal: true, detail: rest.join("\n") }, copy);
    if (choice === copy) await vscode.env.clipboard.writeText(commands.join("\n"));
    return;
  }
  const log = /The whole log: (\S+)$/.exec(e.message)?.[1];
  const show = "Show Log";
  const choice = await vscode.window.showErrorMessage(e.message, ...(log ? [show] : []));
  if (choice === show && log) await vscode.window.showTextDocument(vscode.Uri.file(log));
  output.show(true);
}

/** The Python extension's selected interpreter, whose PyTorch a build tries first. */
async function selectedPython(): Promise<string | undefined> {
  const python = vscode.extensions.getExtension<PythonApi>("ms-python.python");
  if (!python) return undefined;
  try {
    const api = python.isActive ? python.exports : await python.activate();
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    const active = api.environments?.getActiveEnvironmentPath(folder);
    if (!active) return undefined;
    const resolved = await api.environments!.resolveEnvironment(active);
    return resolved?.executable.uri?.fsPath ?? active.path;
  } catch {
    return undefined;
  }
}

/** The part of the Python extension's API used here (its environments API). */
interface PythonApi {
  environments?: {
    getActiveEnvironmentPath(resource?: vscode.Uri): { id: string; path: string };
    resolveEnvironment(environment: { id: string; path: string }): Promise<{ executable: { uri?: vscode.Uri } } | undefined>;
  };
}
