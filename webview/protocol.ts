// What the results webview and the extension say to each other: one id per view type, and the
// messages each side sends. Both sides import this file, so a change of shape is a type error on
// both.
import type { Report } from "../src/core/report/model";

/** The view type of the results panel (its serializer restores panels of this type after a reload). */
export const RESULTS_VIEW_TYPE = "benchmarkProfiler.results";

/** From the webview. */
export type FromResultsView =
  /** The page is loaded and listens: send it the report. */
  | { type: "ready" };

/** To the webview. */
export type ToResultsView =
  | { type: "report"; report: Report };

/** What the webview keeps across reloads (vscode.setState), and the serializer reads back. */
export interface ResultsViewState {
  runDir: string;
}
