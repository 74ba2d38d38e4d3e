// The tables `bprof run` prints: the baseline scores, then the AIS tables, per model and k,
// abilities down, benchmarks across, each cell the AIS and its interval, `*` where the interval
// excludes 0, `n/a` with a numbered reason where the AIS is undefined. Everything shown comes
// from the report model (src/core/report/model.ts), which `bprof report` renders too: the AIS
// table is report/tables.ts's, formatted here as plain text, and its reasons have the numbers the
// reports give them.
//
// On a terminal (a `width`), nothing is wider than it: cells keep the value and the `*` (the
// intervals are in the report the run writes), long column headers become b1, b2, ... with a
// legend, and the columns are split into blocks that fit, the ability column repeated in each, as
// pandas prints a wide frame; text lines wrap. Piped output keeps the full tables.
import { formatConfidence, formatFixed, formatInterval, formatK, oneLine, ruleLabel } from "../core/report/format";
import { ruleComparisons, rulesOf } from "../core/report/model";
import { baselineLabel } from "../core/report/names";
import { fluencyText } from "../core/report/fluency";
import {
  aisTable,
  writeInline,
  type EstimateCell,
  type Inline,
  type InlineStyle,
  type TableCell,
  type TableData,
} from "../core/report/tables";
import { SATURATED_MARK } from "../core/report/stars";
import type { BaselineRow, Finding, KSection, ModelReport, ProfileReport } from "../core/report/types";

// Names, reasons and numbers of a run reach the terminal through oneLine: a run folder may come
// with a repository, and a control character printed raw would act on the terminal (move its
// cursor, set its clipboard), a line break would add a line to a table.
const shown = (text: string) => oneLine(text);
const shownNumber = (n: number) => oneLine(String(n));
const shownK = (k: number) => oneLine(formatK(k));

/**
 * One benchmark's baseline line: acc, acc_norm and chance, or exact_match (its filter) and chance;
 * a group's, with the metrics it is scored by.
 */
export function formatBaseline(b: BaselineRow): string {
  const name = shown(baselineLabel(b));
  const items = shownNumber(b.items);
  if (b.outputType === "generate_until") {
    const others = Object.entries(b.exactMatchByFilter ?? {})
      .filter(([name]) => name !== b.filter)
      .map(([name, v]) => `  ${shown(name)} ${v.toFixed(4)}`)
      .join("");
    if (b.scoredBy)
      return `${name}  score ${(b.exact_match ?? 0).toFixed(4)} (${shown(b.scoredBy)})  chance ${b.chance.toFixed(4)}  (${items} items)`;
    return `${name}  exact_match ${(b.exact_match ?? 0).toFixed(4)} (${shown(b.filter ?? "none")})${others}  chance ${b.chance.toFixed(4)}  (${items} items)`;
  }
  if (b.scoredBy) return `${name}  acc ${(b.acc ?? 0).toFixed(4)} (${shown(b.scoredBy)})  chance ${b.chance.toFixed(4)}  (${items} items)`;
  const scores = (
    [
      ["acc", b.acc],
      ["acc_norm", b.acc_norm],
    ] as const
  )
    .flatMap(([metric, v]) => (v === null ? [] : [`  ${metric} ${v.toFixed(4)}`]))
    .join("");
  return `${name}${scores}  chance ${b.chance.toFixed(4)}  (${items} items)`;
}

/**
 * The AIS tables of one model of the report, one block per k; "" for a model without a profile.
 * With `width` (a terminal's columns), the compact form, no line longer than `width`.
 */
export function formatAisTables(model: ModelReport, width?: number): string {
  if (!model.profile) return "";
  const confidence = formatConfidence(model.profile.bootstrap.confidence);
  // a model ranked by several rules: each rule's tables in turn (their titles name the rule)
  const blocks = rulesOf(model).flatMap((p) => p.sections.map((s) => sectionTable(model.name, s, p, ruleLabel(p), confidence, width)));
  return blocks.join("\n\n") + (blocks.length > 0 ? "\n" : "");
}

