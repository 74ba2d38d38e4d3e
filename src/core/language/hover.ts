// Hovers, as Markdown: what the method will make of the thing under the cursor.
// - a diagnostic item: the exact text the importance loss reads, for each model of the configs
//   that use its file (through the model's chat template when the config asks for it), and its
//   token count;
// - a benchmark entry of a config: its first document as the model sees it, how many documents
//   are scored, chance, and the smallest AIS it detects (at the newest run's baseline, or an
//   assumed one before a run);
// - an ability entry: how many items it has, from which files, and the health of those items;
// - a config key: what the schema says of it.
import * as path from "node:path";
import type { ResolvedAbility, ResolvedBenchmark, ResolvedModel } from "../config/load";
import { chanceOfItems, detectsMinEffect, powerFigure, powerLevel, type BenchmarkPower } from "../config/power";
import { schemaAt } from "../config/schemaAt";
import type { DiagnosticItem } from "../diagnostic/item";
import { reviewFileOf, type ReviewFile } from "../diagnostic/review/reviewFile";
import { itemReviews } from "../diagnostic/review/states";
import { reviewSummary } from "../analysis/labelAccuracy";
import type { Proportion } from "../analysis/agreement";
import {
  answerPositionBalance,
  formatP,
  HEALTH_ALPHA,
  longestAnswerBias,
  MIN_ITEMS_PER_ABILITY,
  stabilityVerdict,
  type MeasuredStability,
} from "../diagnostic/health";
import { itemContexts } from "../lmeval/render";
import { renderDiagnosticChat, itemChatContexts } from "../prompts/chatPrompt";
import { renderDiagnosticItem } from "../prompts/diagnosticText";
import type { Problem } from "../base/problems";
import { mdCode, mdText, verbatim } from "./markdown";

export { verbatim } from "./markdown";

/** How one model reads a diagnostic item: the text, and its tokens when the tokenizer could be loaded. */
export interface ItemRendering {
  model: string;
  config: string;
  chat: boolean;
  text: string;
  tokens?: number;
  /** Why the item cannot be rendered for this model (a chat template that refuses it). */
  error?: string;
}

/** The text the importance loss reads for `item` under `model` (its chat template when it has one). */
export function diagnosticTextFor(item: DiagnosticItem, model: Pick<ResolvedModel, "chat">): string {
  return model.chat ? renderDiagnosticChat(item, model.chat.template) : renderDiagnosticItem(item);
}

export function diagnosticItemHover(item: DiagnosticItem, renderings: readonly ItemRendering[]): string {
  const head = `**Diagnostic item ${mdCode(item.id)}** · ${mdText(item.ability)} · answer ${letterOf(item.answer)}`;
  if (renderings.length === 0) {
    return `${head}\n\nThe importance loss reads (no config uses this file, so no tokenizer is known):\n\n${verbatim(renderDiagnosticItem(item))}`;
  }
  // Models that read the same text are shown once.
  const byText = new Map<string, ItemRendering[]>();
  for (const r of renderings) byText.set(r.error ?? r.text, [...(byText.get(r.error ?? r.text) ?? []), r]);
  const sections = [...byText.values()].map((group) => {
    const first = group[0]!;
    const who = group.map((r) => `${mdCode(r.model)}${r.tokens !== undefined ? ` (${r.tokens} tokens)` : ""}`).join(", ");
    if (first.error) return `For ${who}: ${mdText(first.error)}`;
    const how = first.chat ? "through its chat template" : "as plain text";
    return `For ${who}, ${how}, in ${group
      .map((r) => mdText(path.basename(r.config)))
      .filter(unique)
      .join(", ")}:\n\n${verbatim(first.text)}`;
  });
  return `${head}\n\nThe importance loss reads every token of:\n\n${sections.join("\n\n")}`;
}

/**
 * The review of an item (its decision, or that it is open) and of its dataset's labels so far:
 * the share found right with its Wilson interval, per the item's ability and overall.
 */
