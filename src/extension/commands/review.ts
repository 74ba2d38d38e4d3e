// The review mode's commands: Review Dataset on a *.diag.jsonl (the editor's title button, the
// palette), and the palette's forms of the panel's keys.
import * as vscode from "vscode";
import type { ReviewAction } from "../../../webview/reviewProtocol";
import type { CommandFactory } from "../ctx";

/** Reviews the given dataset, else the active editor's. */
export const reviewDataset: CommandFactory = (ctx) => async (uri?: vscode.Uri) => {
  const target = uri instanceof vscode.Uri ? uri : vscode.window.activeTextEditor?.document.uri;
  if (!target || !target.fsPath.endsWith(".jsonl"))
    throw new Error("open a diagnostic dataset (*.diag.jsonl) to review it, then run Review Dataset again");
  await ctx.review.start(target);
};

const act =
  (action: ReviewAction): CommandFactory =>
  (ctx) =>
  () =>
    ctx.review.act(action);

export const reviewAccept = act("accept");
export const reviewReject = act("reject");
export const reviewFlag = act("flag");
export const reviewUndo = act("undo");
export const reviewNext = act("next");
export const reviewPrevious = act("previous");
export const stopReview: CommandFactory = (ctx) => () => ctx.review.stop();
