// Number formatting and the heatmap's colour scale, shared by every report format and the
// VS Code webview (which receives colours already computed, so both draw the same figure).
import type { ImportanceMethod } from "../config/types";
import { escapedControl } from "../base/terminalText";
import type { ReviewRecord } from "../diagnostic/review/forRun";

/** `value` with `digits` decimals; a value that rounds to zero prints without a sign. */
export function formatFixed(value: number, digits: number, minus = "-"): string {
  const text = value.toFixed(digits);
  if (Number(text) === 0) return text.replace(/^-/, "");
  return text.startsWith("-") ? minus + text.slice(1) : text;
}

/** The typographic minus sign (U+2212), for HTML and the heatmap labels. */
export const MINUS = "\u2212";

// C0 controls, DEL, C1 controls, the bidi embeddings, overrides and isolates, and the line and
// paragraph separators.
// eslint-disable-next-line no-control-regex -- these are the characters it finds
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;

/**
 * Text with its control characters made visible, as the CLI shows them on a terminal
 * (base/terminalText.ts): each as `\uXXXX` (ESC as \u001b), the line and paragraph separators
 * U+2028 and U+2029 as spaces. Names, targets and generations come from a run folder that may
 * have come with a repository: printed raw, an escape sequence would move a terminal's cursor,
 * set its title or its clipboard (OSC 52) when a report is read there, and a bidi override would
 * make a line read in another order than it runs. `keep`: the controls a format prints as they
 * are (the tab everywhere; HTML's line feed in generated text; a quoted CSV field's line breaks).
 * Each format escapes the result as it escapes any text (the backslash is special to LaTeX).
 */
export function visibleControls(text: string, keep: RegExp = /\t/): string {
  return text.replace(CONTROL, (c) => (keep.test(c) ? c : c === "\u2028" || c === "\u2029" ? " " : escapedControl(c)));
}

/** Text that is one line wherever it is printed: its line breaks and tabs as spaces, its other controls visible. */
export function oneLine(text: string): string {
  return visibleControls(text.replace(/[\r\n\u2028\u2029]+/g, " ").replace(/\t/g, " "));
}

/** A k value as the config wrote it: shortest decimal that reads back to the same number. */
export function formatK(k: number): string {
  return String(k);
}

/** What the candidates of a profile are, in words: the MLP's weights, or every layer weight matrix. */
export function candidatesWord(p: { candidate_set?: "all" }): string {
  return p.candidate_set === "all" ? "attention and MLP weights (`candidates: all`)" : "MLP weights";
}

/** Integers with thin grouping: 35104 -> "35,104". */
export function formatCount(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}

/**
 * ColorBrewer RdBu (11 classes), from -limit (dark blue: removing the ability helps, interference)
 * through a neutral near-white at 0 to +limit (dark red: the benchmark depends on the ability).
 * A diverging palette designed for perception; linear interpolation between its classes.
 */
export const DIVERGING_STOPS: readonly string[] = [
  "#053061",
  "#2166ac",
  "#4393c3",
  "#92c5de",
  "#d1e5f0",
  "#f7f7f7",
  "#fddbc7",
  "#f4a582",
  "#d6604d",
  "#b2182b",
  "#67001f",
];

/** The fill of cells whose AIS is undefined (drawn hatched in the figure). */
export const UNDEFINED_FILL = "#d9d9d9";

/** Limits a scale can take; the smallest one covering the data is used, larger values saturate. */
const SCALE_LIMITS = [0.05, 0.1, 0.2, 0.25, 0.5, 1];

/**
 * The symmetric limit of a diverging scale for these AIS values: the smallest of 0.05, 0.1, 0.2,
 * 0.25, 0.5 and 1 that covers the largest |AIS|. AIS beyond +-1 (an ablated score below chance)
 * saturates at the ends, so one extreme cell cannot wash out the rest of the figure.
 */
export function scaleLimit(values: Iterable<number | null>): number {
  let largest = 0;
  for (const v of values) if (v !== null && Number.isFinite(v)) largest = Math.max(largest, Math.abs(v));
  return SCALE_LIMITS.find((limit) => largest <= limit + 1e-12) ?? 1;
}

