// New Profiling Config: asks for the model folder and the benchmarks' task files, and writes a
// commented config that validates (its text is core's newConfigText) beside them, under a name no
// file has; then opens it.
import { existsSync } from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import { freeConfigFile, isTaskText, newConfigText, writeNewFileAtomic } from "../../core/config/newConfig";
import type { CommandFactory } from "../ctx";

export const newConfig: CommandFactory = () => async () => {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
  const [model] =
    (await vscode.window.showOpenDialog({
      title: "New Profiling Config: the model folder (config.json, *.safetensors, tokenizer.json)",
      openLabel: "Profile This Model",
      canSelectFolders: true,
      canSelectFiles: false,
      ...(folder ? { defaultUri: folder } : {}),
    })) ?? [];
  if (!model) return;
  const missing = ["config.json", "tokenizer.json"].filter((f) => !existsSync(path.join(model.fsPath, f)));
  if (missing.length > 0) {
    const pick = "Pick Another Folder";
    const choice = await vscode.window.showWarningMessage(
      `${path.basename(model.fsPath)} has no ${missing.join(" and ")}: a model folder is a Hugging Face one (config.json, *.safetensors, tokenizer.json).`,
      "Use It Anyway",
      pick,
    );
    if (choice === pick) return vscode.commands.executeCommand("benchmarkProfiler.newConfig");
    if (choice === undefined) return;
  }
  const tasks = await pickTaskFiles();
  if (tasks === undefined) return;
  const dir = folder?.fsPath ?? path.dirname(model.fsPath);
  const configFile = freeConfigFile(dir, path.basename(model.fsPath), existsSync);
  await writeNewFileAtomic(configFile, newConfigText({ configFile, modelDir: model.fsPath, taskFiles: tasks.map((t) => t.fsPath) }));
  await vscode.window.showTextDocument(vscode.Uri.file(configFile));
};

/** The workspace's lm-eval task files to pick from, or a file dialog when it has none; [] to add them later. */
async function pickTaskFiles(): Promise<vscode.Uri[] | undefined> {
  const yaml = await vscode.workspace.findFiles("**/*.{yaml,yml}", "**/{node_modules,.bprof,.git}/**", 2000);
  const tasks: vscode.Uri[] = [];
  for (const uri of yaml) {
    if (uri.fsPath.endsWith(".bprof.yaml")) continue;
    const text = new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
    if (isTaskText(text)) tasks.push(uri);
  }
  const browse = "$(folder-opened) Browse for task files...";
  const picked = await vscode.window.showQuickPick(
    [...tasks.map((uri) => ({ label: vscode.workspace.asRelativePath(uri), uri })), { label: browse, uri: undefined, alwaysShow: true }],
    {
      title: "New Profiling Config: the benchmarks (lm-eval task files)",
      placeHolder:
        tasks.length > 0 ? "Pick the task files to score (none: add them to the config later)" : "No lm-eval task file in this workspace",
      canPickMany: true,
    },
  );
  if (picked === undefined) return undefined;
  const chosen = picked.flatMap((p) => (p.uri ? [p.uri] : []));
  if (!picked.some((p) => p.uri === undefined)) return chosen;
  const browsed = await vscode.window.showOpenDialog({
    title: "lm-eval task files",
    canSelectMany: true,
    filters: { "lm-eval tasks": ["yaml", "yml"] },
  });
  return [...chosen, ...(browsed ?? [])];
}
