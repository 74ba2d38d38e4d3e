// The Markdown of the trees' tooltips and of the hover on a data file's marked cases. Every name
// and text in them comes from files (configs, task files, run folders), so each is escaped
// (markdown.ts); the extension shows these strings with links and HTML off.
import * as path from "node:path";
import type { CaseFlip, CellRef } from "../report/cases";
import { documentName } from "../report/documentName";
import { sameK } from "../report/model";
import { formatP } from "../report/stars";
import type { NegativeCell } from "../report/types";
import type { FileCases } from "../workspace/service";
import type { OutlineEntry } from "./outline";
import { mdCode, mdText } from "./markdown";

/** A signed figure with three decimals: −0.250, +0.100. */
export function signed(x: number): string {
  return (x < 0 ? "−" : "+") + Math.abs(x).toFixed(3);
}

/** Whose ablation flipped a document: the ability and its top set at k, or the random control. Plain text. */
export function flipWho(f: CaseFlip): string {
  return f.ability === null
    ? `the random control (k ${f.k})`
    : `${f.ability} (${f.selection}${f.method ? `, ${f.method}${f.candidates ? ", all layers" : ""} rule` : ""}, k ${f.k})`;
}

/** One flip of a document, as a list item: who, in which model, and the scores (or answers) before and after. */
function flipDetail(f: CaseFlip): string {
  const d = f.document;
  const arrow = d.direction === "wrong_to_right" ? "wrong → right" : "right → wrong";
  const head = `- **${arrow}** when ${mdText(flipWho(f))} is ablated${f.model ? ` in ${mdCode(f.model)}` : ""} (${f.metric})`;
  if (d.kind === "generate_until") {
    return `${head}: answer ${mdCode(d.baselineAnswer)} → ${mdCode(d.ablatedAnswer)} (target ${mdCode(d.target)})`;
  }
  const scores = d.baselineLogprobs.map((before, i) => {
    const marks = [
      i === d.target ? "target" : "",
      i === d.baselinePrediction ? "chosen before" : "",
      i === d.ablatedPrediction ? "chosen after" : "",
    ].filter(Boolean);
    return `${String.fromCharCode(65 + i)} ${before.toFixed(2)} → ${d.ablatedLogprobs[i]!.toFixed(2)}${marks.length > 0 ? ` (${marks.join(", ")})` : ""}`;
  });
  return `${head}: log-probabilities ${scores.join("; ")}`;
}

/** The cell a data file was opened from (the results view's or the Negative AIS tree's): its flips come first. */
export interface CaseFocus {
  runDir: string;
  ref: CellRef;
}

/** Whether a flip is the focused cell's: the same model's variant (ability, selection, k, rule) on the same benchmark. */
function isFocused(f: CaseFlip, benchmark: string, ref: CellRef): boolean {
  return (
    benchmark === ref.benchmark &&
    f.model === ref.model &&
    f.ability === ref.ability &&
    f.selection === ref.selection &&
    sameK(f.k, ref.k) &&
    // the rule is named only where a run ranked by several, and never for the random control
    (ref.method === undefined || f.method === undefined || f.method === ref.method) &&
    (ref.candidates ?? "mlp") === (f.candidates ?? "mlp")
  );
}

/** A folded flip: the direction and whose ablation, on one line, without the scores. */
function foldedFlip(f: CaseFlip): string {
  const arrow = f.document.direction === "wrong_to_right" ? "wrong → right" : "right → wrong";
  return `- ${arrow}: ${mdText(flipWho(f))}${f.model ? ` in ${mdCode(f.model)}` : ""}`;
}

/**
 * The hover on line `line` (1-based) of a data file: each run's flips of the document there, the
 * first in full (the focused cell's, when the file was opened from a cell of that run) and the
 * rest folded to one line each; undefined when none.
 */
