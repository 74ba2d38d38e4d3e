// LaTeX report: per model, a booktabs table of AIS at one k (abilities down, benchmarks across),
// ready to \input into a paper. Significant cells carry a star; undefined ones read n/a with a
// lettered note in the caption. The checks of that k follow as tables of their own: the expected
// abilities (`expects`), the consistency of second diagnostic sets (`of`) and the interference of
// two abilities ablated together (`ablation.pairs`): each from report/tables.ts's data, written
// here in LaTeX. Needs \usepackage{booktabs}.
import { formatConfidence, formatCount, formatFixed, formatK, oneLine } from "./format";
import { rulesOf } from "./model";
import * as tables from "./tables";
import { writeInline, type Inline, type InlineStyle, type TableCell, type TableData, type TableRow } from "./tables";
import { correctionName, formatP, NOISE_WORDS, randomNullWords, SATURATED_WORDS, testWords } from "./stars";
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

/**
 * Text as LaTeX prints it literally: its ten special characters (and < > |) replaced by commands;
 * line breaks as spaces (a break would end a comment line early, two a paragraph) and other
 * control characters visible (format.ts oneLine, whose carets are then escaped as any).
 */
export function escapeLatex(text: string): string {
  return oneLine(text).replace(/[\\&%$#_{}~^<>|]/g, (c) => SPECIALS[c]!);
}

// Numbers of the run printed as they are go through the escape of its text (defence in depth: a
// field is a number only once the run folder's check has passed); fixed-decimal figures are digits
// by construction.
const whole = (n: number) => escapeLatex(String(n));
const kText = (k: number) => escapeLatex(formatK(k));

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
      if (tables.testsTable(s)) out.push("", ...testsLatex(checks));
      if (tables.randomNullTable(s) && s.randomDraws !== null) out.push("", ...randomNullLatex(checks));
      if (s.noise.length > 0) out.push("", ...noiseLatex(checks));
    }
  }
  return out.join("\n") + "\n";
}

function table(model: ModelReport, p: ProfileReport, s: KSection, labelRule: boolean): string[] {
  const metric = s.metricLabel;
  const letters = s.reasons.map((_, i) => String.fromCharCode(97 + (i % 26)) + (i >= 26 ? String(Math.floor(i / 26)) : ""));
  const lines = latexTabular(tables.aisTable(s), letters);
  const interval = `the ${escapeLatex(formatConfidence(p.bootstrap.confidence))} paired-bootstrap CI, ${whole(p.bootstrap.resamples)} resamples`;
  const notes = [
    tables.testsTable(s)
      ? `$^{*}$: ${escapeLatex(p.starWords)}; each cell's q, p and test are in Table~\\ref{${tableLabel("tests", model, p, s, labelRule)}}.`
      : `$^{*}$: ${escapeLatex(p.starWords)} (${interval}).`,
    ...(s.hasSaturated ? [`$^{\\mathrm{sat}}$: ${escapeLatex(SATURATED_WORDS)}.`] : []),
    ...s.reasons.map((r, i) => `n/a$^{${letters[i]}}$: ${escapeLatex(r)}`),
  ];
  lines.push(
    `\\caption{Ability Impact Scores (${escapeLatex(metric)}) of ${escapeLatex(model.name)} at $k = ${kText(s.k)}$ ` +
      `($n = ${latexCount(s.n)}$ of ${latexCount(p.parameters)} parameters zeroed${p.method === "signed" ? ", ranked by $-\\theta g$" : labelRule ? ", ranked by $|\\theta g|$" : ""}${allLayers(p)}). ${notes.join(" ")}}`,
    `\\label{${tableLabel("ais", model, p, s, labelRule)}}`,
    "\\end{table}",
  );
  return lines;
}

/** A table's label: its kind, the model, the rule when there are several, the k's digits. */
function tableLabel(key: string, model: ModelReport, p: ProfileReport, s: KSection, labelRule: boolean): string {
  return `tab:${key}-${labelKey(model.name)}${labelRule ? `-${ruleKey(p)}` : ""}-k${formatK(s.k).replace(/[^0-9a-z]/gi, "")}`;
}

/** A whole number with LaTeX's thousands separators (a comma in math mode needs braces). */
function latexCount(n: number): string {
  return formatCount(n).replace(/,/g, "{,}");
}

