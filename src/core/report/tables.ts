// The report's tables as data, built once: per model its baseline and its rules side by side, per k
// section the AIS, labels, expectations, consistency, pairs, specificity, overlap, stability,
// chunked, lowering and flips tables, the documents a negative cell flipped, and a comparison's
// differences. A table is its columns and
// rows of cells holding figures, intervals and names, not text: html.ts, markdown.ts,
// compareHtml.ts, latex.ts and the terminal's cli/aisTable.ts each format the same table in their
// own syntax (escaping, minus sign, emphasis), and keep their own captions.
import type { Interval } from "../analysis/bootstrap";
import type { Comparison, ComparisonCell } from "./compare";
import { formatCount, ruleLabel } from "./format";
import { baselineLabel } from "./names";
import { formatP, testShort } from "./stars";
import type { RandomNull } from "../analysis/randomNull";
import type {
  BaselineRow,
  ChoiceDocument,
  FlippedDocument,
  GenerationDocument,
  KSection,
  ModelReport,
  NegativeCell,
  PairReport,
  ReportCell,
  RuleComparison,
} from "./types";

/**
 * Inline content of a cell or header. A plain string is the report's own wording, written as it is
 * (it holds nothing any format must escape); the rest each format writes its own way.
 */
export type Inline =
  | string
  /** Text from the user's files or results (names, filters, reasons): escaped by each format. */
  | { text: string }
  /** A figure with fixed decimals (3 unless said); `starred`: the cell is starred (report/stars.ts says by what). */
  | { figure: number; digits?: number; starred?: boolean }
  /** A p- or q-value: 3 significant digits rounded down, "<0.0001" below that (stars.ts formatP). */
  | { pvalue: number }
  /** A multiplier (an expected ability's weight): ×w. */
  | { factor: number }
  /** A whole number with thousands separators. */
  | { count: number }
  /** Secondary content: greyed where the format can, plain where it cannot. */
  | { muted: Inline[] }
  | { strong: Inline[] }
  /** A variable of the method's formulas (k, n): italic in HTML. */
  | { variable: string }
  /** Text the model generated, or a task's target or answer: set apart from the report's words, and escaped. */
  | { quoted: string };

/** How a format writes inline content: its escaping, its figures, its emphasis. */
export interface InlineStyle {
  /** The report's own wording; as it is unless the format must spell some of its characters otherwise (LaTeX's ρ). */
  words?(text: string): string;
  text(text: string): string;
  figure(value: number, digits: number): string;
  muted(content: string): string;
  strong(content: string): string;
  variable(name: string): string;
  /** A whole number; with thousands separators unless said. */
  count?(value: number): string;
  /** ×w unless said. */
  factor?(value: number): string;
  /** A starred figure's mark: `*` unless said. */
  starred?(figure: string): string;
  /** A p- or q-value as formatP writes it, unless said. */
  pvalue?(p: number): string;
  /** Generated text: in quotes, escaped, unless said. */
  quoted?(text: string): string;
}

export function writeInline(parts: Inline[], style: InlineStyle): string {
  return parts
    .map((x) => {
      if (typeof x === "string") return style.words ? style.words(x) : x;
      if ("text" in x) return style.text(x.text);
      if ("figure" in x) {
        const figure = style.figure(x.figure, x.digits ?? 3);
        return x.starred ? (style.starred ? style.starred(figure) : `${figure}*`) : figure;
      }
      if ("count" in x) return style.count ? style.count(x.count) : formatCount(x.count);
      if ("pvalue" in x) return style.pvalue ? style.pvalue(x.pvalue) : formatP(x.pvalue);
      // a number of the run like any of its text: escaped (the run folder's check made it a number)
      if ("factor" in x) return style.factor ? style.factor(x.factor) : `×${style.text(String(x.factor))}`;
      if ("quoted" in x) return style.quoted ? style.quoted(x.quoted) : `“${style.text(x.quoted)}”`;
      if ("muted" in x) return style.muted(writeInline(x.muted, style));
      if ("strong" in x) return style.strong(writeInline(x.strong, style));
      return style.variable(x.variable);
    })
    .join("");
}

