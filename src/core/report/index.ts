// `bprof report`: a finished run in one of five formats. The CLI resolves the run and writes the
// file; everything between results.json and the text is here.
import type { ChoiceMetric, Metric } from "../analysis/ais";
import { renderCsv } from "./csv";
import { flatCells } from "./cells";
import { renderHtml } from "./html";
import { renderJson } from "./json";
import { renderLatex } from "./latex";
import { ReportInputError, RunItems, type LoadedRun } from "./load";
import { renderMarkdown } from "./markdown";
import { buildReport } from "./model";

export const REPORT_FORMATS = ["html", "md", "csv", "json", "latex"] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

/** The file extension of each format (the default output is `report.<ext>` in the run folder). */
export const REPORT_EXTENSIONS: Record<ReportFormat, string> = { html: "html", md: "md", csv: "csv", json: "json", latex: "tex" };

/** Flipped documents listed per negative cell in HTML and Markdown; JSON lists them all. */
export const MAX_DOCUMENTS_SHOWN = 50;

export interface RenderOptions {
  format: ReportFormat;
  /**
   * html, md, latex: the multiple-choice benchmarks' metric, acc when absent (generate_until
   * benchmarks always show exact_match; asking for exact_match here is an error). csv, json: only
   * this metric's rows; every metric when absent.
   */
  metric?: Metric;
  /** Only this k (latex: the largest when absent). */
  k?: number;
  /** html: the heatmap bundle (dist/report.js). */
  script?: string;
}

export interface Rendered {
  text: string;
  /** Things the reader should know that did not stop the report (an item file missing). */
  warnings: string[];
}

export function isReportFormat(value: string): value is ReportFormat {
  return (REPORT_FORMATS as readonly string[]).includes(value);
}

/** The options of the table formats: their metric is the multiple-choice one. */
function tableFilter(filter: { metric?: Metric; k?: number }, format: ReportFormat): { metric?: ChoiceMetric; k?: number } {
  const { metric, ...rest } = filter;
  if (metric === "exact_match") {
    throw new ReportInputError(
      `--metric exact_match: the ${format} report always shows generate_until benchmarks under exact_match; ` +
        "its --metric picks the multiple-choice metric (acc or acc_norm)",
    );
  }
  return { ...rest, ...(metric ? { metric } : {}) };
}

export async function renderReport(run: LoadedRun, options: RenderOptions): Promise<Rendered> {
  const items = new RunItems(run.dir);
  const filter = { ...(options.metric ? { metric: options.metric } : {}), ...(options.k !== undefined ? { k: options.k } : {}) };
  switch (options.format) {
    case "csv":
      return { text: renderCsv(flatCells(run.results, filter)), warnings: [] };
    case "json":
      return renderJson(run, items, filter);
    case "latex": {
      if (!run.results.models.some((m) => m.profile)) {
        throw new ReportInputError(
          `run ${run.results.run_id} has no ability profile (its config has no abilities): there is no AIS table to typeset`,
        );
      }
      const report = await buildReport(run, tableFilter(filter, options.format));
      return { text: renderLatex(report), warnings: [] };
    }
    case "md":
    case "html": {
      const report = await buildReport(run, { ...tableFilter(filter, options.format), items, maxDocuments: MAX_DOCUMENTS_SHOWN });
      const warnings = report.models.flatMap((m) =>
        (m.profile?.sections ?? []).flatMap((s) =>
          s.negativeCells.flatMap((c) =>
            c.error ? [`${m.name}, ${c.row} x ${c.benchmark}: flipped documents not listed: ${c.error}`] : [],
          ),
        ),
      );
      if (options.format === "md") return { text: renderMarkdown(report), warnings };
      if (options.script === undefined) throw new Error("the HTML report needs the heatmap bundle (dist/report.js)");
      return { text: renderHtml(report, { script: options.script }), warnings };
    }
  }
}