function sectionTable(model: string, s: KSection, p: ProfileReport, method: string, confidence: string, width?: number): string {
  const table = aisTable(s);
  // The reasons the printed cells refer to, under the numbers every report gives them.
  const cited = [
    ...new Set(
      table.rows.flatMap((r) => r.cells.flatMap((c) => (estimate(c) && c.value === null && c.reason !== undefined ? [c.reason] : []))),
    ),
  ].sort((a, b) => a - b);
  const title =
    `${shown(model)}: AIS (${s.metricLabel}) at k = ${shownK(s.k)} (n = ${shownNumber(s.n)} of ${shownNumber(p.parameters)} parameters, ` +
    `${shown(method)} importance), ${confidence} CI; * = ${p.starWords}` +
    (s.hasSaturated ? `; ${SATURATED_MARK} = saturated (the ablated score at chance: its AIS at the ceiling)` : "");
  const notes = [
    ...cited.map((n) => `  (${n}) ${shown(s.reasons[n - 1] ?? "AIS is undefined")}`),
    ...loweringLine(s),
    ...stabilityLines(s),
    ...chunkedLines(s),
    ...labelLines(s),
    ...expectationLines(s, p.starWords),
    ...consistencyLines(s),
    ...pairLines(s, confidence, p.starWords),
  ];
  if (width === undefined) {
    const rows = [
      table.columns.map((c) => plain(c.header)),
      ...table.rows.map((r) => r.cells.map((c, i) => (i === 0 ? plain(c as Inline[]) : cellText(c)))),
    ];
    return [title, ...alignColumns(rows), ...notes].join("\n");
  }
  return [
    ...wrapLine(`${title}; the intervals are in the report`, width),
    ...compactTable(table, width),
    ...notes.flatMap((l) => wrapLine(l, width)),
  ].join("\n");
}

/** Longest column header kept as it is in the compact form; longer ones make every header a code (b1, b2, ...). */
const HEADER_LIMIT = 24;

/** The table in blocks of columns that fit `width`, the row heads in each, with a legend when headers are codes. */
function compactTable(t: TableData, width: number): string[] {
  const names = t.columns.slice(1).map((c) => plain(c.header));
  const coded = names.some((c) => c.length > HEADER_LIMIT);
  const headers = coded ? names.map((_, i) => `b${i + 1}`) : names;
  const cells = t.rows.map((r) => r.cells.slice(1).map(compactCellText));
  const columnWidths = headers.map((h, c) => Math.max(h.length, ...cells.map((row) => row[c]!.length)));
  const widest = Math.max(0, ...columnWidths);
  // The row heads' column: whole labels unless even one data column would not fit beside them.
  const heads = [plain(t.columns[0]!.header), ...t.rows.map((r) => plain(r.cells[0] as Inline[]))];
  const labelWidth = Math.min(Math.max(...heads.map((l) => l.length)), Math.max(8, width - 2 - widest));
  const labels = heads.map((l) => truncate(l, labelWidth));
  const lines: string[] = [];
  for (const block of columnBlocks(columnWidths, width - labelWidth)) {
    if (lines.length > 0) lines.push("");
    if (block.length < headers.length) lines.push(truncate(`columns ${block[0]! + 1}-${block.at(-1)! + 1} of ${headers.length}:`, width));
    // labels to the left, values to the right, so signs and decimals line up
    const line = (label: string, values: string[]) =>
      [label.padEnd(labelWidth), ...values.map((v, i) => v.padStart(columnWidths[block[i]!]!))].join("  ").trimEnd();
    lines.push(
      line(
        labels[0]!,
        block.map((c) => headers[c]!),
      ),
      ...cells.map((row, r) =>
        line(
          labels[r + 1]!,
          block.map((c) => row[c]!),
        ),
      ),
    );
  }
  if (coded) lines.push(...names.flatMap((name, i) => wrapLine(`  b${i + 1} = ${name}`, width)));
  return lines;
}

/** The columns in consecutive blocks whose cells, each after two spaces, fit in `room`; at least one column a block. */
function columnBlocks(widths: readonly number[], room: number): number[][] {
  const blocks: number[][] = [];
  let used = room;
  widths.forEach((w, c) => {
    if (blocks.length === 0 || used + 2 + w > room) {
      blocks.push([]);
      used = 0;
    }
    blocks.at(-1)!.push(c);
    used += 2 + w;
  });
  return blocks;
}

/** A line cut into lines of at most `width` at spaces (a word longer than that at `width`), the rest indented. */
export function wrapLine(line: string, width: number, hanging = "    "): string[] {
  if (line.length <= width) return [line];
  // a hanging indent only where it leaves room to move on
  const indent = width > hanging.length + 8 ? hanging : "";
  const out: string[] = [];
  let rest = line;
  while (rest.length > width) {
    const cut = rest.lastIndexOf(" ", width);
    const at = cut > indent.length ? cut : width;
    out.push(rest.slice(0, at).trimEnd());
    rest = indent + rest.slice(at).trimStart();
  }
  if (rest.trim() !== "") out.push(rest);
  return out;
}

