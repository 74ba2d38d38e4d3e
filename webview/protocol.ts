// What the results webview and the extension say to each other: one id per view type, and the
// messages each side sends. Both sides import this file, so a change of shape is a type error on
// both.
import type { CellCases, CellRef } from "../src/core/report/cases";
import type { ComparisonView } from "../src/core/report/compareFigure";
import type { ResultsQuery, ResultsView } from "../src/core/report/view";

/** The view type of the results panel (its serializer restores panels of this type after a reload). */
export const RESULTS_VIEW_TYPE = "benchmarkProfiler.results";

/** Colours of the page, for an exported figure. */
export interface ExportTheme {
  text: string;
  muted: string;
  background: string;
  fontFamily: string;
}

/** From the webview. */
export type FromResultsView =
  /** The page is loaded and listens: send it the view. */
  | { type: "ready" }
  /** A control changed: send the view for this query. */
  | { type: "query"; query: ResultsQuery }
  /** A cell was selected: send its flipped documents. */
  | { type: "cell"; ref: CellRef }
  /** Open a document in its data file; `ref`, the cell it was listed under, whose flip its hover shows first. */
  | { type: "open"; file: string; line: number; ref?: CellRef }
  /** Save the figure: PNG carries the canvas as a data URL; SVG and CSV are made by the extension. */
  | { type: "export"; format: "png"; dataUrl: string }
  | { type: "export"; format: "svg"; theme: ExportTheme }
  | { type: "export"; format: "csv" };

/** To the webview. */
export type ToResultsView =
  | { type: "view"; view: ResultsView }
  /** Two profiles compared (Compare Profiles…): the page shows the difference heatmap instead of a run. */
  | { type: "comparison"; view: ComparisonView }
  | { type: "cases"; cases: CellCases }
  | { type: "error"; message: string };

/** One side of a comparison: a run folder and one of its models. */
export interface ProfileKey {
  runDir: string;
  model: string;
}

/**
 * What the webview keeps while its panel is hidden (the page is then discarded and loaded again)
 * and across reloads (vscode.setState; the serializer reads `runDir` and `query` back): the run,
 * the query, the open tab and the cell whose documents are listed.
 */
export interface ResultsViewState {
  runDir: string;
  query?: ResultsQuery;
  tab?: number;
  cell?: { row: number; column: number };
  /** The panel compares two profiles (`runDir` is A's run). */
  compare?: { a: ProfileKey; b: ProfileKey };
}
