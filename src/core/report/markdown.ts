// Markdown report (GitHub-flavoured tables): the run's metadata, baseline accuracies, and per
// model and k the AIS table with intervals, specificity, ability overlap, flips and the flipped
// documents of negative cells. Names from user files are escaped so they cannot break a table.
import {
  candidatesWord,
  describeMethod,
  formatConfidence,
  formatCount,
  formatFixed,
  formatInterval,
  formatK,
  RULE_COLUMNS,
  ruleRows,
} from "./format";
import { baselineLabel, ruleComparisons, rulesOf } from "./model";
import { fluencyText } from "./fluency";
import type { ModelFluency } from "../results/schema";
import type { BaselineRow, ChoiceDocument, GenerationDocument, KSection, ModelReport, NegativeCell, Report, ReportCell } from "./types";

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

const optional = (v: number | null) => (v === null ? "–" : num(v));

function filterText(b: BaselineRow): string {
  if (b.outputType !== "generate_until") return "";
  const others = Object.entries(b.exactMatchByFilter ?? {}).filter(([name]) => name !== b.filter);
  return (
    escapeMarkdown(b.filter ?? "") +
    (others.length > 0 ? ` (${others.map(([name, v]) => `${escapeMarkdown(name)} ${num(v)}`).join(", ")})` : "")
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
        `- **${escapeMarkdown(several ? `${f.method} rule: ${f.title}` : f.title)}** ${escapeMarkdown(f.figures)} ` +
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
    ["dtype", model.dtype],
  ];
  if (p) {
    meta.push(
      ["parameters", `${formatCount(p.parameters)} (${formatCount(p.candidates)} ${candidatesWord(p)} can be ablated)`],
      ["k sweep", p.k.map(formatK).join(", ")],
      ["selections", p.selections.join(", ")],
      [
        "importance",
        rulesOf(model)
          .map((r) => escapeMarkdown(describeMethod(r.method)))
          .join("; "),
      ],
      ["seed", String(p.seed)],
      ["bootstrap", `${p.bootstrap.resamples} paired resamples, ${formatConfidence(p.bootstrap.confidence)} percentile intervals`],
      ["abilities", p.abilities.map((a) => `${escapeMarkdown(a.name)} (${a.sequences} items)`).join("; ")],
    );
  }
  out.push(...table(["", ""], meta, ["l", "l"]), "");
  out.push(...findingsLines(model));
  out.push("### Baseline accuracy", "");
  if (model.hasGeneration) {
    out.push(
      "exact\\_match of generate\\_until benchmarks is computed under the task's first filter (the others' exact\\_match in parentheses).",
      "",
    );
    out.push(
      ...table(
        ["benchmark", "items", "acc", "acc_norm", "exact_match", "filter", "chance"].map(escapeMarkdown),
        model.baseline.map((b) => [
          escapeMarkdown(baselineLabel(b)),
          String(b.items),
          optional(b.acc),
          optional(b.acc_norm),
          optional(b.exact_match),
          filterText(b),
          num(b.chance),
        ]),
        ["l", "r", "r", "r", "r", "l", "r"],
      ),
      "",
    );
  } else {
    out.push(
      ...table(
        ["benchmark", "items", "acc", "acc_norm", "chance"],
        model.baseline.map((b) => [
          escapeMarkdown(baselineLabel(b)),
          String(b.items),
          optional(b.acc),
          optional(b.acc_norm),
          num(b.chance),
        ]),
        ["l", "r", "r", "r", "r"],
      ),
      "",
    );
  }
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
      out.push(`At k = ${formatK(c.k)}:`, "", ...table(RULE_COLUMNS.map(escapeMarkdown), ruleRows(c), ["l", "r", "r"]), "");
    }
  }
  for (const rule of rules)
    for (const s of rule.sections) out.push(...kSection(s, rule.parameters, confidence, several ? rule.method : undefined, rule.fluency));
  return out;
}