/** A value with its interval and star (AIS, specificity); null is undefined, with the number of its reason. */
export interface EstimateCell {
  kind: "estimate";
  value: number | null;
  ci: Interval | null;
  /** Starred (never when saturated). */
  significant: boolean;
  reason?: number;
  /** The ablated score is at chance: the saturation mark beside the figure. */
  saturated?: boolean;
  /** The cell's test, for formats that give it in the cell's detail (HTML's title); absent in runs before them. */
  p?: number | null;
  q?: number | null;
  test?: ReportCell["test"];
  intervalExcludes0?: boolean;
  randomNull?: RandomNull;
}

/** One cell's test in the tests table: its q, its p, and its test where its column mixes tests. */
export interface TestCell {
  kind: "test";
  p: number | null;
  q: number | null;
  /** Shown in the cell when the column's header does not name one test. */
  test?: ReportCell["test"];
  significant: boolean;
  saturated: boolean;
}

/** A top cell against the random control's draws: the empirical p and the margin in sds. */
export interface NullCell {
  kind: "null";
  randomNull: RandomNull | undefined;
}

/** Two abilities ablated together, on one benchmark: the interference with its interval, and the union's AIS. */
export interface InterferenceCell {
  kind: "interference";
  cell: PairReport["cells"][number];
}

/** Two abilities' top sets: their Jaccard index (the cell's shade) and the weights they share. */
export interface OverlapCell {
  kind: "overlap";
  jaccard: number;
  shared: number;
}

/** AIS(A) - AIS(B) of one ability and benchmark, with its interval; undefined when either side is. */
export interface DifferenceCell {
  kind: "difference";
  cell: ComparisonCell | undefined;
}

/** Which way a document flipped. */
export interface FlipCell {
  kind: "flip";
  direction: FlippedDocument["direction"];
}

/** A multiple-choice document's log-likelihood of each choice, the predicted one marked; per byte too where acc_norm compares them. */
export interface LogprobsCell {
  kind: "logprobs";
  document: ChoiceDocument;
  logprobs: number[];
  predicted: number;
  perByte: boolean;
}

export type TableCell =
  Inline[] | EstimateCell | InterferenceCell | OverlapCell | DifferenceCell | FlipCell | LogprobsCell | TestCell | NullCell;

export interface TableColumn {
  header: Inline[];
  /** A shorter header for a narrow page (LaTeX's). */
  short?: string;
  /** Left for words, right for figures. */
  align: "l" | "r";
}

export interface TableRow {
  cells: TableCell[];
  /** The row starts a new group (the next selection: bottom, random): formats that can draw a rule above it. */
  group?: boolean;
}

export interface TableData {
  columns: TableColumn[];
  rows: TableRow[];
  /** The first cell of each row names the row (a row header), rather than being one of its values. */
  rowHeads: boolean;
}

const word = (header: string | Inline[], align: "l" | "r" = "l"): TableColumn => ({
  header: typeof header === "string" ? [header] : header,
  align,
});
const figures = (header: string | Inline[]): TableColumn => word(header, "r");
const name = (text: string): Inline[] => [{ text }];
/** A number of the run as it is (a count, a document's index, a choice): escaped by each format as any text of the run. */
const value = (n: number): Inline => ({ text: String(n) });
const figure = (value: number, digits?: number): Inline => (digits === undefined ? { figure: value } : { figure: value, digits });
const orDash = (value: number | null, digits?: number): Inline => (value === null ? "–" : figure(value, digits));
const joined = (parts: Inline[][], separator: string): Inline[] => parts.flatMap((p, i) => (i === 0 ? p : [separator, ...p]));