function truncate(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, Math.max(0, width - 1))}\u2026`;
}

/** A value and its mark; a space where the mark would be, so that decimals line up in a column. */
function compactCellText(cell: TableCell): string {
  if (!estimate(cell)) return plain(cell as Inline[]);
  if (cell.value === null) return `n/a(${cell.reason ?? "?"}) `;
  return `${formatFixed(cell.value, 3)}${cell.significant ? "*" : " "}${cell.saturated ? ` ${SATURATED_MARK}` : ""}`;
}

/** Inline content as plain text: names on one line with their controls visible, figures with the ASCII minus, no emphasis. */
const PLAIN: InlineStyle = {
  text: shown,
  figure: (v, digits) => formatFixed(v, digits),
  muted: (content) => content,
  strong: (content) => content,
  variable: (name) => name,
};
const plain = (parts: Inline[]) => writeInline(parts, PLAIN);

function estimate(cell: TableCell): cell is EstimateCell {
  return !Array.isArray(cell) && cell.kind === "estimate";
}

/**
 * What a person reads first after a run, at the sweep's largest k: how many of the config's labels
 * hold, the strongest significant cells, and the significant negative ones (an ability whose
 * removal helped); nothing for a model without a profile.
 */
export function formatRunSummary(model: ModelReport, width?: number): string[] {
  const s = model.profile?.sections.at(-1);
  if (!s) return [];
  const cells = s.rows
    .filter((r) => r.selection === "top" && r.ability !== null)
    .flatMap((r) =>
      r.cells.flatMap((c) => (c.ais !== null && c.significant ? [{ ability: r.label, benchmark: c.benchmark, ais: c.ais }] : [])),
    );
  const describe = (list: typeof cells) =>
    list.map((c) => `${shown(c.ability)} on ${shown(c.benchmark)} ${formatFixed(c.ais, 3)}`).join("; ");
  const strongest = cells.filter((c) => c.ais > 0).sort((a, b) => b.ais - a.ais);
  const negative = cells.filter((c) => c.ais < 0).sort((a, b) => a.ais - b.ais);
  const lines = [`${shown(model.name)}, summary at k = ${shownK(s.k)} (${s.metricLabel}):`];
  const rules = ruleComparisons(model).at(-1);
  if (rules && s.labels.length > 0) {
    const held = rules.rules.map((r) => `${shown(ruleLabel(r))} rule ${r.labelsHold} of ${r.labelsChecked}`).join(", ");
    lines.push(`  labels that hold (the labelled ability hurts its benchmark most): ${held}`);
  } else if (s.labels.length > 0)
    lines.push(
      `  labels: ${s.labels.filter((l) => l.holds).length} of ${s.labels.length} hold (the labelled ability hurts its benchmark most)`,
    );
  lines.push(strongest.length > 0 ? `  strongest: ${describe(strongest.slice(0, 3))}` : "  strongest: no starred cell lies above 0");
  lines.push(
    negative.length > 0
      ? `  significant negative (removing the ability helped): ${negative.length} cell(s), ${describe(negative.slice(0, 3))}${negative.length > 3 ? "; ..." : ""}`
      : "  significant negative: none",
  );
  lines.push(`  stars: ${model.profile!.starWords}`);
  lines.push(...noiseLines(s), ...fluencyLines(model), ...findingLines(model));
  return width === undefined ? lines : lines.flatMap((l) => wrapLine(l, width));
}

/** The benchmarks whose profile is noise at this k (snr < 1), by name; nothing in a run without the measure. */
export function noiseLines(s: KSection): string[] {
  if (s.noise.length === 0) return [];
  const noise = s.noise.filter((n) => n.isNoise);
  if (noise.length === 0) {
    const lowest = s.noise.filter((n) => n.snr !== null).at(-1);
    return [
      `  benchmark noise: every benchmark's snr is at least 1${lowest ? ` (lowest ${shown(lowest.column)} ${formatFixed(lowest.snr!, 2)})` : ""}`,
    ];
  }
  return [
    `  benchmark noise: the profile is noise (snr < 1: the abilities' differences within the benchmark's noise) on ${noise.length} of ${s.noise.length} benchmark(s): ` +
      noise.map((n) => `${shown(n.column)} ${formatFixed(n.snr!, 2)}`).join(", "),
  ];
}

