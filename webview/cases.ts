// The documents behind a selected cell: those the ablation turned from wrong to right (what makes
// AIS negative) and from right to wrong, each with the text the model read, its choices or target,
// and the scores before and after; each opens in its data file.
import type { CaseDocument, CellCases } from "../src/core/report/cases";
import { documentName } from "../src/core/report/documentName";
import { element, table } from "./dom";

function choiceDocument(d: Extract<CaseDocument, { baselineLogprobs: number[] }>): HTMLElement {
  const choices = d.text?.choices ?? d.baselineLogprobs.map((_, i) => `choice ${i}`);
  const mark = (i: number) =>
    [i === d.target ? "target" : "", i === d.baselinePrediction ? "before" : "", i === d.ablatedPrediction ? "after" : ""]
      .filter(Boolean)
      .join(", ");
  return table(
    ["choice", "log-prob before", "log-prob after", ""],
    choices.map((c, i) => [
      `${String.fromCharCode(65 + i)}. ${c}`,
      d.baselineLogprobs[i]!.toFixed(3),
      d.ablatedLogprobs[i]!.toFixed(3),
      mark(i),
    ]),
    "choices",
  );
}

function generationDocument(d: Extract<CaseDocument, { kind: "generate_until" }>): HTMLElement {
  return table(
    ["", "answer", "generation"],
    [
      ["target", d.target, ""],
      ["before", d.baselineAnswer, d.baselineResponse],
      ["after", d.ablatedAnswer, d.ablatedResponse],
    ],
    "choices",
  );
}

function documentEntry(d: CaseDocument, open: (file: string, line: number) => void): HTMLElement {
  const entry = element("div", undefined, `case ${d.direction}`);
  const head = element("div", undefined, "case-head");
  const direction = d.direction === "wrong_to_right" ? "wrong → right" : "right → wrong";
  const name = documentName({ index: d.index, ...(d.id !== undefined ? { id: d.id } : {}), ...(d.place ? { line: d.place.line } : {}) });
  head.append(element("strong", name), element("span", ` · ${direction}`));
  if (d.place) {
    const link = element("a", d.place.file.split("/").pop() ?? d.place.file);
    link.href = "#";
    link.title = `Open ${d.place.file} at line ${d.place.line}`;
    link.addEventListener("click", (e) => {
      e.preventDefault();
      open(d.place!.file, d.place!.line);
    });
    head.append(element("span", " · "), link);
  }
  entry.append(head);
  if (d.text) entry.append(element("pre", d.text.context));
  entry.append(d.kind === "generate_until" ? generationDocument(d) : choiceDocument(d));
  return entry;
}

export function casesList(cases: CellCases, open: (file: string, line: number) => void): HTMLElement {
  const list = element("div");
  const { ref } = cases;
  const wrongToRight = cases.documents.filter((d) => d.direction === "wrong_to_right");
  const rightToWrong = cases.documents.filter((d) => d.direction === "right_to_wrong");
  const who = ref.ability === null ? "the random control" : `${ref.ability} (${ref.selection})`;
  list.append(
    element(
      "h4",
      `${who} × ${ref.benchmark} at k = ${ref.k} (${cases.metric}): ${wrongToRight.length} wrong → right, ${rightToWrong.length} right → wrong`,
    ),
  );
  if (cases.stale) list.append(element("p", cases.stale, "warning"));
  if (cases.problem) {
    // A task that does not load (its Python may not run here) still gives its documents' lines.
    const without = cases.documents.some((d) => d.place) ? "the text the model read" : "their text or line";
    list.append(element("p", `${cases.problem}: the documents are listed without ${without}.`, "warning"));
  }
  if (cases.documents.length === 0) list.append(element("p", "The ablation flipped no document of this benchmark.", "muted"));
  for (const d of [...wrongToRight, ...rightToWrong]) list.append(documentEntry(d, open));
  return list;
}