/** A table of one row per item, each headed by its first cell (`rowHeads`: a name, not a value). */
function tableOf<T>(
  columns: TableColumn[],
  items: readonly T[],
  cells: (item: T, index: number) => TableCell[],
  rowHeads = true,
): TableData {
  return { rowHeads, columns, rows: items.map((x, i) => ({ cells: cells(x, i) })) };
}

/** The unmodified model's scores per benchmark; with generation benchmarks, exact_match and its filter too. */
export function baselineTable(model: ModelReport): TableData {
  const optional = (value: number | null): Inline[] => [value === null ? { muted: ["–"] } : figure(value)];
  const generation = model.hasGeneration;
  return tableOf(
    [
      word("benchmark"),
      figures("items"),
      figures("acc"),
      figures(name("acc_norm")),
      ...(generation ? [figures(name("exact_match")), word("filter")] : []),
      figures("chance"),
    ],
    model.baseline,
    (b) => [
      name(baselineLabel(b)),
      [value(b.items)],
      optional(b.acc),
      optional(b.acc_norm),
      ...(generation ? [optional(b.exact_match), filterText(b)] : []),
      [figure(b.chance)],
    ],
    false,
  );
}

/** A generation benchmark's first filter, and the others' exact_match after it. */
function filterText(b: BaselineRow): Inline[] {
  if (b.outputType !== "generate_until") return [];
  const others = Object.entries(b.exactMatchByFilter ?? {}).filter(([filter]) => filter !== b.filter);
  if (others.length === 0) return name(b.filter ?? "");
  const scores = joined(
    others.map(([filter, v]) => [{ text: filter }, " ", figure(v)]),
    ", ",
  );
  return [{ text: b.filter ?? "" }, " ", { muted: ["(", ...scores, ")"] }];
}

/** The rules of a model at one k, one row each: its label check, and the mean share of its top sets that lowers the ability's own loss. */
export function rulesTable(c: RuleComparison): TableData {
  return tableOf(
    [word("rule"), figures("labels that hold"), figures("top-set weights that lower their own ability's loss (mean over abilities)")],
    c.rules,
    (r) => {
      const shares = r.lowering.flatMap((l) => (l.share === null ? [] : [l.share]));
      const mean = shares.length > 0 ? shares.reduce((a, b) => a + b, 0) / shares.length : null;
      return [
        name(ruleLabel(r)),
        r.labelsChecked > 0 ? [value(r.labelsHold), " of ", value(r.labelsChecked)] : ["–"],
        [mean === null ? "–" : `${(mean * 100).toFixed(1)}%`],
      ];
    },
    false,
  );
}

/** Abilities (rows, grouped by selection) by benchmarks (the section's columns), one cell each. */
function rowsByBenchmarks(s: KSection, rows: KSection["rows"], cell: (c: ReportCell) => TableCell, grouped: boolean): TableData {
  return {
    rowHeads: true,
    columns: [word("ability"), ...s.columns.map((b) => figures(name(b)))],
    rows: rows.map((r, i) => ({
      // the random control's name is the report's own word, the others the user's abilities
      cells: [r.selection === "random" ? [r.label] : name(r.label), ...r.cells.map(cell)],
      group: grouped && i > 0 && r.selection !== rows[i - 1]!.selection,
    })),
  };
}

export function aisTable(s: KSection): TableData {
  return rowsByBenchmarks(
    s,
    s.rows,
    (c) => ({
      kind: "estimate",
      value: c.ais,
      ci: c.ci,
      significant: c.significant,
      reason: c.reason,
      ...(c.saturated ? { saturated: true } : {}),
      ...(c.p !== undefined ? { p: c.p } : {}),
      ...(c.q !== undefined ? { q: c.q } : {}),
      ...(c.test !== undefined ? { test: c.test } : {}),
      ...(c.intervalExcludes0 !== undefined ? { intervalExcludes0: c.intervalExcludes0 } : {}),
      ...(c.randomNull ? { randomNull: c.randomNull } : {}),
    }),
    true,
  );
}

