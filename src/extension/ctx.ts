// The context every feature and command of the extension shares: VS Code's extension context, the
// output channel and its log, the services main.ts made (the workspace model, the runs, the runner,
// the inline cases' picks), and the way commands are registered. Commands never call
// vscode.commands.registerCommand themselves. The services do not know it: each takes the few
// things it needs.
import * as vscode from "vscode";
import { EXTENSION_ID } from "./extensionId";
import type { Log } from "./output";
import type { CaseRuns } from "./runs/caseRuns";
import type { RunController } from "./runs/controller";
import type { Runner } from "./runs/runner";
import type { ReviewMode } from "./review/reviewMode";
import { trusted } from "./trust";
import type { Workspace } from "./workspace/workspace";

/** A command: a factory of the context, returning what runs when the command is invoked. */
export type Cmd = (...args: never[]) => unknown;
export type CommandFactory = (ctx: Ctx) => Cmd;

export interface Services {
  readonly workspace: Workspace;
  readonly runs: RunController;
  /** The runner: named in the settings, or built from the bundled sources. */
  readonly runner: Runner;
  /** Which run's flipped documents the editor shows, per config. */
  readonly caseRuns: CaseRuns;
  /** The diagnostic dataset under review, if any. */
  readonly review: ReviewMode;
}

export class Ctx implements Services {
  readonly workspace: Workspace;
  readonly runs: RunController;
  readonly runner: Runner;
  readonly caseRuns: CaseRuns;
  readonly review: ReviewMode;

  constructor(
    readonly extension: vscode.ExtensionContext,
    readonly output: vscode.OutputChannel,
    readonly log: Log,
    services: Services,
  ) {
    ({ workspace: this.workspace, runs: this.runs, runner: this.runner, caseRuns: this.caseRuns, review: this.review } = services);
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

  /** Whether `what` may run (trust.ts): in Restricted Mode it says why not, with the way out. */
  trusted(what: string, why?: string): Promise<boolean> {
    return trusted(what, why);
  }

  /** Whether Red Hat's YAML extension is installed: it then completes and describes config keys from our schema. */
  get yamlExtensionActive(): boolean {
    return vscode.extensions.getExtension("redhat.vscode-yaml") !== undefined;
  }
}