/** A table's caption tail and label: the model, the k and (with several rules) the rule. */
function captionOf(c: CheckTable, what: string, key: string): string[] {
  const rule = (c.labelRule ? (c.p.method === "signed" ? ", ranked by $-\\theta g$" : ", ranked by $|\\theta g|$") : "") + allLayers(c.p);
  return [
    `\\caption{${what} (${escapeLatex(c.model.name)}, $k = ${kText(c.s.k)}$${rule}).}`,
    `\\label{${tableLabel(key, c.model, c.p, c.s, c.labelRule)}}`,
    "\\end{table}",
  ];
}

/**
 * Inline content in LaTeX: names escaped, figures in math mode with two decimals (a paper's column
 * is narrow) and LaTeX's minus, the mark of a significant figure a superscript star.
 */
const LATEX_INLINE: InlineStyle = {
  words: (text) => text.replace(/–/g, "--").replace(/ρ/g, "$\\rho$").replace(/</g, "\\textless{}"),
  text: escapeLatex,
  figure: (v, digits) => `$${formatFixed(v, Math.min(digits, 2))}$`,
  starred: (figure) => `${figure.slice(0, -1)}^{*}$`,
  muted: (content) => content,
  strong: (content) => `\\textbf{${content}}`,
  variable: (name) => `$${name}$`,
  count: latexCount,
  factor: (value) => `$\\times ${whole(value)}$`,
  pvalue: (p) => `$${formatP(p)}$`,
};
const inlineLatex = (parts: Inline[]) => writeInline(parts, LATEX_INLINE);

/** Headers, and the report's own words heading a row, start with a capital in a paper's table. */
function capitalised(parts: Inline[]): Inline[] {
  const [first, ...rest] = parts;
  // a Latin letter only: ρ is a symbol, not a word
  return typeof first === "string" ? [first.replace(/^[a-z]/, (c) => c.toUpperCase()), ...rest] : parts;
}

/**
 * A table from its data, up to the end of its tabular: a booktabs rule between row groups.
 * `letters`: the notes an undefined estimate's reason number refers to.
 */
function latexTabular(t: TableData, letters: string[] = []): string[] {
  const header = t.columns.map((c) => inlineLatex(capitalised(c.short !== undefined ? [c.short] : c.header)));
  const row = (r: TableRow) =>
    r.cells.map((c, i) => (i === 0 && t.rowHeads ? inlineLatex(capitalised(c as Inline[])) : cellLatex(c, letters))).join(" & ");
  return [
    "\\begin{table}[t]",
    "\\centering",
    "\\small",
    `\\begin{tabular}{${t.columns.map((c) => c.align).join("")}}`,
    "\\toprule",
    `${header.join(" & ")} \\\\`,
    "\\midrule",
    ...t.rows.flatMap((r) => [...(r.group ? ["\\midrule"] : []), `${row(r)} \\\\`]),
    "\\bottomrule",
    "\\end{tabular}",
  ];
}

/** A cell in LaTeX: an estimate without its interval (the caption says what the star means), an interference with it. */
function cellLatex(c: TableCell, letters: string[]): string {
  if (Array.isArray(c)) return inlineLatex(c);
  switch (c.kind) {
    case "estimate":
      if (c.value === null) return `n/a$^{${letters[(c.reason ?? 1) - 1]}}$`;
      if (c.saturated) return `$${formatFixed(c.value, 2)}^{${c.significant ? "*," : ""}\\mathrm{sat}}$`;
      return inlineLatex([{ figure: c.value, starred: c.significant }]);
    case "test": {
      if (c.q === null && c.p === null) return "--";
      const q = c.q === null ? "--" : inlineLatex([{ pvalue: c.q }]);
      const mark = `${c.significant ? "$^{*}$" : ""}${c.saturated ? "$^{\\mathrm{sat}}$" : ""}`;
      return `${q}${mark}${c.p === null ? "" : ` (${inlineLatex([{ pvalue: c.p }])}${c.test ? `, ${c.test === "mcnemar" ? "McNemar" : "bootstrap"}` : ""})`}`;
    }
    case "null": {
      const r = c.randomNull;
      if (!r) return "--";
      return `${inlineLatex([{ pvalue: r.p }])}${r.margin === null ? "" : ` ($${r.margin > 0 ? "+" : ""}${formatFixed(r.margin, 2)}$)`}`;
    }
    case "interference": {
      const x = c.cell;
      if (x.interference === null) return x.reason === undefined ? "n/a" : `n/a$^{${letters[x.reason - 1]}}$`;
      const ci = x.interferenceCi ? ` [${formatFixed(x.interferenceCi.low, 2)}, ${formatFixed(x.interferenceCi.high, 2)}]` : "";
      return `$${formatFixed(x.interference, 2)}${x.significant ? "^{*}" : ""}${ci}$`;
    }
    default:
      throw new Error(`the LaTeX report writes no table with ${c.kind} cells`);
  }
}

