// Markdown report (GitHub-flavoured tables): the run's metadata, baseline accuracies, and per
// model and k the AIS table with intervals, specificity, ability overlap, flips and the flipped
// documents of negative cells. Names from user files are escaped so they cannot break a table.
import {
  candidatesWord,
  describeRule,
  formatConfidence,
  formatCount,
  formatFixed,
  formatInterval,
  formatK,
  oneLine,
  ruleLabel,
  abilityWords,
} from "./format";
import { ruleComparisons, rulesOf } from "./model";
import { SIGN_DIFFERS_MARK } from "./compareFigure";
import { fluencyText } from "./fluency";
import * as tables from "./tables";
import { writeInline, type Inline, type InlineStyle, type TableCell, type TableData } from "./tables";
import type { ComparisonCell } from "./compare";
import type { ModelFluency } from "../results/schema";
import { correctionName, NOISE_WORDS, randomNullWords, SATURATED_MARK, SATURATED_WORDS, testShort } from "./stars";
import type { KSection, ModelReport, NegativeCell, ProfileReport, Report } from "./types";

/**
 * Escapes Markdown's inline syntax and the table separator; line breaks become spaces and other
 * control characters visible (format.ts oneLine), so a name adds no line, markup or escape sequence.
 */
export function escapeMarkdown(text: string): string {
  return oneLine(text).replace(/[\\`*_[\]<>|#~]/g, (c) => `\\${c}`);
}

function table(header: string[], rows: string[][], align: ("l" | "r")[]): string[] {
  const sep = align.map((a) => (a === "r" ? "---:" : "---"));
  return [header, sep, ...rows].map((r) => `| ${r.join(" | ")} |`);
}

const num = (v: number, digits = 3) => formatFixed(v, digits);
// Numbers of the run printed as they are go through the escape of its text (defence in depth: a
// field is a number only once the run folder's check has passed); fixed-decimal figures and
// intervals are digits by construction.
const whole = (n: number) => escapeMarkdown(String(n));
const kText = (k: number) => escapeMarkdown(formatK(k));

export function renderMarkdown(report: Report): string {
  const { run } = report;
  const out: string[] = [`# Benchmark profile: run ${escapeMarkdown(run.id)}`, ""];
  out.push(
    ...table(
      ["", ""],
      [
        ["run", escapeMarkdown(run.id)],
        ["created", escapeMarkdown(run.created)],
        ["config", escapeMarkdown(run.configFile)],
        ["runner", escapeMarkdown(run.runnerVersion ?? "unknown")],
        [
          "metric",
          report.models.some((m) => m.hasGeneration)
            ? `${report.metric} (multiple choice); exact\\_match (generate\\_until, chance 0)`
            : report.metric,
        ],
        ["results", escapeMarkdown(run.resultsFile)],
      ],
      ["l", "l"],
    ),
    "",
  );
  out.push(
    "AIS(a, b) = (P_b(theta) - P_b(theta_a)) / (P_b(theta) - P_b(chance)): the share of the benchmark's above-chance score " +
      "that zeroing the ability's top-k parameters removes. Near 1: the benchmark depends on the ability; negative: the ability interferes.",
    "",
  );
  for (const model of report.models) out.push(...modelSection(model));
  return (
    out
      .join("\n")
      .replace(/\n{3,}/g, "\n\n")
      .trimEnd() + "\n"
  );
}

/** The failure signatures found (report/signatures.ts), as a list; nothing for a run without abilities. */
function findingsLines(model: ModelReport): string[] {
  if (!model.profile) return [];
  if (model.findings.length === 0) return ["Failure signatures: none found.", ""];
  const several = model.otherMethods.length > 0;
  return [
    `### Failure signatures found (${model.findings.length})`,
    "",
    ...model.findings.map(
      (f) =>
        `- **${escapeMarkdown(several ? `${ruleLabel(f)} rule: ${f.title}` : f.title)}** ${escapeMarkdown(f.figures)} ` +
        `(threshold: ${escapeMarkdown(f.threshold)}). Remedy: ${escapeMarkdown(f.remedy)}.`,
    ),
    "",
  ];
}

function modelSection(model: ModelReport): string[] {
  const out = [`## Model ${escapeMarkdown(model.name)}`, ""];
  const p = model.profile;
  const meta: string[][] = [
    ["path", escapeMarkdown(model.path)],
    ["dtype", escapeMarkdown(model.dtype)],
  ];
  if (p) {
    meta.push(
      ["parameters", `${formatCount(p.parameters)} (${formatCount(p.candidates)} ${candidatesWord(p)} can be ablated)`],
      ["k sweep", escapeMarkdown(p.k.map(formatK).join(", "))],
      ["selections", escapeMarkdown(p.selections.join(", "))],
      [
        "importance",
        rulesOf(model)
          .map((r) => escapeMarkdown(describeRule(r)))
          .join("; "),
      ],
      ["seed", whole(p.seed)],
      ["bootstrap", `${whole(p.bootstrap.resamples)} paired resamples, ${formatConfidence(p.bootstrap.confidence)} percentile intervals`],
      ["abilities", p.abilities.map((a) => `${escapeMarkdown(a.name)} (${escapeMarkdown(abilityWords(a))})`).join("; ")],
    );
  }
  out.push(...table(["", ""], meta, ["l", "l"]), "");
  out.push(...findingsLines(model));
  out.push("### Baseline accuracy", "");
  if (model.hasGeneration)
    out.push(
      "exact\\_match of generate\\_until benchmarks is computed under the task's first filter (the others' exact\\_match in parentheses).",
      "",
    );
  out.push(...markdownTable(tables.baselineTable(model)), "");
  if (!p) {
    out.push("The run's config has no abilities: it scored the benchmarks only, so there is no AIS.", "");
    return out;
  }
  const confidence = formatConfidence(p.bootstrap.confidence);
  const rules = rulesOf(model);
  const several = rules.length > 1;
  if (several) {
    out.push("### The importance rules side by side", "");
    for (const c of ruleComparisons(model)) {
      out.push(`At k = ${kText(c.k)}:`, "", ...markdownTable(tables.rulesTable(c)), "");
    }
  }
  for (const rule of rules)
    for (const s of rule.sections) out.push(...kSection(s, rule, confidence, several ? ruleLabel(rule) : undefined, rule.fluency));
  return out;
}

/** `rule`: named in the heading when the model was ranked by several; `fluency`: the model's, for the row under the table. */
function kSection(s: KSection, p: ProfileReport, confidence: string, rule?: string, fluency?: ModelFluency): string[] {
  const ruleText = rule ? `, ${escapeMarkdown(rule)} rule` : "";
  const out = [`### k = ${kText(s.k)}${ruleText} (n = ${formatCount(s.n)} of ${formatCount(p.parameters)} parameters zeroed)`, ""];
  const metric = s.metricLabel;
  const mixed = new Set(s.metrics).size > 1;
  const label = (text: string) => escapeMarkdown(text);
  const stars = escapeMarkdown(p.starWords);
  const saturated = s.hasSaturated ? `; (${SATURATED_MARK}) = ${escapeMarkdown(SATURATED_WORDS)}` : "";

  out.push(`**AIS (${metric})** with ${confidence} CI; \\* = ${stars}${saturated}; n/a (i) = undefined, reason i below.`, "");
  out.push(...markdownTable(tables.aisTable(s)), "");
  if (s.reasons.length > 0) out.push(...s.reasons.map((r, i) => `${i + 1}. ${escapeMarkdown(r)}`), "");
  out.push(...testsSection(s, p, "ais"));
  const nullTable = tables.randomNullTable(s);
  if (nullTable && s.randomDraws !== null) {
    out.push(
      `**Against the random draws**: ${escapeMarkdown(randomNullWords(s.randomDraws))}. Per top cell, the empirical p and the margin in sds.`,
      "",
    );
    out.push(...markdownTable(nullTable), "");
  }
  out.push(...noiseSection(s));
  if (fluency)
    out.push(
      `**Fluency** (perplexity of the neutral text; the unablated model ${formatFixed(fluency.perplexity, 2)}; past ${whole(fluency.max_perplexity_ratio)}x it a row is not fluent): ` +
        s.rows.map((r) => `${label(r.label)} ${escapeMarkdown(fluencyText(r.fluency))}`).join("; "),
      "",
    );

  if (s.labels.length > 0) {
    const held = s.labels.filter((l) => l.holds).length;
    out.push(
      `**Ability labels**: ablating the labelled ability hurts the benchmark most for ${held} of ${s.labels.length} labelled benchmarks ` +
        "(the AIS of the label's top set, against the largest AIS of that row on a benchmark without the label).",
      "",
    );
    out.push(...markdownTable(tables.labelsTable(s)), "");
  }

  if (s.expectations.length > 0) {
    out.push(
      `**Expected abilities** (\`expects\`): per benchmark, the abilities the config expects it to need, those of them that show ` +
        `(a positive starred AIS, \\* = ${stars}), the abilities not expected that show, and with weights Spearman's ρ of the weights and the AIS.`,
      "",
    );
    out.push(...markdownTable(tables.expectationsTable(s)), "");
  }

  if (s.consistency.length > 0) {
    out.push(
      `**Consistency of abilities measured with a second diagnostic set** (\`of\`): Spearman's ρ of the two sets' AIS across the benchmarks, ` +
        `and the benchmarks where one set's ${confidence} CI excludes the other's AIS.`,
      "",
    );
    out.push(...markdownTable(tables.consistencyTable(s)), "");
  }

  if (s.pairs.length > 0) {
    out.push(
      `**Two abilities at once** (\`ablation.pairs\`): per benchmark, the interference AIS(A+B) − AIS(A) − AIS(B) with its ${confidence} CI ` +
        `(**bold**: starred, ${stars}; 0 when the two effects add up), and in brackets the AIS of the union of the two top sets; ` +
        "n/a (i): undefined, reason i above.",
      "",
    );
    out.push(...markdownTable(tables.pairsTable(s)), "");
  }

  if (s.hasSpecificity) {
    out.push(
      `**Specificity**: AIS minus the random control's AIS at the same k, with ${confidence} CI; \\* = ${stars}; n/a (i): undefined, reason i above.`,
      "",
    );
    out.push(...markdownTable(tables.specificityTable(s)), "");
    out.push(...testsSection(s, p, "specificity"));
  }

  if (s.overlap) {
    out.push(`**Ability overlap**: Jaccard index of the top-k parameter sets, |A ∩ B| in parentheses.`, "");
    out.push(...markdownTable(tables.overlapTable(s)), "");
  }

  if (s.stability.length > 0) {
    out.push(
      `**Ranking stability**: each ability's top ${formatCount(s.n)} ranked from two halves of its diagnostic items (split with the seed), ` +
        "and the Jaccard index of the two sets: near 1, the items are enough for a stable ranking; far below, the ranking depends on which items were drawn.",
      "",
    );
    out.push(...markdownTable(tables.stabilityTable(s)), "");
  }

  if (s.chunked.length > 0) {
    out.push(
      `**Chunked selection against the exact top n**: each ability's \`top_chunked\` set (the authors' released code: the candidates cut into ` +
        `chunks of at least a million, the top ceil(n / candidates × chunk) of each) against its exact top ${formatCount(s.n)}; Jaccard index |C ∩ T| / |C ∪ T|.`,
      "",
    );
    out.push(...markdownTable(tables.chunkedTable(s)), "");
  }

  const lowering = tables.loweringTable(s);
  if (lowering) {
    out.push(
      `**Zeroed weights that lower their own ability's loss**: of each set's ${formatCount(s.n)} weights, those whose zeroing lowers ` +
        "the ability's diagnostic loss to first order (−θ × g < 0); about half of a top set of the paper's \\|θ × g\\| in the demo model, none with `method: signed`.",
      "",
    );
    out.push(...markdownTable(lowering), "");
  }

  out.push("**Flips**: documents the ablation turned right → wrong / wrong → right.", "");
  out.push(...markdownTable(tables.flipsTable(s)), "");

  if (s.negativeCells.length > 0) {
    const what = [
      ...(s.negativeCells.some((c) => c.metric !== "exact_match")
        ? ["multiple choice: log-likelihood of each choice, the predicted choice in bold"]
        : []),
      ...(s.negativeCells.some((c) => c.metric === "exact_match")
        ? ["generation: the filtered answer and the generated text cut at the stop string"]
        : []),
    ];
    out.push(`**Flipped documents of cells with a negative AIS** (${what.join("; ")}).`, "");
    for (const cell of s.negativeCells) out.push(...negativeCellSection(cell, mixed));
  }
  return out;
}

/** The tests behind a table's stars: per cell q and p, the test per column; nothing in a run before them. */
function testsSection(s: KSection, p: ProfileReport, measure: "ais" | "specificity"): string[] {
  const t = tables.testsTable(s, measure);
  if (!t) return [];
  const correction = p.stats
    ? ` (${escapeMarkdown(correctionName(p.stats))} over the table, starred below ${whole(p.stats.threshold)})`
    : "";
  return [
    `**Tests of the ${measure === "ais" ? "AIS" : "specificity"} cells**: per cell its q${correction} and in parentheses its two-sided p; ` +
      "the test in the column's header: McNemar = McNemar's exact test on the flips (0/1 scores), bootstrap = the paired bootstrap's p " +
      "(a task's own scores, groups).",
    "",
    ...markdownTable(t),
    "",
  ];
}

/** Each benchmark's signal, noise and snr, snr descending, and the benchmarks whose profile is noise by name. */
function noiseSection(s: KSection): string[] {
  const t = tables.noiseTable(s);
  if (!t) return [];
  const noise = s.noise.filter((n) => n.isNoise);
  const verdict =
    noise.length === 0
      ? "Every benchmark's snr is at least 1."
      : `The profile is noise on ${noise.map((n) => escapeMarkdown(n.column)).join(", ")}.`;
  return [`**Benchmark noise** at k = ${kText(s.k)}: ${escapeMarkdown(NOISE_WORDS)}. ${verdict}`, "", ...markdownTable(t), ""];
}

function negativeCellSection(cell: NegativeCell, mixed: boolean): string[] {
  const ci = cell.ci ? ` ${formatInterval(cell.ci, 3)}` : "";
  const metric = mixed ? ` (${escapeMarkdown(cell.metric)})` : "";
  const out = [
    `#### ${escapeMarkdown(cell.row)} × ${escapeMarkdown(cell.benchmark)}${metric}: AIS ${num(cell.ais)}${ci}${cell.significant ? " \\*" : ""}`,
    "",
  ];
  if (cell.error) return [...out, `The documents could not be recovered: ${escapeMarkdown(cell.error)}`, ""];
  out.push(...markdownTable(tables.documentsTable(cell)), "");
  if (cell.omitted > 0) out.push(`… and ${whole(cell.omitted)} more (the JSON report lists them all).`, "");
  return out;
}

/** A table's rows in Markdown: names escaped, figures with the ASCII minus, emphasis in bold. */
function markdownTable(t: TableData): string[] {
  return table(
    t.columns.map((c) => inlineMarkdown(c.header)),
    t.rows.map((r) => r.cells.map(cellMarkdown)),
    t.columns.map((c) => c.align),
  );
}

/** Inline content: names escaped, figures with the ASCII minus, emphasis in bold, no muting. */
const MARKDOWN_INLINE: InlineStyle = {
  text: escapeMarkdown,
  figure: (v, digits) => num(v, digits),
  muted: (content) => content,
  strong: (content) => `**${content}**`,
  variable: (name) => name,
  // code spans cannot hold a `|`, so generated text is escaped as prose, in quotes
  quoted: (text) => `“${escapeMarkdown(text)}”`,
};
const inlineMarkdown = (parts: Inline[]) => writeInline(parts, MARKDOWN_INLINE);

function cellMarkdown(c: TableCell): string {
  if (Array.isArray(c)) return inlineMarkdown(c);
  switch (c.kind) {
    case "estimate":
      if (c.value === null) return `n/a (${c.reason === undefined ? "" : whole(c.reason)})`;
      return `${num(c.value)}${c.ci ? ` ${formatInterval(c.ci, 3)}` : ""}${c.significant ? " \\*" : ""}${c.saturated ? ` (${SATURATED_MARK})` : ""}`;
    case "test": {
      const q = c.q === null ? "–" : `q ${inlineMarkdown([{ pvalue: c.q }])}`;
      const p = c.p === null ? "" : ` (p ${inlineMarkdown([{ pvalue: c.p }])}${c.test ? `, ${testShort(c.test)}` : ""})`;
      return `${q}${p}${c.significant ? " \\*" : ""}${c.saturated ? ` (${SATURATED_MARK})` : ""}`;
    }
    case "null": {
      const r = c.randomNull;
      if (!r) return "–";
      return `p ${inlineMarkdown([{ pvalue: r.p }])}${r.margin === null ? "" : `, ${r.margin >= 0 ? "+" : "-"}${formatFixed(Math.abs(r.margin), 2)} sd`}`;
    }
    case "interference": {
      const x = c.cell;
      if (x.interference === null)
        return `n/a${x.reason === undefined ? "" : ` (${whole(x.reason)})`} (AIS ${x.ais === null ? "n/a" : num(x.ais)})`;
      const value = x.significant ? `**${num(x.interference)}**` : num(x.interference);
      return `${value}${x.interferenceCi ? ` ${formatInterval(x.interferenceCi, 3)}` : ""} (AIS ${num(x.ais!)})`;
    }
    case "overlap":
      return `${num(c.jaccard)} (${formatCount(c.shared)})`;
    case "difference":
      return c.cell ? differenceMarkdown(c.cell) : "n/a";
    case "flip":
      return c.direction === "right_to_wrong" ? "right → wrong" : "wrong → right";
    case "logprobs":
      return c.logprobs
        .map((lp, i) => {
          const perByte = c.perByte ? ` (${formatFixed(lp / Math.max(1, c.document.choiceBytes[i] ?? 1), 3)}/B)` : "";
          const text = `${i}: ${formatFixed(lp, 2)}${perByte}`;
          return i === c.predicted ? `**${text}**` : text;
        })
        .join(", ");
  }
}

/** AIS(A) - AIS(B) with its sign (2 decimals), its interval, bold where the interval excludes 0, marked where the two AIS have opposite signs. */
export function differenceMarkdown(cell: ComparisonCell): string {
  if (cell.difference === null) return "n/a";
  const signed = (x: number) => (x >= 0 ? "+" : "−") + Math.abs(x).toFixed(2);
  const interval = cell.interval ? ` [${signed(cell.interval.low)}, ${signed(cell.interval.high)}]` : "";
  const value = cell.significant ? `**${signed(cell.difference)}**` : signed(cell.difference);
  return `${value}${interval}${cell.signDiffers ? ` ${SIGN_DIFFERS_MARK}` : ""}`;
}
