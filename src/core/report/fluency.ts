// The fluency measure as reports show it (docs/method.md, "Fluency"): a row under each heatmap
// with every variant's perplexity of the neutral text against the model's, and the AIS cells of a
// variant that lost its fluency greyed, with the reason first in their tooltips. Its AIS then
// measures a model that no longer writes plain text, not the loss of one ability.
import { profilesOf, type ModelFluency, type Results, type VariantFluency } from "../results/schema";
import { formatFixed, formatK, ruleLabel } from "./format";
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

/**
 * A finished run's fluency in a few lines, one per model that has the measure (the Runs view's
 * summary): the unablated model's perplexity, the worst variant's ratio to it, and the variants
 * past the threshold by name. Empty for a run without the measure.
 */
export function runFluencyLines(results: Results): string[] {
  return results.models.flatMap((model) => {
    const profiles = profilesOf(model);
    const f = profiles[0]?.fluency;
    if (!f) return [];
    const several = profiles.length > 1;
    // the random control of a set is in each of its rules' profiles: counted once
    const seen = new Set<string>();
    const measured = profiles.flatMap((p) =>
      p.variants.flatMap((v) => {
        const name = `${v.ability ?? "random"} ${v.selection} k = ${formatK(v.k)}${several && v.ability !== null ? ` (${ruleLabel(p)})` : v.ability === null && p.candidate_set ? " (all layers)" : ""}`;
        if (!v.fluency || seen.has(name)) return [];
        seen.add(name);
        return [{ name, fluency: v.fluency }];
      }),
    );
    if (measured.length === 0) return [];
    const worst = measured.reduce((a, b) => (b.fluency.perplexity_ratio > a.fluency.perplexity_ratio ? b : a));
    const marked = measured.filter((m) => !m.fluency.fluent);
    const ratio = (x: VariantFluency) => `${formatFixed(x.perplexity_ratio, 2)}x`;
    return [
      `${model.name}: perplexity of the ${f.text === "built-in" ? "built-in" : "config's"} neutral text ${formatFixed(f.perplexity, 2)} unablated; ` +
        `worst variant ${worst.name} at ${ratio(worst.fluency)}; ` +
        (marked.length === 0
          ? `all ${measured.length} variants within ${f.max_perplexity_ratio}x`
          : `${marked.length} of ${measured.length} variants past ${f.max_perplexity_ratio}x (not fluent, their AIS greyed): ` +
            marked.map((m) => `${m.name} ${ratio(m.fluency)}`).join("; ")),
    ];
  });
}
