// Markdown report (GitHub-flavoured tables): the run's metadata, baseline accuracies, and per
// model and k the AIS table with intervals, specificity, ability overlap, flips and the flipped
// documents of negative cells. Names from user files are escaped so they cannot break a table.
import { formatConfidence, formatCount, formatFixed, formatInterval, formatK } from "./format";
import type { FlippedDocument, KSection, ModelReport, Report, ReportCell } from "./model";

/** Escapes Markdown's inline syntax and the table separator; line breaks become spaces. */
export function escapeMarkdown(text: string): string {
  return text.replace(/[\r\n]+/g, " ").replace(/[\\`*_[\]<>|#~]/g, (c) => `\\${c}`);
}

function table(header: string[], rows: string[][], align: ("l" | "r")[]): string[] {
  const sep = align.map((a) => (a === "r" ? "---:" : "---"));
  return [header, sep, ...rows].map((r) => `| ${r.join(" | ")} |`);
}

const num = (v: number, digits = 3) => formatFixed(v, digits);

export function renderMarkdown(report: Report): string {
  const { run } = report;
  const out: string[] = [`# Benchmark profile: run ${escapeMarkdown(run.id)}`, ""];
  out.push(...table(["", ""], [
    ["run", escapeMarkdown(run.id)],
    ["created", escapeMarkdown(run.created)],
    ["config", escapeMarkdown(run.configFile)],
    ["runner", escapeMarkdown(run.runnerVersion ?? "unknown")],
    ["metric", report.metric],
    ["results", escapeMarkdown(run.resultsFile)],
  ], ["l", "l"]), "");
  out.push(
    "AIS(a, b) = (P_b(theta) - P_b(theta_a)) / (P_b(theta) - P_b(chance)): the share of the benchmark's above-chance score " +
      "that zeroing the ability's top-k parameters removes. Near 1: the benchmark depends on the ability; negative: the ability interferes.",
    "",
  );
  for (const model of report.models) out.push(...modelSection(model, report.metric));
  return out.join("\n").replace(/\n{3,}/g, "\n\n").trimEnd() + "\n";
}

function modelSection(model: ModelReport, metric: string): string[] {
  const out = [`## Model ${escapeMarkdown(model.name)}`, ""];
  const p = model.profile;
  const meta: string[][] = [["path", escapeMarkdown(model.path)], ["dtype", model.dtype]];
  if (p) {
    meta.push(
      ["parameters", `${formatCount(p.parameters)} (${formatCount(p.candidates)} MLP weights can be ablated)`],
      ["k sweep", p.k.map(formatK).join(", ")],
      ["selections", p.selections.join(", ")],
      ["seed", String(p.seed)],
      ["bootstrap", `${p.bootstrap.resamples} paired resamples, ${formatConfidence(p.bootstrap.confidence)} percentile intervals`],
      ["abilities", p.abilities.map((a) => `${escapeMarkdown(a.name)} (${a.sequences} items)`).join("; ")],
    );
  }
  out.push(...table(["", ""], meta, ["l", "l"]), "");
  out.push("### Baseline accuracy", "");
  out.push(...table(["benchmark", "items", "acc", "acc_norm", "chance"],
    model.baseline.map((b) => [escapeMarkdown(b.name), String(b.items), num(b.acc), num(b.acc_norm), num(b.chance)]), ["l", "r", "r", "r", "r"]), "");
  if (!p) {
    out.push("The run's config has no abilities: it scored the benchmarks only, so there is no AIS.", "");
    return out;
  }
  const confidence = formatConfidence(p.bootstrap.confidence);
  for (const s of p.sections) out.push(...kSection(s, p.parameters, metric, confidence));
  return out;
}

function kSection(s: KSection, parameters: number, metric: string, confidence: string): string[] {
  const out = [`### k = ${formatK(s.k)} (n = ${formatCount(s.n)} of ${formatCount(parameters)} parameters zeroed)`, ""];
  const header = ["ability", ...s.benchmarks.map(escapeMarkdown)];
  const align: ("l" | "r")[] = ["l", ...s.benchmarks.map(() => "r" as const)];
  const label = (text: string) => escapeMarkdown(text);

  out.push(`**AIS (${metric})** with ${confidence} CI; \\* = the CI excludes 0; n/a (i) = undefined, reason i below.`, "");
  out.push(...table(header, s.rows.map((r) => [label(r.label), ...r.cells.map(aisText)]), align), "");
  if (s.reasons.length > 0) out.push(...s.reasons.map((r, i) => `${i + 1}. ${escapeMarkdown(r)}`), "");

  if (s.hasSpecificity) {
    out.push(`**Specificity**: AIS minus the random control's AIS at the same k, with ${confidence} CI.`, "");
    const top = s.rows.filter((r) => r.selection === "top");
    out.push(...table(header, top.map((r) => [label(r.label), ...r.cells.map(specificityText)]), align), "");
  }

  if (s.overlap) {
    const o = s.overlap;
    out.push(`**Ability overlap**: Jaccard index of the top-k parameter sets, |A ∩ B| in parentheses.`, "");
    out.push(...table(["", ...o.abilities.map(escapeMarkdown)],
      o.abilities.map((a, i) => [escapeMarkdown(a), ...o.abilities.map((_, j) => `${num(o.jaccard[i]![j]!)} (${formatCount(o.intersections[i]![j]!)})`)]),
      ["l", ...o.abilities.map(() => "r" as const)]), "");
  }

  out.push("**Flips**: documents the ablation turned right → wrong / wrong → right.", "");
  out.push(...table(header, s.rows.map((r) => [label(r.label), ...r.cells.map((c) => `${c.flips.rightToWrong} / ${c.flips.wrongToRight}`)]), align), "");

  if (s.negativeCells.length > 0) {
    out.push(`**Flipped documents of cells with a negative AIS** (log-likelihood of each choice; the predicted choice in bold).`, "");
    for (const cell of s.negativeCells) {
      const ci = cell.ci ? ` ${formatInterval(cell.ci, 3)}` : "";
      out.push(`#### ${escapeMarkdown(cell.row)} × ${escapeMarkdown(cell.benchmark)}: AIS ${num(cell.ais)}${ci}${cell.significant ? " \\*" : ""}`, "");
      if (cell.error) {
        out.push(`The documents could not be recovered: ${escapeMarkdown(cell.error)}`, "");
        continue;
      }
      out.push(...table(["document", "flip", "target", "baseline → ablated", "baseline log-likelihoods", "ablated log-likelihoods"],
        cell.documents.map((d) => documentRow(d, metric)), ["r", "l", "r", "l", "l", "l"]), "");
      if (cell.omitted > 0) out.push(`… and ${cell.omitted} more (the JSON report lists them all).`, "");
    }
  }
  return out;
}

function aisText(c: ReportCell): string {
  if (c.ais === null) return `n/a (${c.reason})`;
  return `${num(c.ais)}${c.ci ? ` ${formatInterval(c.ci, 3)}` : ""}${c.significant ? " \\*" : ""}`;
}

function specificityText(c: ReportCell): string {
  const s = c.specificity;
  if (!s) return "";
  if (s.value === null) return `n/a (${s.reason})`;
  return `${num(s.value)}${s.ci ? ` ${formatInterval(s.ci, 3)}` : ""}${s.significant ? " \\*" : ""}`;
}

function documentRow(d: FlippedDocument, metric: string): string[] {
  const scores = (logprobs: number[], predicted: number) => logprobs.map((lp, i) => {
    const perByte = metric === "acc_norm" ? ` (${formatFixed(lp / Math.max(1, d.choiceBytes[i] ?? 1), 3)}/B)` : "";
    const text = `${i}: ${formatFixed(lp, 2)}${perByte}`;
    return i === predicted ? `**${text}**` : text;
  }).join(", ");
  return [
    String(d.index),
    d.direction === "right_to_wrong" ? "right → wrong" : "wrong → right",
    String(d.target),
    `${d.baselinePrediction} → ${d.ablatedPrediction}`,
    scores(d.baselineLogprobs, d.baselinePrediction),
    scores(d.ablatedLogprobs, d.ablatedPrediction),
  ];
}