export function itemReviewHover(file: string, item: DiagnosticItem, review: ReviewFile, items: readonly DiagnosticItem[]): string {
  const mine = itemReviews([item], review)[0]!;
  const d = mine.decision;
  const what =
    mine.state === "open"
      ? "not reviewed yet"
      : mine.state === "changed"
        ? "changed since its review: open again"
        : `${mine.state}${d!.decision === "correct" ? ` (the right answer is ${letterOf(d!.answer!)})` : ""}${d!.reviewer ? ` by ${mdText(d!.reviewer)}` : ""}${d!.time ? `, ${mdText(d!.time.slice(0, 10))}` : ""}${d!.note ? `: ${mdText(d!.note)}` : ""}`;
  const summary = reviewSummary(items, review);
  const ability = summary.abilities.find((a) => a.ability === item.ability);
  const scope = summary.sample ? `on its random sample of ${summary.sample.n}` : "on the items reviewed (no random sample)";
  const rows = [...(ability ? [ability] : []), ...(summary.abilities.length > 1 ? [summary.overall] : [])].map(
    (a) => `- ${a.ability === "all" ? "all abilities" : mdText(a.ability)}: ${accuracyText(a.accuracy)}`,
  );
  return `**Review** (${mdText(path.basename(reviewFileOf(file)))}): ${what}\n\nLabels found right, ${scope}:\n\n${rows.join("\n")}`;
}

function accuracyText(p: Proportion): string {
  if (p.rate === null) return "none judged yet";
  return `${p.k} of ${p.n} (${(p.rate * 100).toFixed(1)}%, 95% CI ${(p.low! * 100).toFixed(1)}-${(p.high! * 100).toFixed(1)}%)`;
}

function unique<T>(value: T, index: number, all: readonly T[]): boolean {
  return all.indexOf(value) === index;
}

function letterOf(index: number): string {
  return String.fromCharCode(65 + index);
}

/** Chance of a benchmark: the mean of 1/|choices| for multiple choice, 0 for exact match. */
export const chanceOf = chanceOfItems;

/**
 * The benchmark's power (config/power.ts), one line per model of the run that gave the baseline:
 * the minimum detectable AIS and where its baseline is from; what `stats.min_effect` would need
 * when it falls short.
 */
function powerHover(powers: readonly BenchmarkPower[]): string[] {
  return powers.map((p) => {
    const who = p.from !== "assumed" && powers.length > 1 ? `${mdCode(p.from.model)}: ` : "";
    const baseline =
      p.from === "assumed"
        ? `at an assumed baseline ${powerFigure(p.baseline)} (halfway between chance and 1: no finished run has scored it)`
        : `from the baseline ${p.from.metric} ${powerFigure(p.baseline)} of run ${mdCode(p.from.runId)} (chance ${powerFigure(p.chance)})`;
    if (p.documents === 0) return `${who}Minimum detectable AIS: none, no documents`;
    if (!(p.baseline > p.chance)) return `${who}No AIS is defined ${baseline}: the baseline is at or below chance`;
    const figure = p.detectable === null ? "none up to 1" : `**${powerFigure(p.detectable)}**`;
    const short =
      !detectsMinEffect(p) && p.needed !== null
        ? `; \`stats.min_effect\` ${powerFigure(p.minEffect)} needs ${p.needed.toLocaleString("en-US")} documents`
        : "";
    return `${who}Minimum detectable AIS: ${figure} ${powerLevel(p)}, ${baseline}${short}`;
  });
}

