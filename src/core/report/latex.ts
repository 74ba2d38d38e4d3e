// LaTeX report: per model, a booktabs table of AIS at one k (abilities down, benchmarks across),
// ready to \input into a paper. Significant cells carry a star; undefined ones read n/a with a
// lettered note in the caption. The checks of that k follow as tables of their own: the expected
// abilities (`expects`), the consistency of second diagnostic sets (`of`) and the interference of
// two abilities ablated together (`ablation.pairs`). Needs \usepackage{booktabs}.
import { formatConfidence, formatCount, formatFixed, formatK } from "./format";
import { rulesOf } from "./model";
import type { KSection, ModelReport, ProfileReport, Report } from "./types";

/** What a table of one k's checks needs: its model, rule and section. */
interface CheckTable {
  model: ModelReport;
  p: ProfileReport;
  s: KSection;
  labelRule: boolean;
}

const SPECIALS: Record<string, string> = {
  "\\": "\\textbackslash{}",
  "&": "\\&",
  "%": "\\%",
  $: "\\$",
  "#": "\\#",
  _: "\\_",
  "{": "\\{",
  "}": "\\}",
  "~": "\\textasciitilde{}",
  "^": "\\textasciicircum{}",
  "<": "\\textless{}",
  ">": "\\textgreater{}",
  "|": "\\textbar{}",
};