/** The top rows' AIS minus the random control's; empty cells where a row has none. */
export function specificityTable(s: KSection): TableData {
  const cell = (c: ReportCell): TableCell => {
    const x = c.specificity;
    return x
      ? {
          kind: "estimate",
          value: x.value,
          ci: x.ci,
          significant: x.significant,
          reason: x.reason,
          ...(x.p !== undefined ? { p: x.p } : {}),
          ...(x.q !== undefined ? { q: x.q } : {}),
          ...(x.test !== undefined ? { test: x.test } : {}),
        }
      : [];
  };
  return rowsByBenchmarks(
    s,
    s.rows.filter((r) => r.selection === "top"),
    cell,
    false,
  );
}

/**
 * The tests behind the stars of the AIS table (`measure` "ais") or of the specificity table: per
 * cell its q over its table and its p, the test in the column's header when the column has one;
 * none in a run made before the tests.
 */
export function testsTable(s: KSection, measure: "ais" | "specificity" = "ais"): TableData | undefined {
  const rows = measure === "ais" ? s.rows : s.rows.filter((r) => r.selection === "top");
  const tested = (c: ReportCell) => (measure === "ais" ? c : c.specificity);
  if (!rows.some((r) => r.cells.some((c) => tested(c)?.p !== undefined))) return undefined;
  const columnTests = s.columns.map((_, i) => [...new Set(rows.flatMap((r) => tested(r.cells[i]!)?.test ?? []))]);
  return {
    rowHeads: true,
    columns: [
      word("ability"),
      ...s.columns.map((b, i) => figures([{ text: b }, ...(columnTests[i]!.length === 1 ? [` (${testShort(columnTests[i]![0]!)})`] : [])])),
    ],
    rows: rows.map((r, i) => ({
      cells: [
        r.selection === "random" ? [r.label] : name(r.label),
        ...r.cells.map((c, column): TableCell => {
          const x = tested(c);
          if (!x) return [];
          return {
            kind: "test",
            p: x.p ?? null,
            q: x.q ?? null,
            ...(columnTests[column]!.length > 1 && x.test ? { test: x.test } : {}),
            significant: x.significant,
            saturated: measure === "ais" && c.saturated === true,
          };
        }),
      ],
      group: measure === "ais" && i > 0 && r.selection !== rows[i - 1]!.selection,
    })),
  };
}

/** Each top cell against the random control's draws at this k (ablation.random_draws); none without them. */
export function randomNullTable(s: KSection): TableData | undefined {
  const rows = s.rows.filter((r) => r.selection === "top");
  if (!rows.some((r) => r.cells.some((c) => c.randomNull))) return undefined;
  return rowsByBenchmarks(s, rows, (c) => ({ kind: "null", randomNull: c.randomNull }), false);
}

/** Each benchmark's signal, noise and snr at this k, snr descending, those whose profile is noise said so; none in a run without them. */
export function noiseTable(s: KSection): TableData | undefined {
  if (s.noise.length === 0) return undefined;
  return tableOf(
    [word("benchmark"), figures("signal"), figures("noise"), { ...figures("snr"), short: "SNR" }, word("profile")],
    s.noise,
    (n) => [
      name(n.column),
      [figure(n.signal)],
      [figure(n.noise)],
      [n.snr === null ? "–" : figure(n.snr, 2)],
      [n.isNoise ? { strong: ["noise (snr < 1)"] } : n.snr === null ? { muted: ["no noise measured"] } : "signal"],
    ],
  );
}

/** Documents turned right -> wrong / wrong -> right, per cell. */
export function flipsTable(s: KSection): TableData {
  return rowsByBenchmarks(s, s.rows, (c) => [value(c.flips.rightToWrong), " / ", value(c.flips.wrongToRight)], true);
}

