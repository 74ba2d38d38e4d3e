// The fluency measure as reports show it (docs/method.md, "Fluency"): a row under each heatmap
// with every variant's perplexity of the neutral text against the model's, and the AIS cells of a
// variant that lost its fluency greyed, with the reason first in their tooltips. Its AIS then
// measures a model that no longer writes plain text, not the loss of one ability.
import type { ModelFluency, VariantFluency } from "../results/schema";
import { formatFixed } from "./format";
import type { Heatmap, ReportRow } from "./types";

/** Fill and text of a greyed cell: lighter than an undefined one, its value still readable. */
export const NOT_FLUENT_FILL = "#ececec";
const NOT_FLUENT_TEXT = "#8a8a8a";

/** Why a variant's cells are greyed, in one sentence. */
export function notFluentReason(f: VariantFluency, model: ModelFluency): string {
  return (
    `this variant lost its fluency: its perplexity of the neutral text is ${formatFixed(f.perplexity, 2)}, ` +
    `${formatFixed(f.perplexity_ratio, 2)} times the unablated model's ${formatFixed(model.perplexity, 2)} ` +
    `(threshold ${model.max_perplexity_ratio}), so its AIS measures broken text more than a lost ability`
  );
}

/** A row's fluency in a few characters: "14.02 (1.08x)", "45.10 (3.22x, not fluent)"; "–" without a measure. */
export function fluencyText(f: VariantFluency | undefined): string {
  if (!f) return "–";
  return `${formatFixed(f.perplexity, 2)} (${formatFixed(f.perplexity_ratio, 2)}x${f.fluent ? "" : ", not fluent"})`;
}

/** The heatmap with every cell of a row that lost its fluency greyed, the reason first in its tooltip. */
export function greyNotFluent(heatmap: Heatmap, rows: readonly ReportRow[], model: ModelFluency | undefined): Heatmap {
  if (!model || !rows.some((r) => r.fluency && !r.fluency.fluent)) return heatmap;
  return {
    ...heatmap,
    cells: heatmap.cells.map((cell) => {
      const f = rows[cell.row]?.fluency;
      if (!f || f.fluent) return cell;
      return { ...cell, fill: NOT_FLUENT_FILL, text: NOT_FLUENT_TEXT, tooltip: [notFluentReason(f, model), ...cell.tooltip] };
    }),
  };
}
