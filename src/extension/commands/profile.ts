// Profile a config (the command palette, the CodeLens above a config, the Profiles view), and Open
// Demo, which copies the built-in demo workspace into a folder the user picks, shows that folder
// in the window (or a new one) and profiles it. The run controller runs them.
import * as path from "node:path";
import * as vscode from "vscode";
import { copyDemoWorkspace, DEMO_CONFIG, demoFolderIn, demoPlacement } from "../../core/demo/demoWorkspace";
import type { CommandFactory, Ctx } from "../ctx";
import { pickConfig } from "./pickConfig";

export const profile: CommandFactory = (ctx) => async (uri?: vscode.Uri) => {
  const config = uri ?? (await pickConfig());
  if (config) await ctx.runs.start(config);
};

/** The demo folder a window opened for Open Demo is to profile once it has it (globalState). */
const PENDING_DEMO = "benchmarkProfiler.pendingDemo";
/** The folder of the last demo, which Open Demo profiles again without asking. */
const LAST_DEMO = "benchmarkProfiler.lastDemo";
const WHY_DEMO_NEEDS_TRUST = "the demo runs the native runner (bprof-runner), a program on this machine";

export const openDemo: CommandFactory = (ctx) => async () => {
  // The shipped workspace is read-only: copy it into a folder the user picks and can see.
  const last = ctx.extension.globalState.get<string>(LAST_DEMO);
  const lastConfig = last ? vscode.Uri.file(path.join(last, DEMO_CONFIG)) : undefined;
  let demo = last && lastConfig && (await exists(lastConfig)) ? last : undefined;
  if (!demo) {
    const [picked] =
      (await vscode.window.showOpenDialog({
        title: `Open Demo: where to put the demo (a ${path.basename(demoFolderIn("/x"))} folder is made in the folder you pick)`,
        openLabel: "Put the Demo Here",
        canSelectFolders: true,
        canSelectFiles: false,
        ...(vscode.workspace.workspaceFolders?.[0] ? { defaultUri: vscode.workspace.workspaceFolders[0].uri } : {}),
      })) ?? [];
    if (!picked) return;
    demo = demoFolderIn(picked.fsPath);
  }
  let config: string;
  try {
    config = await copyDemoWorkspace(path.join(ctx.extension.extensionPath, "media", "demo"), demo);
  } catch (e) {
    void vscode.window.showErrorMessage(`Open Demo failed: ${e instanceof Error ? e.message : String(e)}`);
    return;
  }
  await ctx.extension.globalState.update(LAST_DEMO, demo);
  const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
  const placement = demoPlacement(demo, folders, vscode.workspace.isTrusted);
  ctx.log(`Open Demo: ${demo} (${placement})`);
  if (placement === "open" || placement === "newWindow") {
    // The window that opens the folder profiles it (and asks for trust first where it is not trusted).
    await ctx.extension.globalState.update(PENDING_DEMO, demo);
    await vscode.commands.executeCommand("vscode.openFolder", vscode.Uri.file(demo), { forceNewWindow: placement === "newWindow" });
    return;
  }
  if (placement === "add") vscode.workspace.updateWorkspaceFolders(folders.length, 0, { uri: vscode.Uri.file(demo) });
  await profileDemo(ctx, config);
};

async function profileDemo(ctx: Ctx, config: string): Promise<void> {
  await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(config));
  if (!(await ctx.trusted("Profiling the demo", WHY_DEMO_NEEDS_TRUST))) return;
  await ctx.runs.start(vscode.Uri.file(config));
}

/** In the window Open Demo opened the demo folder in: profiles it (once), as soon as the window is trusted. */
export async function profilePendingDemo(ctx: Ctx): Promise<void> {
  const pending = ctx.extension.globalState.get<string>(PENDING_DEMO);
  if (!pending) return;
  const here = (vscode.workspace.workspaceFolders ?? []).some((f) => path.resolve(f.uri.fsPath) === path.resolve(pending));
  if (!here) return;
  const config = path.join(pending, DEMO_CONFIG);
  if (!vscode.workspace.isTrusted) {
    // The window may activate the extension before its trust is answered: say why the demo needs
    // trust, and profile it once it is granted (a window never trusted keeps it pending). The
    // grant is listened for before anything is awaited: it may come while the config opens.
    const granted = new Promise<void>((resolve) => ctx.subscriptions.push(vscode.workspace.onDidGrantWorkspaceTrust(() => resolve())));
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(config));
    void ctx.trusted("Profiling the demo", WHY_DEMO_NEEDS_TRUST);
    if (!vscode.workspace.isTrusted) await granted;
  }
  await ctx.extension.globalState.update(PENDING_DEMO, undefined);
  await profileDemo(ctx, config);
}

async function exists(uri: vscode.Uri): Promise<boolean> {
  return vscode.workspace.fs.stat(uri).then(
    () => true,
    () => false,
  );
}