function expectationTable(c: CheckTable): string[] {
  return [
    ...latexTabular(tables.expectationsTable(c.s)),
    ...captionOf(
      c,
      `Expected abilities (\\texttt{expects}) against the measured AIS: an ability shows when its AIS is positive and starred ($^{*}$: ${escapeLatex(c.p.starWords)}); $\\rho$ is Spearman's rank correlation of the weights and the AIS`,
      "expects",
    ),
  ];
}

function consistencyTable(c: CheckTable): string[] {
  const confidence = escapeLatex(formatConfidence(c.p.bootstrap.confidence));
  return [
    ...latexTabular(tables.consistencyTable(c.s)),
    ...captionOf(
      c,
      `Abilities measured with a second diagnostic set: Spearman's $\\rho$ of the two sets' AIS across the benchmarks, and the benchmarks where one set's ${confidence} CI excludes the other's AIS`,
      "consistency",
    ),
  ];
}

function pairsTable(c: CheckTable): string[] {
  const confidence = escapeLatex(formatConfidence(c.p.bootstrap.confidence));
  const letters = reasonLetters(c.s);
  const cited = [...new Set(c.s.pairs.flatMap((p) => p.cells.flatMap((x) => (x.interference === null && x.reason ? [x.reason] : []))))];
  const notes = cited.map((r) => `; n/a$^{${letters[r - 1]}}$: ${escapeLatex(c.s.reasons[r - 1] ?? "")}`).join("");
  return [
    ...latexTabular(tables.pairsTable(c.s), letters),
    ...captionOf(
      c,
      `Two abilities ablated together (the union of their top sets, $n$ weights): the interference $\\mathrm{AIS}(A{+}B) - \\mathrm{AIS}(A) - \\mathrm{AIS}(B)$ per benchmark with its ${confidence} CI ($^{*}$: ${escapeLatex(c.p.starWords)})${notes}`,
      "pairs",
    ),
  ];
}

/** The letters of a section's reasons: a, b, ... (a1, b1, ... past 26). */
function reasonLetters(s: KSection): string[] {
  return s.reasons.map((_, i) => String.fromCharCode(97 + (i % 26)) + (i >= 26 ? String(Math.floor(i / 26)) : ""));
}

/** The tests behind the AIS table's stars: per cell its q and, in parentheses, its p. */
function testsLatex(c: CheckTable): string[] {
  const correction = c.p.stats
    ? `${escapeLatex(correctionName(c.p.stats))} over the table, starred below ${whole(c.p.stats.threshold)}`
    : "";
  return [
    ...latexTabular(tables.testsTable(c.s)!),
    ...captionOf(
      c,
      `The tests behind the stars of the AIS table: per cell its q (${correction}) and in parentheses its two-sided p; the column's test in its header ` +
        `(McNemar: ${escapeLatex(testWords("mcnemar"))}; bootstrap: ${escapeLatex(testWords("bootstrap"))})`,
      "tests",
    ),
  ];
}

/** The top cells against the random control's draws. */
function randomNullLatex(c: CheckTable): string[] {
  return [
    ...latexTabular(tables.randomNullTable(c.s)!),
    ...captionOf(
      c,
      `The random null: ${escapeLatex(randomNullWords(c.s.randomDraws ?? 0))}; per top cell its p and (in parentheses) its margin in sds`,
      "null",
    ),
  ];
}

/** Each benchmark's signal, noise and snr, snr descending. */
function noiseLatex(c: CheckTable): string[] {
  const noise = c.s.noise.filter((n) => n.isNoise);
  const verdict =
    noise.length === 0
      ? "Every benchmark's snr is at least 1"
      : `The profile is noise on ${noise.map((n) => escapeLatex(n.column)).join(", ")}`;
  return [...latexTabular(tables.noiseTable(c.s)!), ...captionOf(c, `Benchmark noise: ${escapeLatex(NOISE_WORDS)}. ${verdict}`, "noise")];
}

/** A rule in a table's label: its method, and `-all` over every layer's weights. */
function ruleKey(p: ProfileReport): string {
  return p.candidate_set === "all" ? `${p.method}-all` : p.method;
}

/** The caption's note of a profile over every layer's weights (`ablation.candidates: all`). */
function allLayers(p: ProfileReport): string {
  return p.candidate_set === "all" ? ", attention and MLP weights as candidates" : "";
}