export function caseLinesHover(
  cases: readonly FileCases[],
  line: number,
  directions: ReadonlySet<string>,
  focus?: CaseFocus,
): string | undefined {
  const sections: string[] = [];
  for (const runCases of cases) {
    if (runCases.stale && line === 1)
      sections.push(`**Benchmark Profiler**: ${mdText(runCases.stale)}. Pick another run, or run the profile again.`);
    const marked = runCases.lines.find((l) => l.line === line);
    const shown = marked?.flips.filter((f) => directions.has(f.document.direction)) ?? [];
    if (!marked || shown.length === 0) continue;
    const ref = focus?.runDir === runCases.runDir ? focus.ref : undefined;
    const focused = ref ? shown.filter((f) => isFocused(f, marked.benchmark, ref)) : [];
    const [first, ...rest] = [...focused, ...shown.filter((f) => !focused.includes(f))];
    const name = documentName({ index: marked.index, line: marked.line, ...(marked.id !== undefined ? { id: marked.id } : {}) });
    const head = `**${mdText(name)} of ${mdCode(marked.benchmark)}** in run ${mdCode(runCases.runId)} (${mdText(path.basename(runCases.configFile))})`;
    const more =
      rest.length === 0
        ? ""
        : `\n\n**${rest.length} more flip${rest.length === 1 ? "" : "s"}** of this document:\n\n${rest.map(foldedFlip).join("\n")}`;
    sections.push(`${head}\n\n${flipDetail(first!)}${more}`);
  }
  return sections.length > 0 ? sections.join("\n\n---\n\n") : undefined;
}

/** The tooltip of a Profiles tree entry (a model, benchmark or ability of a config): its name, what it names, its files. */
export function profileEntryTooltip(entry: Pick<OutlineEntry, "label" | "detail" | "files">): string {
  const files = entry.files.length > 0 ? `\n\n${entry.files.map((f) => `- ${mdText(f)}`).join("\n")}` : "";
  return `**${mdText(entry.label)}**\n\n${mdText(entry.detail)}${files}`;
}

/** Whether a negative cell is starred: by its q in a run with the tests, by its interval before them. */
function starText(cell: NegativeCell): string {
  if (cell.q === undefined) return cell.significant ? ", significant: the interval excludes 0" : ", not significant";
  const q = cell.q === null ? "" : ` (q ${formatP(cell.q)})`;
  return cell.significant ? `, starred${q}` : `, not starred${q}`;
}

/** The tooltip of a Negative AIS cell: which ablation on which benchmark, its AIS and interval, its flips. */
export function negativeCellTooltip(cell: NegativeCell, ref: CellRef): string {
  const ci = cell.ci ? ` [${signed(cell.ci.low)}, ${signed(cell.ci.high)}]` : "";
  const rule = ref.method ? `, ranked by the ${ref.method} rule${ref.candidates === "all" ? " over every layer's weights" : ""}` : "";
  return (
    `**${mdText(`${cell.row} × ${cell.benchmark}`)}** at k = ${ref.k}${rule} (${cell.metric}, model ${mdCode(ref.model)})\n\n` +
    `AIS ${signed(cell.ais)}${ci}${starText(cell)}\n\n` +
    `${cell.wrongToRight} documents wrong → right, ${cell.rightToWrong} right → wrong`
  );
}

/** The tooltip of a run: its id, its config, where it stands, the runner's message when it failed, its folder. */
export function runTooltip(run: {
  id: string;
  configFile: string;
  status: string;
  message?: string;
  dir: string;
  /** A finished run's fluency, a line per model (runFluencyLines). */
  fluency?: readonly string[];
}): string {
  const message = run.message ? `${mdText(run.message)}\n\n` : "";
  const fluency = run.fluency?.length ? `**Fluency**\n\n${run.fluency.map((l) => `- ${mdText(l)}`).join("\n")}\n\n` : "";
  return `**Run ${mdText(run.id)}** of ${mdText(run.configFile)}\n\n${mdText(run.status)}\n\n${message}${fluency}${mdText(run.dir)}`;
}

/** The tooltip of a shard: which shard, of which model, its work, the runner's message when it failed, its events. */
export function shardTooltip(shard: { label: string; model: string; work: string; message?: string; events: string }): string {
  const message = shard.message ? `${mdText(shard.message)}\n\n` : "";
  return `**${mdText(shard.label)}** of ${mdText(shard.model)}\n\n${mdText(shard.work)}\n\n${message}${mdText(shard.events)}`;
}
