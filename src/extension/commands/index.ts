// Every command of the extension, by name (`benchmarkProfiler.<name>`): what the palette, the
// CodeLens lines, the trees and the quick fixes invoke.
import * as vscode from "vscode";
import type { CaseFocus } from "../../core/language/tooltips";
import type { CommandFactory } from "../ctx";
import { compareRuns } from "./compare";
import { createDataset, draftItemsWithModel, generateMoreItems } from "./datasets";
import { newConfig } from "./newConfig";
import { openDemo, profile } from "./profile";
import { openDocumentLine } from "../panels/resultsPanel";
import { showLatestResults } from "./results";
import { cancelRun, copyRunId, deleteRun, openRunReport, openRunResults, resumeRun, revealRun } from "./runs";
import { validateConfig } from "./validate";
import { reviewAccept, reviewDataset, reviewFlag, reviewNext, reviewPrevious, reviewReject, reviewUndo, stopReview } from "./review";

/** Opens a benchmark document in its data file (the Negative AIS tree, the results view); its hover puts `focus`'s flip first. */
const openDocument: CommandFactory = (ctx) => (file: string, line: number, focus?: CaseFocus) => {
  ctx.caseRuns.focusOn(file, focus);
  return openDocumentLine(file, line);
};

/** Builds this machine's runner now (a run would build it first anyway). */
const buildRunner: CommandFactory = (ctx) => async () => {
  if (!(await ctx.trusted("Building the runner"))) return;
  const runner = await ctx.runner.local();
  if (runner) void vscode.window.showInformationMessage(`bprof-runner is ready: ${runner}`);
};

/** Picks whose flipped documents the editor marks. */
const pickCasesRun: CommandFactory = (ctx) => () => ctx.caseRuns.pick();

/** Opens a file and selects a range of it (the Profiles tree's entries). */
const reveal: CommandFactory = () => async (uri: vscode.Uri, range?: vscode.Range) => {
  const editor = await vscode.window.showTextDocument(uri, { preview: true });
  if (range) {
    editor.selection = new vscode.Selection(range.start, range.start);
    editor.revealRange(range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  }
};

export function createCommands(): Record<string, CommandFactory> {
  return {
    profile,
    validateConfig,
    showLatestResults,
    openDemo,
    createDataset,
    newConfig,
    generateItems: generateMoreItems,
    draftItems: draftItemsWithModel,
    reveal,
    openRunResults,
    openRunReport,
    resumeRun,
    cancelRun,
    deleteRun,
    revealRun,
    copyRunId,
    compareRuns,
    openDocument,
    pickCasesRun,
    buildRunner,
    reviewDataset,
    reviewAccept,
    reviewReject,
    reviewFlag,
    reviewUndo,
    reviewNext,
    reviewPrevious,
    stopReview,
  };
}