export function benchmarkHover(
  benchmark: ResolvedBenchmark,
  models: readonly ResolvedModel[],
  power: readonly BenchmarkPower[] = [],
): string {
  const { task } = benchmark;
  const first = task.items[0];
  const lines = [
    `**Benchmark ${mdCode(benchmark.name)}** · ${task.outputType} · ${task.items.length.toLocaleString("en-US")} documents scored · chance ${chanceOf(benchmark).toFixed(3)}`,
    `Task ${mdText(path.basename(task.file))}, data ${mdText(path.basename(task.dataFile))}${task.numFewshot > 0 ? `, ${task.numFewshot}-shot` : ""}${benchmark.ability ? `; labelled ${mdText(benchmark.ability)}` : ""}`,
    ...powerHover(power),
  ];
  if (!first) return lines.join("\n\n");
  const chatModels = models.filter((m) => m.chat);
  const plain = models.length === 0 || chatModels.length < models.length;
  const multipleInput = first.kind === "multiple_choice" ? first.multipleInput : undefined;
  // In lm-eval's multiple-input form each choice has a context of its own: the correct choice's is shown.
  const shown = first.kind === "multiple_choice" && multipleInput ? first.target : 0;
  const answer =
    first.kind !== "multiple_choice"
      ? `Target: ${mdText(first.target)}`
      : `${multipleInput ? `Choices (each ends its own context; all are scored on the continuation “${mdText(multipleInput.targetText)}”)` : "Choices (continuations scored after the context)"}: ` +
        first.choices
          .map((c, i) => `${i === first.target ? "**" : ""}${letterOf(i)}. ${mdText(c)}${i === first.target ? "**" : ""}`)
          .join(" · ");
  lines.push(
    `Document ${first.index}${first.line !== undefined ? ` (line ${first.line})` : ""} as the model reads it${multipleInput ? ", with the correct choice's context" : ""}:`,
  );
  if (plain) lines.push(verbatim(itemContexts(first)[shown]!));
  for (const model of chatModels) {
    try {
      lines.push(`Through ${mdCode(model.name)}'s chat template:`, verbatim(itemChatContexts(first, task, model.chat!)[shown]!));
    } catch (e) {
      lines.push(`${mdCode(model.name)}'s chat template refuses it: ${mdText((e as Error).message)}`);
    }
  }
  lines.push(answer);
  return lines.join("\n\n");
}

/**
 * The health of an ability's items, in a few lines. Whether they are enough for a stable ranking
 * is the run's measurement when one measured it (`measured`), else the rule of thumb on the count.
 */
export function abilityHealth(ability: ResolvedAbility, problemsOfFiles: readonly Problem[], measured?: MeasuredStability): string[] {
  const items = ability.items;
  const lines: string[] = [];
  const count = items.length.toLocaleString("en-US");
  if (measured) lines.push(`${count} items: ${stabilityVerdict(measured).text}`);
  else {
    lines.push(
      items.length >= MIN_ITEMS_PER_ABILITY
        ? `${count} items (enough for a stable ranking: ${MIN_ITEMS_PER_ABILITY} or more; \`ablation.stability: true\` measures it)`
        : `${count} items: fewer than the ${MIN_ITEMS_PER_ABILITY} a stable ranking needs`,
    );
  }
  const balance = answerPositionBalance(items);
  if (balance) {
    const verdict = balance.pValue < HEALTH_ALPHA ? "unbalanced" : "balanced";
    lines.push(
      `answer positions ${verdict} (chi-square p = ${formatP(balance.pValue)}; ${balance.cells.map((c) => `${c.label} ${c.observed}`).join(", ")})`,
    );
  }
  const bias = longestAnswerBias(items);
  if (bias) {
    const verdict = bias.pValue < HEALTH_ALPHA && bias.longest > bias.expected ? "more often than chance" : "no more often than chance";
    lines.push(`the answer is the longest choice ${verdict} (${bias.longest} of ${bias.eligible}; p = ${formatP(bias.pValue)})`);
  }
  const counts = new Map<string, number>();
  for (const p of problemsOfFiles) counts.set(p.code, (counts.get(p.code) ?? 0) + 1);
  if (counts.size > 0) lines.push(`problems in its files: ${[...counts].map(([code, n]) => `${n} ${code}`).join(", ")}`);
  return lines;
}

export function abilityHover(ability: ResolvedAbility, problemsOfFiles: readonly Problem[], measured?: MeasuredStability): string {
  const files = ability.files.map((f) => mdCode(path.basename(f))).join(", ");
  return [
    `**Ability ${mdText(ability.name)}** · from ${files}`,
    ...abilityHealth(ability, problemsOfFiles, measured).map((l) => `- ${l}`),
  ].join("\n\n");
}

/** The schema's description of the config field at `path`, when it has one. */
export function schemaHover(path: readonly (string | number)[]): string | undefined {
  const node = schemaAt(path);
  const key = [...path].reverse().find((s) => typeof s === "string");
  if (!node?.description || key === undefined) return undefined;
  const def = node.default !== undefined ? ` (default \`${JSON.stringify(node.default)}\`)` : "";
  return `**${mdText(key)}**${def}\n\n${node.description}`;
}
