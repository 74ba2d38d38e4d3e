// The context every feature and command of the extension shares: VS Code's extension context, the
// output channel, the settings, the workspace model (in its worker thread), and the way commands
// are registered. Commands never call vscode.commands.registerCommand themselves.
import { appendFileSync } from "node:fs";
import * as vscode from "vscode";
import { EXTENSION_ID } from "./extensionId";
import { CaseRuns } from "./runs/caseRuns";
import { RunController } from "./runs/controller";
import { Runner } from "./runs/runner";
import { Workspace } from "./workspace/workspace";

/** A command: a factory of the context, returning what runs when the command is invoked. */
export type Cmd = (...args: never[]) => unknown;
export type CommandFactory = (ctx: Ctx) => Cmd;

export class Ctx {
  readonly output: vscode.OutputChannel;
  readonly workspace: Workspace;
  readonly runs: RunController;
  /** The runner: named in the settings, or built from the bundled sources. */
  readonly runner: Runner;
  /** Which run's flipped documents the editor shows, per config. */
  readonly caseRuns: CaseRuns;

  private constructor(readonly extension: vscode.ExtensionContext) {
    this.output = vscode.window.createOutputChannel("Benchmark Profiler");
    this.workspace = new Workspace(this);
    this.runs = new RunController(this);
    this.runner = new Runner(this);
    this.caseRuns = new CaseRuns(this);
    extension.subscriptions.push(this.output, this.workspace, this.runs, this.caseRuns);
  }

  static create(extension: vscode.ExtensionContext): Ctx {
    return new Ctx(extension);
  }

  get subscriptions(): vscode.Disposable[] {
    return this.extension.subscriptions;
  }

  /** Registers `benchmarkProfiler.<name>`, made by `factory` from this context. */
  registerCommand(name: string, factory: CommandFactory): void {
    const run = factory(this) as (...args: unknown[]) => unknown;
    this.subscriptions.push(
      vscode.commands.registerCommand(`${EXTENSION_ID}.${name}`, async (...args: unknown[]) => {
        try {
          return await run(...args);
        } catch (e) {
          const message = e instanceof Error ? e.message : String(e);
          this.output.appendLine(`${name} failed: ${e instanceof Error ? (e.stack ?? message) : message}`);
          void vscode.window.showErrorMessage(`Benchmark Profiler: ${message}`);
          return undefined;
        }
      }),
    );
  }

  /**
   * Whether `what` may run: the runner, SSH and Slurm are programs a workspace's files choose, so
   * they run only in a trusted workspace. In Restricted Mode this says so, with the way out.
   */
  async trusted(what: string, why = "it starts the runner (and ssh or sbatch) that this folder's config names"): Promise<boolean> {
    if (vscode.workspace.isTrusted) return true;
    const manage = "Manage Workspace Trust";
    const choice = await vscode.window.showErrorMessage(
      `${what} needs a trusted workspace: ${why}. ` +
        "This window is in Restricted Mode, where Benchmark Profiler only checks files and shows results.",
      manage,
    );
    if (choice === manage) await vscode.commands.executeCommand("workbench.trust.manage");
    return false;
  }

  /** Whether Red Hat's YAML extension is installed: it then completes and describes config keys from our schema. */
  get yamlExtensionActive(): boolean {
    return vscode.extensions.getExtension("redhat.vscode-yaml") !== undefined;
  }

  log(message: string): void {
    this.output.appendLine(message);
    // The end-to-end tests keep the channel's lines in a file of their results.
    const file = process.env.BPROF_EXTENSION_LOG;
    if (file) appendFileSync(file, `${new Date().toISOString()} ${message}\n`);
  }
}
