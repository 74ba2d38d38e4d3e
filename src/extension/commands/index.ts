// Every command of the extension, by name (`benchmarkProfiler.<name>`): what the palette, the
// CodeLens lines, the trees and the quick fixes invoke.
import * as vscode from "vscode";
import type { CommandFactory } from "../ctx";
import { createDataset, generateMoreItems } from "./datasets";
import { openDemo, profile } from "./profile";
import { showLatestResults } from "./results";
import { validateConfig } from "./validate";

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
    generateItems: generateMoreItems,
    reveal,
  };
}