/** The fluency measure at the largest k of each rule: the model's perplexity, and the variants past the threshold. */
export function fluencyLines(model: Pick<ModelReport, "profile" | "otherMethods">): string[] {
  const rules = rulesOf(model);
  const f = rules[0]?.fluency;
  if (!f) return [];
  const past = rules.flatMap((p) =>
    (p.sections.at(-1)?.rows ?? [])
      .filter((r) => r.fluency && !r.fluency.fluent)
      .map(
        (r) =>
          `${rules.length > 1 && r.ability !== null ? `${shown(ruleLabel(p))} rule: ` : ""}${shown(r.label)} ${fluencyText(r.fluency)}`,
      ),
  );
  const unique = [...new Set(past)];
  return [
    `  fluency (perplexity of the ${f.text === "built-in" ? "built-in" : "config's"} neutral text; the model ${formatFixed(f.perplexity, 2)}): ` +
      (unique.length === 0
        ? `every variant within ${shownNumber(f.max_perplexity_ratio)}x`
        : `${unique.length} variant(s) past ${shownNumber(f.max_perplexity_ratio)}x, their AIS greyed in the reports: ${unique.join("; ")}`),
  ];
}

/**
 * The failure signatures found, each with its figures, threshold and remedy; one line when there
 * are none. A rule's failing labels are one entry: the reports list each with its own remedy.
 */
export function findingLines(model: Pick<ModelReport, "findings" | "otherMethods">): string[] {
  if (model.findings.length === 0) return ["  failure signatures: none found"];
  const rules = model.otherMethods.length > 0;
  const prefix = (f: Finding) => `  ! ${rules ? `${shown(ruleLabel(f))} rule: ` : ""}`;
  const lines = [`  failure signatures: ${model.findings.length} found (docs/method.md, "Reading a profile that went wrong")`];
  const labelsShown = new Set<string>();
  for (const f of model.findings) {
    if (f.signature !== "label-fails") {
      lines.push(
        `${prefix(f)}${shown(f.title)}`,
        `      ${shown(f.figures)} (threshold: ${shown(f.threshold)})`,
        `      remedy: ${shown(f.remedy)}`,
      );
      continue;
    }
    if (labelsShown.has(ruleLabel(f))) continue;
    labelsShown.add(ruleLabel(f));
    const failing = model.findings.filter((g) => g.signature === "label-fails" && ruleLabel(g) === ruleLabel(f));
    lines.push(
      `${prefix(f)}${failing.length} label(s) do not hold at k = ${shownK(f.k)} (the labelled ability hurts another benchmark more): ` +
        failing.map((g) => shown(g.figures)).join("; "),
      `      remedy: change the label where another ability drives the benchmark, or make the ability's dataset isolate it (diag.* codes); the report lists each with its flipped documents`,
    );
  }
  return lines;
}

/** Each ability's ranking stability: the Jaccard index of the top n ranked from two halves of its items. */
function stabilityLines(s: KSection): string[] {
  if (s.stability.length === 0) return [];
  const rows = s.stability.map((x) => [
    `  ${shown(x.ability)}`,
    `halves ${shownNumber(x.halves[0])} + ${shownNumber(x.halves[1])} items`,
    `shared ${shownNumber(x.shared)}`,
    `Jaccard ${formatFixed(x.jaccard, 3)}`,
  ]);
  return [
    "",
    `ranking stability at k = ${shownK(s.k)}: the top n = ${shownNumber(s.n)} of two halves of each ability's items:`,
    ...alignColumns(rows),
  ];
}

/** Each ability's chunked top set (the released code's rule) against the exact top n: sizes, shared weights, Jaccard. */
function chunkedLines(s: KSection): string[] {
  if (s.chunked.length === 0) return [];
  const rows = s.chunked.map((c) => [
    `  ${shown(c.ability)}`,
    `chunked ${shownNumber(c.chunkedN)}`,
    `shared ${shownNumber(c.shared)}`,
    `Jaccard ${formatFixed(c.jaccard, 3)}`,
  ]);
  return [
    "",
    `top_chunked (the released code's chunked rule) against the exact top n = ${shownNumber(s.n)} at k = ${shownK(s.k)}:`,
    ...alignColumns(rows),
  ];
}

/** How much of the top sets would lower their own ability's loss when zeroed: about half with `paper`, none with `signed`. */
function loweringLine(s: KSection): string[] {
  const shares = s.rows.flatMap((r) => (r.selection === "top" && r.lowering ? [Math.round(100 * r.lowering.share)] : []));
  if (shares.length === 0) return [];
  const [low, high] = [Math.min(...shares), Math.max(...shares)];
  return [
    `top sets: ${low === high ? low : `${low}-${high}`}% of the zeroed weights lower their own ability's loss when zeroed (first order, -theta x g < 0)`,
  ];
}