/** Ticks of a colour bar over [-limit, limit]: the ends, the halves and 0, top first. */
export function scaleTicks(limit: number): number[] {
  return [limit, limit / 2, 0, -limit / 2, -limit];
}

function parseHex(hex: string): [number, number, number] {
  const n = Number.parseInt(hex.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

function toHex(rgb: readonly number[]): string {
  return (
    "#" +
    rgb
      .map((c) =>
        Math.round(Math.min(255, Math.max(0, c)))
          .toString(16)
          .padStart(2, "0"),
      )
      .join("")
  );
}

/** The colour of `value` on the diverging scale over [-limit, limit], centred at 0. */
export function divergingColour(value: number, limit: number): string {
  const t = Math.min(1, Math.max(-1, value / limit)); // -1 .. 1
  const position = ((t + 1) / 2) * (DIVERGING_STOPS.length - 1);
  const i = Math.min(DIVERGING_STOPS.length - 2, Math.floor(position));
  const f = position - i;
  const [a, b] = [parseHex(DIVERGING_STOPS[i]!), parseHex(DIVERGING_STOPS[i + 1]!)];
  return toHex(a.map((c, j) => c + (b[j]! - c) * f));
}

/** WCAG relative luminance of a #rrggbb colour, 0 (black) to 1 (white). */
export function luminance(hex: string): number {
  const linear = parseHex(hex).map((c) => {
    const s = c / 255;
    return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * linear[0]! + 0.7152 * linear[1]! + 0.0722 * linear[2]!;
}

/** Near-black text on light fills, white on dark ones (the higher contrast of the two). */
export function textColourOn(hex: string): string {
  const l = luminance(hex);
  return (l + 0.05) / 0.05 >= 1.05 / (l + 0.05) ? "#1a1a1a" : "#ffffff";
}

/** "[low, high]" with `digits` decimals. */
export function formatInterval(ci: { low: number; high: number }, digits: number, minus = "-"): string {
  return `[${formatFixed(ci.low, digits, minus)}, ${formatFixed(ci.high, digits, minus)}]`;
}

/** "95%" for a confidence of 0.95. */
export function formatConfidence(confidence: number): string {
  return `${Number((confidence * 100).toFixed(1))}%`;
}

/** What an importance method ranks by (g: the ability's summed gradient), for the reports' headers. */
export function describeMethod(method: ImportanceMethod): string {
  return method === "signed"
    ? "signed: −θ × g, how much zeroing a weight raises the ability's loss (to first order)"
    : "paper: |θ × g|, as the authors' code";
}

/**
 * A rule's name where rules stand side by side: its method, and "all layers" when it ranked the
 * attention and MLP weights (`ablation.candidates: [mlp, all]` gives each method both).
 */
export function ruleLabel(p: { method: ImportanceMethod; candidate_set?: "all" }): string {
  return p.candidate_set === "all" ? `${p.method}, all layers` : p.method;
}

/** describeMethod, and over which weights when they are every layer's. */
export function describeRule(p: { method: ImportanceMethod; candidate_set?: "all" }): string {
  return p.candidate_set === "all" ? `${describeMethod(p.method)}, over the attention and MLP weights` : describeMethod(p.method);
}

/**
 * An ability's items in a report's abilities line, and what its review said of them: "100 items;
 * labels 46 of 50 right (92.0%, 95% CI 81.2-96.9%, random sample); 3 left out, 1 corrected".
 */
export function abilityWords(a: { sequences: number; review?: ReviewRecord }): string {
  const items = `${formatCount(a.sequences)} items`;
  if (!a.review) return items;
  const r = a.review;
  const l = r.label_accuracy;
  const accuracy =
    l.reviewed === 0
      ? "no label reviewed yet"
      : `labels ${formatCount(l.right)} of ${formatCount(l.reviewed)} right (${percent(l.right / l.reviewed)}%, 95% CI ${percent(l.low!)}-${percent(l.high!)}%, ${l.sample ? "random sample" : "not a random sample"})`;
  return [
    items,
    accuracy,
    ...(r.left_out > 0 ? [`${formatCount(r.left_out)} left out`] : []),
    ...(r.corrected > 0 ? [`${formatCount(r.corrected)} corrected`] : []),
  ].join("; ");
}

function percent(share: number): string {
  return formatFixed(share * 100, 1);
}
