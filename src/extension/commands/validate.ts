// Validate Config: the problems the workspace model found in the config (and, through it, in the
// files it names), then what only compiling its jobs finds (an item past the model's window), each
// benchmark's power, the shard split and the device plan in the output, then, for an SSH or Slurm
// target, what only the target can say (the host, its runner, the model folders there, sbatch
// --test-only). Asking the target runs ssh or sbatch, so it needs a trusted workspace; the file
// checks do not.
import * as os from "node:os";
import * as path from "node:path";
import * as vscode from "vscode";
import { directInputs, loadProfile } from "../../core/config/load";
import { checkTarget } from "../../core/launch/check";
import { describeTarget } from "../../core/config/target";
import { devicePlanLines, shardSplitLines } from "../../core/plan/compile";
import { newestPace } from "../../core/results/runs";
import { newestBaselines } from "../../core/run/baselines";
import { powerLines } from "../../core/config/power";
import { errorsOf } from "../../core/base/problems";
import type { CommandFactory, Ctx } from "../ctx";
import { pickConfig } from "./pickConfig";

export const validateConfig: CommandFactory = (ctx) => async (uri?: vscode.Uri) => {
  const config = uri ?? (await pickConfig());
  if (!config) return;
  const document = vscode.workspace.textDocuments.find((d) => d.uri.fsPath === config.fsPath);
  if (document) ctx.workspace.flush(document);
  else ctx.workspace.found([config.fsPath]);
  await ctx.workspace.request("settled", {});
  const name = path.basename(config.fsPath);
  const errors =
    errorsOf(await ctx.workspace.request("problemsOf", { file: config.fsPath })).length ||
    errorsOf(await compiledJobProblems(ctx, config.fsPath)).length;
  if (errors > 0) {
    void vscode.window.showErrorMessage(`${name}: ${errors} error(s); see the Problems panel`);
    return;
  }
  // The tasks' Python runs as the workspace's checks let it (Restricted Mode, the user's answers).
  const inputs = { ...directInputs(), helpers: ctx.workspace.helperPolicy };
  // each benchmark's power at the newest run's baselines (assumed before a run), as `bprof validate` prints it
  const baselines = await newestBaselines(config.fsPath, document?.getText());
  const { profile, power } = await loadProfile(config.fsPath, {
    ...(document ? { text: document.getText() } : {}),
    inputs,
    ...(baselines ? { baselines } : {}),
  });
  for (const line of powerLines(power ?? [])) ctx.log(`${name}: ${line}`);
  const split = profile ? await shardSplitLines(profile, os.availableParallelism(), (model) => newestPace(profile.configFile, model)) : [];
  for (const line of split) ctx.log(`${name}: ${line}`);
  for (const line of profile ? await devicePlanLines(profile) : []) ctx.log(`${name}: ${line}`);
  if (!profile || profile.target.kind === "local") {
    void vscode.window.showInformationMessage(`${name}: config OK${split.length > 0 ? `; ${split[0]}` : ""}`);
    return;
  }
  const where = describeTarget(profile.target);
  if (!(await ctx.trusted(`Checking ${where}`))) return;
  const checks = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `Checking ${where}` },
    async () => checkTarget(profile.target, profile.models, await ctx.runner.spec()),
  );
  ctx.log(`${name}: target ${where}`);
  for (const check of checks) ctx.log(`  ${check.ok ? "ok" : "error"}: ${check.message}`);
  const failed = checks.filter((c) => !c.ok);
  if (failed.length === 0) void vscode.window.showInformationMessage(`${name}: config OK; ${where} is ready (${checks.length} checks)`);
  else
    void vscode.window.showErrorMessage(
      `${name}: ${failed[0]!.message}${failed.length > 1 ? ` (and ${failed.length - 1} more; see the output)` : ""}`,
    );
};

/** Compiling the jobs tokenizes every item (seconds on a large benchmark), so it shows its progress. */
function compiledJobProblems(ctx: Ctx, file: string) {
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `Tokenizing the items of ${path.basename(file)}` },
    () => ctx.workspace.request("compileJobs", { file }),
  );
}