/** Each labelled benchmark: the AIS of its label's top set against the largest of that row on a benchmark without the label. */
export function labelsTable(s: KSection): TableData {
  return tableOf([word("benchmark"), word("label"), figures("AIS"), figures("largest other"), word("holds")], s.labels, (l) => [
    name(l.benchmark),
    name(l.ability),
    [l.ais === null ? "n/a" : figure(l.ais)],
    l.largestOther ? [figure(l.largestOther.ais), " ", { muted: ["(", { text: l.largestOther.benchmark }, ")"] }] : ["–"],
    [l.holds ? "yes" : { strong: ["no"] }],
  ]);
}

/** Per benchmark, the abilities the config expects with their AIS, those that show, the unexpected that show, and rho of the weights. */
export function expectationsTable(s: KSection): TableData {
  return tableOf(
    [
      word("benchmark"),
      word("expected (AIS)"),
      { ...figures("expected that show"), short: "show" },
      word("unexpected that show"),
      figures("ρ"),
    ],
    s.expectations,
    (e) => [
      name(e.benchmark),
      joined(
        e.expected.map((x) => [
          { text: x.ability },
          ...(x.weight === null ? [] : [" ", { muted: [{ factor: x.weight }] }]),
          " (",
          x.ais === null ? "n/a" : { figure: x.ais, starred: x.significant },
          ")",
        ]),
        "; ",
      ),
      [value(e.confirmed.length), " of ", value(e.expected.length)],
      e.unexpected.length === 0 ? [{ muted: ["none"] }] : joined(e.unexpected.map(name), "; "),
      [orDash(e.rankCorrelation, 2)],
    ],
  );
}

/** Abilities measured with a second diagnostic set: rho of the two AIS rows, and the benchmarks where they disagree. */
export function consistencyTable(s: KSection): TableData {
  return tableOf([word("ability"), word("second set"), figures("ρ"), figures("benchmarks"), word("disagree")], s.consistency, (c) => [
    name(c.ability),
    name(c.set),
    [orDash(c.rankCorrelation, 2)],
    [value(c.benchmarks)],
    c.disagreements.length === 0
      ? [{ muted: ["none"] }]
      : joined(
          c.disagreements.map((d) => [{ text: d.benchmark }, " (", figure(d.ais), " vs ", figure(d.setAis), ")"]),
          "; ",
        ),
  ]);
}

/** Two abilities ablated together: the weights zeroed, and per benchmark the interference and the union's AIS. */
export function pairsTable(s: KSection): TableData {
  return tableOf(
    [word("abilities"), figures([{ variable: "n" }]), ...s.pairs[0]!.cells.map((c) => figures(name(c.benchmark)))],
    s.pairs,
    (p) => [joined(p.abilities.map(name), " + "), [{ count: p.n }], ...p.cells.map((cell): TableCell => ({ kind: "interference", cell }))],
  );
}

/** The Jaccard index of every two abilities' top sets, with the weights they share. */
export function overlapTable(s: KSection): TableData {
  const o = s.overlap!;
  return tableOf([word(""), ...o.abilities.map((a) => figures(name(a)))], o.abilities, (a, i) => [
    name(a),
    ...o.abilities.map((_, j): TableCell => ({ kind: "overlap", jaccard: o.jaccard[i]![j]!, shared: o.intersections[i]![j]! })),
  ]);
}

/** Each ability's top set ranked from two halves of its items, and how alike the two are. */
export function stabilityTable(s: KSection): TableData {
  return tableOf([word("ability"), figures("halves (items)"), figures("shared"), figures("Jaccard")], s.stability, (x) => [
    name(x.ability),
    [value(x.halves[0]), " + ", value(x.halves[1])],
    [{ count: x.shared }],
    [figure(x.jaccard)],
  ]);
}