/** The config's ability labels against this k: one line of totals, then one per labelled benchmark. */
function labelLines(s: KSection): string[] {
  if (s.labels.length === 0) return [];
  const held = s.labels.filter((l) => l.holds).length;
  const rows = s.labels.map((l) => [
    l.holds ? "  holds" : "  fails",
    shown(l.benchmark),
    shown(l.ability),
    `own ${l.ais === null ? "n/a" : formatFixed(l.ais, 3)}`,
    `largest other ${l.largestOther ? `${formatFixed(l.largestOther.ais, 3)} (${shown(l.largestOther.benchmark)})` : "-"}`,
  ]);
  return [
    "",
    `labels at k = ${shownK(s.k)} (${s.metricLabel}): ablating the labelled ability hurts the benchmark most for ${held} of ${s.labels.length} labelled benchmarks`,
    ...alignColumns(rows),
  ];
}

/** Per benchmark with `expects`: the expected abilities that show, the unexpected ones that do, rho of the weights. */
function expectationLines(s: KSection, stars: string): string[] {
  if (s.expectations.length === 0) return [];
  return [
    "",
    `expected abilities at k = ${shownK(s.k)} (expects): an ability shows when its AIS is positive and starred (* = ${stars})`,
    ...s.expectations.map(
      (e) =>
        `  ${shown(e.benchmark)}: ${e.confirmed.length} of ${e.expected.length} expected show` +
        `${e.confirmed.length > 0 ? ` (${e.confirmed.map(shown).join(", ")})` : ""}; unexpected that show: ${e.unexpected.length > 0 ? e.unexpected.map(shown).join(", ") : "none"}` +
        `${e.rankCorrelation === null ? "" : `; rho ${formatFixed(e.rankCorrelation, 2)}`}`,
    ),
  ];
}

/** Per second diagnostic set: rho of its AIS row and its ability's, and the benchmarks where they disagree. */
function consistencyLines(s: KSection): string[] {
  if (s.consistency.length === 0) return [];
  return [
    "",
    `second diagnostic sets at k = ${shownK(s.k)} (of): rho across the benchmarks; disagree = one set's CI excludes the other's AIS`,
    ...s.consistency.map(
      (c) =>
        `  ${shown(c.ability)} vs ${shown(c.set)}: rho ${c.rankCorrelation === null ? "n/a" : formatFixed(c.rankCorrelation, 2)} over ${c.benchmarks} benchmarks; ` +
        `disagree: ${c.disagreements.length === 0 ? "none" : c.disagreements.map((d) => `${shown(d.benchmark)} (${formatFixed(d.ais, 3)} vs ${formatFixed(d.setAis, 3)})`).join(", ")}`,
    ),
  ];
}

/** Per pair of abilities ablated together: the interference per benchmark with its interval. */
function pairLines(s: KSection, confidence: string, stars: string): string[] {
  if (s.pairs.length === 0) return [];
  return [
    "",
    `two abilities at once at k = ${shownK(s.k)} (ablation.pairs): interference AIS(A+B) - AIS(A) - AIS(B), ${confidence} CI; * = ${stars}`,
    ...s.pairs.map(
      (p) =>
        `  ${p.abilities.map(shown).join(" + ")} (n = ${shownNumber(p.n)}): ` +
        p.cells
          .map((c, i) => {
            const value =
              c.interference === null
                ? `n/a${c.reason !== undefined ? ` (${shown(s.reasons[c.reason - 1] ?? "")})` : ""}`
                : `${formatFixed(c.interference, 3)}${c.interferenceCi ? ` ${formatInterval(c.interferenceCi, 3)}` : ""}${c.significant ? " *" : ""}`;
            return `${shown(s.benchmarks[i] ?? c.benchmark)} ${value}`;
          })
          .join("; "),
    ),
  ];
}

function cellText(cell: TableCell): string {
  if (!estimate(cell)) return plain(cell as Inline[]);
  if (cell.value === null) return `n/a (${cell.reason ?? "?"})`;
  const interval = cell.ci ? ` ${formatInterval(cell.ci, 3)}` : "";
  const value = formatFixed(cell.value, 3);
  return `${value.startsWith("-") ? "" : " "}${value}${interval}${cell.significant ? " *" : ""}${cell.saturated ? ` ${SATURATED_MARK}` : ""}`;
}

function alignColumns(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? "").length)));
  return rows.map((r) =>
    r
      .map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]!)))
      .join("  ")
      .trimEnd(),
  );
}
