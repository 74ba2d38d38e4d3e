// Compare With…: two profiles side by side (core's report/compare.ts, docs/method.md "Two profiles
// compared"), from a finished run of the Runs view or the palette: the user picks the other
// profile (a run and one of its models), and the difference heatmap opens in the results view.
import * as vscode from "vscode";
import type { ProfileRef } from "../../core/report/compare";
import { loadRun, ReportInputError, type LoadedRun } from "../../core/report/load";
import { runsOfConfigs } from "../../core/results/runs";
import type { CommandFactory } from "../ctx";
import { showComparison } from "../panels/resultsPanel";
import type { RunNode } from "../views/runsTree";

export const compareRuns: CommandFactory = (ctx) => async (node?: RunNode) => {
  const configs = (await ctx.workspace.outlines()).map((o) => o.file);
  const finished = (await runsOfConfigs(configs)).filter((row) => row.status.state === "finished");
  const profiles = (await Promise.all(finished.map((row) => profilesOfRun(row.dir)))).flat();
  if (profiles.length < 2) {
    void vscode.window.showInformationMessage(
      "Comparing needs two profiles: finished runs with abilities (two models of one run count as two).",
    );
    return;
  }
  // From a run of the Runs view, A is one of that run's profiles: asked for when it has several models.
  const candidates = node ? profiles.filter((p) => p.run.dir === node.row.dir) : profiles;
  if (candidates.length === 0) {
    void vscode.window.showInformationMessage("This run has no profile to compare: its config has no abilities.");
    return;
  }
  const first = candidates.length === 1 ? candidates[0] : await pickProfile(candidates, "Compare: profile A");
  if (!first) return;
  const second = await pickProfile(
    profiles.filter((p) => p !== first),
    `Compare ${describe(first)} with`,
  );
  if (!second) return;
  try {
    await showComparison(ctx, { runDir: first.run.dir, model: first.model }, { runDir: second.run.dir, model: second.model });
  } catch (e) {
    if (!(e instanceof ReportInputError)) throw e;
    void vscode.window.showErrorMessage(`These two profiles cannot be compared: ${e.message}`);
  }
};

interface PickableProfile extends ProfileRef {
  run: LoadedRun;
  model: string;
}

/** One entry per model with a profile in a finished run; none when its results do not read. */
async function profilesOfRun(dir: string): Promise<PickableProfile[]> {
  const run = await loadRun(dir).catch(() => undefined);
  if (!run) return [];
  return run.results.models.filter((m) => m.profile).map((m) => ({ run, model: m.name }));
}

async function pickProfile(profiles: PickableProfile[], title: string): Promise<PickableProfile | undefined> {
  const picked = await vscode.window.showQuickPick(
    profiles.map((profile) => ({
      label: profile.model,
      description: profile.run.results.run_id,
      detail: profile.run.results.config_file,
      profile,
    })),
    { title, matchOnDescription: true },
  );
  return picked?.profile;
}

function describe(profile: PickableProfile): string {
  return `${profile.model} (${profile.run.results.run_id})`;
}
