// Profile a config (the command palette, the CodeLens above a config, the Profiles view), and Open
// Demo, which copies the built-in demo workspace and profiles it. The run controller runs them.
import * as path from "node:path";
import * as vscode from "vscode";
import { copyDemoWorkspace } from "../../core/demo/demoWorkspace";
import type { CommandFactory } from "../ctx";
import { pickConfig } from "./pickConfig";

export const profile: CommandFactory = (ctx) => async (uri?: vscode.Uri) => {
  const config = uri ?? (await pickConfig());
  if (config) await ctx.runs.start(config);
};

export const openDemo: CommandFactory = (ctx) => async () => {
  if (!(await ctx.trusted("Open Demo"))) return;
  // The shipped workspace is read-only: copy it to the extension's storage, show its config, profile it.
  let config: string;
  try {
    config = await copyDemoWorkspace(path.join(ctx.extension.extensionPath, "media", "demo"), ctx.demoFolder);
  } catch (e) {
    void vscode.window.showErrorMessage(`Open Demo failed: ${e instanceof Error ? e.message : String(e)}`);
    return;
  }
  await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(config));
  await ctx.runs.start(vscode.Uri.file(config));
};