/** Each ability's chunked top set against its exact top n. */
export function chunkedTable(s: KSection): TableData {
  return tableOf(
    [word("ability"), figures("chunked set"), figures(["exact top ", { variable: "n" }]), figures("shared"), figures("Jaccard")],
    s.chunked,
    (c) => [name(c.ability), [{ count: c.chunkedN }], [{ count: c.topN }], [{ count: c.shared }], [figure(c.jaccard)]],
  );
}

/** Per row, the share (and number) of its zeroed weights whose zeroing lowers the ability's own loss; none when no row measured it. */
export function loweringTable(s: KSection): TableData | undefined {
  const ranked = s.rows.flatMap((r) => (r.lowering ? [{ label: r.label, ...r.lowering }] : []));
  if (ranked.length === 0) return undefined;
  return tableOf([word(""), figures("share"), figures("weights")], ranked, (r) => [
    name(r.label),
    [figure(r.share, 2)],
    [{ count: r.count }],
  ]);
}

/**
 * The documents a negative cell flipped, of its kind: generated ones with the target, the answer
 * before and after and the two generations; multiple-choice ones with the target, the prediction
 * before and after and each choice's log-likelihood before and after.
 */
export function documentsTable(cell: NegativeCell): TableData {
  const start = (d: FlippedDocument): TableCell[] => [[value(d.index)], { kind: "flip", direction: d.direction }];
  if (cell.metric === "exact_match")
    return tableOf(
      [
        figures("document"),
        word("flip"),
        word("target"),
        word("answer: baseline → ablated"),
        word("baseline generation"),
        word("ablated generation"),
      ],
      cell.documents.filter((d): d is GenerationDocument => d.kind === "generate_until"),
      (d) => [
        ...start(d),
        [{ quoted: d.target }],
        [{ quoted: d.baselineAnswer }, " → ", { quoted: d.ablatedAnswer }],
        [{ quoted: d.baselineResponse }],
        [{ quoted: d.ablatedResponse }],
      ],
      false,
    );
  const perByte = cell.metric === "acc_norm";
  const logprobs = (document: ChoiceDocument, logprobs: number[], predicted: number): TableCell => ({
    kind: "logprobs",
    document,
    logprobs,
    predicted,
    perByte,
  });
  return tableOf(
    [
      figures("document"),
      word("flip"),
      figures("target"),
      figures("prediction: baseline → ablated"),
      word("baseline log-likelihoods"),
      word("ablated log-likelihoods"),
    ],
    cell.documents.filter((d): d is ChoiceDocument => d.kind !== "generate_until"),
    (d) => [
      ...start(d),
      [value(d.target)],
      [value(d.baselinePrediction), " → ", value(d.ablatedPrediction)],
      logprobs(d, d.baselineLogprobs, d.baselinePrediction),
      logprobs(d, d.ablatedLogprobs, d.ablatedPrediction),
    ],
    false,
  );
}

/** A comparison's AIS(A) - AIS(B), abilities by benchmarks. */
export function differenceTable(c: Comparison): TableData {
  return tableOf([word("ability"), ...c.benchmarks.map((b) => figures(name(b.benchmark)))], c.abilities, (ability) => [
    name(ability),
    ...c.benchmarks.map((b): TableCell => ({
      kind: "difference",
      cell: c.cells.find((cell) => cell.ability === ability && cell.benchmark === b.benchmark),
    })),
  ]);
}

/** How alike a comparison's two profiles rank the abilities, per benchmark. */
export function agreementTable(c: Comparison): TableData {
  return tableOf([word("benchmark"), word("metric"), word("documents"), figures("ρ"), figures("abilities")], c.benchmarks, (b) => [
    name(b.benchmark),
    name(b.metric),
    [b.paired ? "the same (paired)" : "different (unpaired)"],
    [b.rankCorrelation === null ? "n/a" : figure(b.rankCorrelation, 2)],
    [value(b.abilities)],
  ]);
}
