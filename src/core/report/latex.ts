// LaTeX report: per model, a booktabs table of AIS at one k (abilities down, benchmarks across),
// ready to \input into a paper. Significant cells carry a star; undefined ones read n/a with a
// lettered note in the caption. Needs \usepackage{booktabs}.
import { formatConfidence, formatCount, formatFixed, formatK } from "./format";
import { rulesOf } from "./model";
import type { KSection, ModelReport, ProfileReport, Report } from "./types";

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
      if (s) out.push("", ...table(model, p, s, rules.length > 1));
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
      `($n = ${formatCount(s.n).replace(/,/g, "{,}")}$ of ${formatCount(p.parameters).replace(/,/g, "{,}")} parameters zeroed${p.method === "signed" ? ", ranked by $-\\theta g$" : labelRule ? ", ranked by $|\\theta g|$" : ""}). ${notes.join(" ")}}`,
    `\\label{tab:ais-${labelKey(model.name)}${labelRule ? `-${p.method}` : ""}-k${formatK(s.k).replace(/[^0-9a-z]/gi, "")}}`,
    "\\end{table}",
  );
  return lines;
}