/** `rule`: named in the heading when the model was ranked by several; `fluency`: the model's, for the row under the table. */
function kSection(s: KSection, parameters: number, confidence: string, rule?: string, fluency?: ModelFluency): string[] {
  const ruleText = rule ? `, ${rule} rule` : "";
  const out = [`### k = ${formatK(s.k)}${ruleText} (n = ${formatCount(s.n)} of ${formatCount(parameters)} parameters zeroed)`, ""];
  const metric = s.metricLabel;
  const mixed = new Set(s.metrics).size > 1;
  const header = ["ability", ...s.columns.map(escapeMarkdown)];
  const align: ("l" | "r")[] = ["l", ...s.benchmarks.map(() => "r" as const)];
  const label = (text: string) => escapeMarkdown(text);

  out.push(`**AIS (${metric})** with ${confidence} CI; \\* = the CI excludes 0; n/a (i) = undefined, reason i below.`, "");
  out.push(
    ...table(
      header,
      s.rows.map((r) => [label(r.label), ...r.cells.map(aisText)]),
      align,
    ),
    "",
  );
  if (s.reasons.length > 0) out.push(...s.reasons.map((r, i) => `${i + 1}. ${escapeMarkdown(r)}`), "");
  if (fluency)
    out.push(
      `**Fluency** (perplexity of the neutral text; the unablated model ${formatFixed(fluency.perplexity, 2)}; past ${fluency.max_perplexity_ratio}x it a row is not fluent): ` +
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
    out.push(
      ...table(
        ["benchmark", "label", "AIS", "largest other", "holds"],
        s.labels.map((l) => [
          escapeMarkdown(l.benchmark),
          escapeMarkdown(l.ability),
          l.ais === null ? "n/a" : num(l.ais),
          l.largestOther ? `${num(l.largestOther.ais)} (${escapeMarkdown(l.largestOther.benchmark)})` : "–",
          l.holds ? "yes" : "**no**",
        ]),
        ["l", "l", "r", "r", "l"],
      ),
      "",
    );
  }

  if (s.expectations.length > 0) {
    out.push(
      `**Expected abilities** (\`expects\`): per benchmark, the abilities the config expects it to need, those of them that show ` +
        `(a positive AIS whose ${confidence} CI excludes 0), the abilities not expected that show, and with weights Spearman's ρ of the weights and the AIS.`,
      "",
    );
    out.push(
      ...table(
        ["benchmark", "expected (AIS)", "expected that show", "unexpected that show", "ρ"],
        s.expectations.map((e) => [
          escapeMarkdown(e.benchmark),
          e.expected
            .map(
              (x) =>
                `${escapeMarkdown(x.ability)}${x.weight === null ? "" : ` ×${x.weight}`} (${x.ais === null ? "n/a" : num(x.ais)}${x.significant ? "*" : ""})`,
            )
            .join("; "),
          `${e.confirmed.length} of ${e.expected.length}`,
          e.unexpected.length === 0 ? "none" : e.unexpected.map(escapeMarkdown).join("; "),
          e.rankCorrelation === null ? "–" : num(e.rankCorrelation, 2),
        ]),
        ["l", "l", "r", "l", "r"],
      ),
      "",
    );
  }

  if (s.consistency.length > 0) {
    out.push(
      `**Consistency of abilities measured with a second diagnostic set** (\`of\`): Spearman's ρ of the two sets' AIS across the benchmarks, ` +
        `and the benchmarks where one set's ${confidence} CI excludes the other's AIS.`,
      "",
    );
    out.push(
      ...table(
        ["ability", "second set", "ρ", "benchmarks", "disagree"],
        s.consistency.map((c) => [
          escapeMarkdown(c.ability),
          escapeMarkdown(c.set),
          c.rankCorrelation === null ? "–" : num(c.rankCorrelation, 2),
          String(c.benchmarks),
          c.disagreements.length === 0
            ? "none"
            : c.disagreements.map((d) => `${escapeMarkdown(d.benchmark)} (${num(d.ais)} vs ${num(d.setAis)})`).join("; "),
        ]),
        ["l", "l", "r", "r", "l"],
      ),
      "",
    );
  }

  if (s.pairs.length > 0) {
    out.push(
      `**Two abilities at once** (\`ablation.pairs\`): per benchmark, the interference AIS(A+B) − AIS(A) − AIS(B) with its ${confidence} CI ` +
        "(**bold**: it excludes 0; 0 when the two effects add up), and in brackets the AIS of the union of the two top sets.",
      "",
    );
    out.push(
      ...table(
        ["abilities", "n", ...s.benchmarks.slice(0, s.pairs[0]!.cells.length).map(escapeMarkdown)],
        s.pairs.map((p) => [
          p.abilities.map(escapeMarkdown).join(" + "),
          String(p.n),
          ...p.cells.map((c) => {
            if (c.interference === null) return `n/a (AIS ${c.ais === null ? "n/a" : num(c.ais)})`;
            const value = c.significant ? `**${num(c.interference)}**` : num(c.interference);
            const ci = c.interferenceCi ? ` [${num(c.interferenceCi.low)}, ${num(c.interferenceCi.high)}]` : "";
            return `${value}${ci} (AIS ${num(c.ais!)})`;
          }),
        ]),
        ["l", "r", ...s.pairs[0]!.cells.map(() => "r" as const)],
      ),
      "",
    );
  }

  if (s.hasSpecificity) {
    out.push(`**Specificity**: AIS minus the random control's AIS at the same k, with ${confidence} CI.`, "");
    const top = s.rows.filter((r) => r.selection === "top");
    out.push(
      ...table(
        header,
        top.map((r) => [label(r.label), ...r.cells.map(specificityText)]),
        align,
      ),
      "",
    );
  }

  if (s.overlap) {
    const o = s.overlap;
    out.push(`**Ability overlap**: Jaccard index of the top-k parameter sets, |A ∩ B| in parentheses.`, "");
    out.push(
      ...table(
        ["", ...o.abilities.map(escapeMarkdown)],
        o.abilities.map((a, i) => [
          escapeMarkdown(a),
          ...o.abilities.map((_, j) => `${num(o.jaccard[i]![j]!)} (${formatCount(o.intersections[i]![j]!)})`),
        ]),
        ["l", ...o.abilities.map(() => "r" as const)],
      ),
      "",
    );
  }

  if (s.stability.length > 0) {
    out.push(
      `**Ranking stability**: each ability's top ${formatCount(s.n)} ranked from two halves of its diagnostic items (split with the seed), ` +
        "and the Jaccard index of the two sets: near 1, the items are enough for a stable ranking; far below, the ranking depends on which items were drawn.",
      "",
    );
    out.push(
      ...table(
        ["ability", "halves (items)", "shared", "Jaccard"],
        s.stability.map((x) => [escapeMarkdown(x.ability), `${x.halves[0]} + ${x.halves[1]}`, formatCount(x.shared), num(x.jaccard)]),
        ["l", "r", "r", "r"],
      ),
      "",
    );
  }

  if (s.chunked.length > 0) {
    out.push(
      `**Chunked selection against the exact top n**: each ability's \`top_chunked\` set (the authors' released code: the candidates cut into ` +
        `chunks of at least a million, the top ceil(n / candidates × chunk) of each) against its exact top ${formatCount(s.n)}; Jaccard index |C ∩ T| / |C ∪ T|.`,
      "",
    );
    out.push(
      ...table(
        ["ability", "chunked set", "exact top n", "shared", "Jaccard"],
        s.chunked.map((c) => [
          escapeMarkdown(c.ability),
          formatCount(c.chunkedN),
          formatCount(c.topN),
          formatCount(c.shared),
          num(c.jaccard),
        ]),
        ["l", "r", "r", "r", "r"],
      ),
      "",
    );
  }

  const ranked = s.rows.flatMap((r) => (r.lowering ? [{ label: r.label, ...r.lowering }] : []));
  if (ranked.length > 0) {
    out.push(
      `**Zeroed weights that lower their own ability's loss**: of each set's ${formatCount(s.n)} weights, those whose zeroing lowers ` +
        "the ability's diagnostic loss to first order (−θ × g < 0); about half of a top set of the paper's \\|θ × g\\| in the demo model, none with `method: signed`.",
      "",
    );
    out.push(
      ...table(
        ["", "share", "weights"],
        ranked.map((r) => [label(r.label), num(r.share, 2), formatCount(r.count)]),
        ["l", "r", "r"],
      ),
      "",
    );
  }

  out.push("**Flips**: documents the ablation turned right → wrong / wrong → right.", "");
  out.push(
    ...table(
      header,
      s.rows.map((r) => [label(r.label), ...r.cells.map((c) => `${c.flips.rightToWrong} / ${c.flips.wrongToRight}`)]),
      align,
    ),
    "",
  );

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

function negativeCellSection(cell: NegativeCell, mixed: boolean): string[] {
  const ci = cell.ci ? ` ${formatInterval(cell.ci, 3)}` : "";
  const metric = mixed ? ` (${escapeMarkdown(cell.metric)})` : "";
  const out = [
    `#### ${escapeMarkdown(cell.row)} × ${escapeMarkdown(cell.benchmark)}${metric}: AIS ${num(cell.ais)}${ci}${cell.significant ? " \\*" : ""}`,
    "",
  ];
  if (cell.error) return [...out, `The documents could not be recovered: ${escapeMarkdown(cell.error)}`, ""];
  if (cell.metric === "exact_match") {
    out.push(
      ...table(
        ["document", "flip", "target", "answer: baseline → ablated", "baseline generation", "ablated generation"],
        cell.documents.flatMap((d) => (d.kind === "generate_until" ? [generationRow(d)] : [])),
        ["r", "l", "l", "l", "l", "l"],
      ),
      "",
    );
  } else {
    out.push(
      ...table(
        ["document", "flip", "target", "baseline → ablated", "baseline log-likelihoods", "ablated log-likelihoods"],
        cell.documents.flatMap((d) => (d.kind === "generate_until" ? [] : [documentRow(d, cell.metric)])),
        ["r", "l", "r", "l", "l", "l"],
      ),
      "",
    );
  }
  if (cell.omitted > 0) out.push(`… and ${cell.omitted} more (the JSON report lists them all).`, "");
  return out;
}

/** Generated text in a table cell: code spans cannot hold a `|`, so the text is escaped as prose, in quotes. */
function quoted(text: string): string {
  return `“${escapeMarkdown(text)}”`;
}

function generationRow(d: GenerationDocument): string[] {
  return [
    String(d.index),
    d.direction === "right_to_wrong" ? "right → wrong" : "wrong → right",
    quoted(d.target),
    `${quoted(d.baselineAnswer)} → ${quoted(d.ablatedAnswer)}`,
    quoted(d.baselineResponse),
    quoted(d.ablatedResponse),
  ];
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

function documentRow(d: ChoiceDocument, metric: string): string[] {
  const scores = (logprobs: number[], predicted: number) =>
    logprobs
      .map((lp, i) => {
        const perByte = metric === "acc_norm" ? ` (${formatFixed(lp / Math.max(1, d.choiceBytes[i] ?? 1), 3)}/B)` : "";
        const text = `${i}: ${formatFixed(lp, 2)}${perByte}`;
        return i === predicted ? `**${text}**` : text;
      })
      .join(", ");
  return [
    String(d.index),
    d.direction === "right_to_wrong" ? "right → wrong" : "wrong → right",
    String(d.target),
    `${d.baselinePrediction} → ${d.ablatedPrediction}`,
    scores(d.baselineLogprobs, d.baselinePrediction),
    scores(d.ablatedLogprobs, d.ablatedPrediction),
  ];
}
