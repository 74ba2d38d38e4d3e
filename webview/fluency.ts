// The results view's row under the heatmap: each row's perplexity of the neutral text against the
// unablated model's (docs/method.md, "Fluency"); a variant past the threshold is marked, and its
// heatmap cells come greyed from the report model.
import type { ProfileView } from "../src/core/report/view";
import { fluencyText } from "../src/core/report/fluency";
import { element, table } from "./dom";

/** The fluency row, or nothing for a run made before the measure existed. */
export function fluencyRow(profile: ProfileView): HTMLElement[] {
  const model = profile.fluency;
  if (!model) return [];
  const marked = profile.rows.filter((r) => r.fluency && !r.fluency.fluent).length;
  const caption = element(
    "p",
    `Fluency: perplexity of the ${model.text === "built-in" ? "built-in" : "config's"} neutral text (the unablated model: ${model.perplexity.toFixed(2)}); ` +
      (marked > 0
        ? `${marked} row(s) past ${model.max_perplexity_ratio} times it are greyed.`
        : `every row within ${model.max_perplexity_ratio} times it.`),
    "hint",
  );
  const rows = table(
    ["row", "perplexity (× the model's)"],
    profile.rows.map((r) => [r.label, fluencyText(r.fluency)]),
    "fluency",
  );
  return [caption, rows];
}
