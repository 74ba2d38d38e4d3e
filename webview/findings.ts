// The results view's header: the failure signatures found in the profile shown (the rule and k
// the controls chose), each with the figures that trigger it, its threshold and its remedy.
import type { Finding } from "../src/core/report/types";
import { element } from "./dom";

/** The findings as a list under the run's title; a quiet line when there are none. */
export function findingsHeader(findings: readonly Finding[]): HTMLElement {
  if (findings.length === 0) return element("p", "Failure signatures: none found.", "muted findings-none");
  const box = element("section", undefined, "findings");
  box.setAttribute("aria-label", "failure signatures");
  box.append(element("h3", `Failure signatures found (${findings.length})`));
  const list = element("ul");
  for (const f of findings) {
    const item = element("li", undefined, "finding");
    item.append(
      element("strong", f.title),
      element("div", `${f.figures} (threshold: ${f.threshold})`, "muted"),
      element("div", `Remedy: ${f.remedy}.`),
    );
    list.append(item);
  }
  box.append(list);
  return box;
}