/** Text as LaTeX prints it literally: its ten special characters (and < > |) replaced by commands. */
export function escapeLatex(text: string): string {
  return text.replace(/[\\&%$#_{}~^<>|]/g, (c) => SPECIALS[c]!).replace(/[\r\n]+/g, " ");
}

/** A label key from a name: letters, digits and dashes. */
function labelKey(text: string): string {
  return (
    text
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-|-$/g, "") || "model"
  );
}

export function renderLatex(report: Report): string {
  const out = [
    `% Benchmark Profiler: AIS (${report.metric}${report.models.some((m) => m.hasGeneration) ? "; exact_match for generate_until benchmarks" : ""}) ` +
      // the run id is the results file's text: escaped, it cannot end this comment line
      `of run ${escapeLatex(report.run.id)}. Needs \\usepackage{booktabs}.`,
  ];
  for (const model of report.models) {
    // a table per rule when the model was ranked by several, each labelled with its rule
    const rules = rulesOf(model);
    for (const p of rules) {
      const s = p.sections[p.sections.length - 1];
      if (!s) continue;
      out.push("", ...table(model, p, s, rules.length > 1));
      const checks = { model, p, s, labelRule: rules.length > 1 };
      if (s.expectations.length > 0) out.push("", ...expectationTable(checks));
      if (s.consistency.length > 0) out.push("", ...consistencyTable(checks));
      if (s.pairs.length > 0) out.push("", ...pairsTable(checks));
    }
  }
  return out.join("\n") + "\n";
}

function table(model: ModelReport, p: ProfileReport, s: KSection, labelRule: boolean): string[] {
  const metric = s.metricLabel;
  const letters = s.reasons.map((_, i) => String.fromCharCode(97 + (i % 26)) + (i >= 26 ? String(Math.floor(i / 26)) : ""));
  const cellText = (c: KSection["rows"][number]["cells"][number]): string => {
    if (c.ais === null) return `n/a$^{${letters[(c.reason ?? 1) - 1]}}$`;
    return `$${formatFixed(c.ais, 2)}${c.significant ? "^{*}" : ""}$`;
  };
  const lines = [
    "\\begin{table}[t]",
    "\\centering",
    "\\small",
    `\\begin{tabular}{l${"r".repeat(s.benchmarks.length)}}`,
    "\\toprule",
    `Ability & ${s.columns.map(escapeLatex).join(" & ")} \\\\`,
    "\\midrule",
  ];
  s.rows.forEach((row, i) => {
    if (i > 0 && row.selection !== s.rows[i - 1]!.selection) lines.push("\\midrule");
    const label = row.selection === "random" ? "Random (control)" : escapeLatex(row.label);
    lines.push(`${label} & ${row.cells.map(cellText).join(" & ")} \\\\`);
  });
  lines.push("\\bottomrule", "\\end{tabular}");
  const notes = [
    `$^{*}$: the ${escapeLatex(formatConfidence(p.bootstrap.confidence))} paired-bootstrap CI (${p.bootstrap.resamples} resamples) excludes 0.`,
    ...s.reasons.map((r, i) => `n/a$^{${letters[i]}}$: ${escapeLatex(r)}`),
  ];
  lines.push(
    `\\caption{Ability Impact Scores (${escapeLatex(metric)}) of ${escapeLatex(model.name)} at $k = ${formatK(s.k)}$ ` +
      `($n = ${formatCount(s.n).replace(/,/g, "{,}")}$ of ${formatCount(p.parameters).replace(/,/g, "{,}")} parameters zeroed${p.method === "signed" ? ", ranked by $-\\theta g$" : labelRule ? ", ranked by $|\\theta g|$" : ""}${allLayers(p)}). ${notes.join(" ")}}`,
    `\\label{tab:ais-${labelKey(model.name)}${labelRule ? `-${ruleKey(p)}` : ""}-k${formatK(s.k).replace(/[^0-9a-z]/gi, "")}}`,
    "\\end{table}",
  );
  return lines;
}

/** A number in math mode, its minus sign LaTeX's. */
function mathNumber(x: number, digits = 2): string {
  return `$${formatFixed(x, digits)}$`;
}

/** A table's caption tail and label: the model, the k and (with several rules) the rule. */
function captionOf(c: CheckTable, what: string, key: string): string[] {
  const rule = (c.labelRule ? (c.p.method === "signed" ? ", ranked by $-\\theta g$" : ", ranked by $|\\theta g|$") : "") + allLayers(c.p);
  return [
    `\\caption{${what} (${escapeLatex(c.model.name)}, $k = ${formatK(c.s.k)}$${rule}).}`,
    `\\label{tab:${key}-${labelKey(c.model.name)}${c.labelRule ? `-${ruleKey(c.p)}` : ""}-k${formatK(c.s.k).replace(/[^0-9a-z]/gi, "")}}`,
    "\\end{table}",
  ];
}

function tabular(columns: string, header: string[], rows: string[][]): string[] {
  return [
    "\\begin{table}[t]",
    "\\centering",
    "\\small",
    `\\begin{tabular}{${columns}}`,
    "\\toprule",
    `${header.join(" & ")} \\\\`,
    "\\midrule",
    ...rows.map((r) => `${r.join(" & ")} \\\\`),
    "\\bottomrule",
    "\\end{tabular}",
  ];
}

function expectationTable(c: CheckTable): string[] {
  const confidence = escapeLatex(formatConfidence(c.p.bootstrap.confidence));
  const rows = c.s.expectations.map((e) => [
    escapeLatex(e.benchmark),
    e.expected
      .map(
        (x) =>
          `${escapeLatex(x.ability)}${x.weight === null ? "" : ` $\\times ${x.weight}$`} (${x.ais === null ? "n/a" : `$${formatFixed(x.ais, 2)}${x.significant ? "^{*}" : ""}$`})`,
      )
      .join("; "),
    `${e.confirmed.length} of ${e.expected.length}`,
    e.unexpected.length === 0 ? "none" : e.unexpected.map(escapeLatex).join("; "),
    e.rankCorrelation === null ? "--" : mathNumber(e.rankCorrelation),
  ]);
  return [
    ...tabular("llrlr", ["Benchmark", "Expected (AIS)", "Show", "Unexpected that show", "$\\rho$"], rows),
    ...captionOf(
      c,
      `Expected abilities (\\texttt{expects}) against the measured AIS: an ability shows when its AIS is positive and its ${confidence} CI excludes 0 ($^{*}$); $\\rho$ is Spearman's rank correlation of the weights and the AIS`,
      "expects",
    ),
  ];
}

function consistencyTable(c: CheckTable): string[] {
  const confidence = escapeLatex(formatConfidence(c.p.bootstrap.confidence));
  const rows = c.s.consistency.map((x) => [
    escapeLatex(x.ability),
    escapeLatex(x.set),
    x.rankCorrelation === null ? "--" : mathNumber(x.rankCorrelation),
    String(x.benchmarks),
    x.disagreements.length === 0
      ? "none"
      : x.disagreements.map((d) => `${escapeLatex(d.benchmark)} (${mathNumber(d.ais)} vs ${mathNumber(d.setAis)})`).join("; "),
  ]);
  return [
    ...tabular("llrrl", ["Ability", "Second set", "$\\rho$", "Benchmarks", "Disagree"], rows),
    ...captionOf(
      c,
      `Abilities measured with a second diagnostic set: Spearman's $\\rho$ of the two sets' AIS across the benchmarks, and the benchmarks where one set's ${confidence} CI excludes the other's AIS`,
      "consistency",
    ),
  ];
}

function pairsTable(c: CheckTable): string[] {
  const confidence = escapeLatex(formatConfidence(c.p.bootstrap.confidence));
  const width = c.s.pairs[0]!.cells.length;
  const rows = c.s.pairs.map((pair) => [
    pair.abilities.map(escapeLatex).join(" + "),
    formatCount(pair.n).replace(/,/g, "{,}"),
    ...pair.cells.map((cell) => {
      if (cell.interference === null) return "n/a";
      const ci = cell.interferenceCi ? ` [${formatFixed(cell.interferenceCi.low, 2)}, ${formatFixed(cell.interferenceCi.high, 2)}]` : "";
      return `$${formatFixed(cell.interference, 2)}${cell.significant ? "^{*}" : ""}${ci}$`;
    }),
  ]);
  return [
    ...tabular(`lr${"r".repeat(width)}`, ["Abilities", "$n$", ...c.s.benchmarks.slice(0, width).map(escapeLatex)], rows),
    ...captionOf(
      c,
      `Two abilities ablated together (the union of their top sets, $n$ weights): the interference $\\mathrm{AIS}(A{+}B) - \\mathrm{AIS}(A) - \\mathrm{AIS}(B)$ per benchmark with its ${confidence} CI ($^{*}$: it excludes 0)`,
      "pairs",
    ),
  ];
}

/** A rule in a table's label: its method, and `-all` over every layer's weights. */
function ruleKey(p: ProfileReport): string {
  return p.candidate_set === "all" ? `${p.method}-all` : p.method;
}

/** The caption's note of a profile over every layer's weights (`ablation.candidates: all`). */
function allLayers(p: ProfileReport): string {
  return p.candidate_set === "all" ? ", attention and MLP weights as candidates" : "";
}
