// The outline of a profiling config: its models, benchmarks and abilities, each with where it is
// written, what it names, and how many problems it has (its own and those of the files it names).
// The Profiles tree and the CodeLens lines above a config show it.
import * as path from "node:path";
import type { LoadedProfile } from "../config/load";
import type { Problem } from "../base/problems";
import { parseYamlSource } from "../base/yamlSource";
import { range, type Range } from "./text";
import type { LabelAccuracy } from "../analysis/labelAccuracy";

export interface ProblemCounts {
  /** All of them: the config's own (at the entry) and those of the files it names. */
  errors: number;
  warnings: number;
  /** Those of the files it names (shown in Problems under those files, not under the config). */
  inFiles?: { errors: number; warnings: number };
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/**
 * What a Profiles tree row says of its problems, so the numbers match the Problems panel: where
 * they all are in the config, `1 error, 2 warnings`; where some are in the files it names, where:
 * `1 error in config, 3 in files it names`. Empty when there are none.
 */
export function problemCountsText(c: ProblemCounts): string {
  const part = (total: number, inFiles: number, word: string): string => {
    if (total === 0) return "";
    const own = total - inFiles;
    if (inFiles === 0) return plural(own, word);
    if (own === 0) return `${plural(inFiles, word)} in files it names`;
    return `${plural(own, word)} in config, ${inFiles} in files it names`;
  };
  const parts = [part(c.errors, c.inFiles?.errors ?? 0, "error"), part(c.warnings, c.inFiles?.warnings ?? 0, "warning")].filter(Boolean);
  return parts.join(parts.some((p) => p.includes(" in ")) ? "; " : ", ");
}

/** The sum of rows' counts (a group of entries). */
export function sumCounts(all: readonly ProblemCounts[]): ProblemCounts {
  const total = { errors: 0, warnings: 0, inFiles: { errors: 0, warnings: 0 } };
  for (const c of all) {
    total.errors += c.errors;
    total.warnings += c.warnings;
    total.inFiles.errors += c.inFiles?.errors ?? 0;
    total.inFiles.warnings += c.inFiles?.warnings ?? 0;
  }
  return total;
}

export type OutlineKind = "model" | "benchmark" | "ability";

export interface OutlineEntry {
  kind: OutlineKind;
  /** Its index in the config's list. */
  index: number;
  label: string;
  /** What it names, short: a folder, a task file, a dataset. */
  detail: string;
  /** Where the entry is written in the config (0-based). */
  range: Range;
  problems: ProblemCounts;
  /** The files it names (task file and data; datasets; the model folder), absolute. */
  files: string[];
  /** Benchmarks: documents scored; abilities: items. Absent when they could not be read. */
  count?: number;
  /** Abilities: warnings about the health of their items (bias, duplicates, size). */
  healthWarnings?: number;
  /** Abilities whose datasets have review files: how far the review is, "12/200 reviewed, 91.7% right". */
  review?: string;
}

export interface ProfileOutline {
  file: string;
  /** Problems of the config and of every file it names. */
  problems: ProblemCounts;
  models: OutlineEntry[];
  benchmarks: OutlineEntry[];
  abilities: OutlineEntry[];
  /** The newest finished run of the config, when there is one. */
  latestResults?: { runId: string; dir: string };
}

const HEALTH_CODES = new Set([
  "diag.answer-position-bias",
  "diag.longest-answer-bias",
  "diag.too-few-items",
  "diag.unstable-ranking",
  "diag.duplicate",
  "diag.near-duplicate",
  "diag.contamination",
]);

function counts(own: readonly Problem[], inFiles: readonly Problem[] = []): ProblemCounts {
  const count = (problems: readonly Problem[]) => {
    const errors = problems.filter((p) => p.severity === "error").length;
    return { errors, warnings: problems.length - errors };
  };
  const [a, b] = [count(own), count(inFiles)];
  return { errors: a.errors + b.errors, warnings: a.warnings + b.warnings, inFiles: b };
}

function inField(p: Problem, prefix: string): boolean {
  return p.field !== undefined && (p.field === prefix || p.field.startsWith(`${prefix}.`) || p.field.startsWith(`${prefix}[`));
}

/**
 * The outline of the config `file` whose editor text is `text`; `loaded` is its last check (for
 * what the entries resolved to) and `problemsOf` gives the problems of any file.
 */
export function profileOutline(
  file: string,
  text: string,
  loaded: LoadedProfile | undefined,
  problemsOf: (file: string) => readonly Problem[],
): ProfileOutline {
  const source = parseYamlSource(text, file);
  const raw = (typeof source.value === "object" && source.value !== null ? source.value : {}) as Record<string, unknown>;
  const list = (key: string) =>
    (Array.isArray(raw[key]) ? (raw[key] as unknown[]) : []).map((v) =>
      typeof v === "object" && v !== null ? (v as Record<string, unknown>) : {},
    );
  const own = problemsOf(file);
  const root = path.dirname(file);
  const place = (at: (string | number)[]): Range => {
    const p = source.place(at);
    return range(p.line - 1, p.column - 1, (p.endLine ?? p.line) - 1, (p.endColumn ?? p.column) - 1);
  };
  const entry = (
    kind: OutlineKind,
    key: string,
    index: number,
    label: string,
    detail: string,
    files: string[],
    extra: Partial<OutlineEntry> = {},
  ): OutlineEntry => {
    const named = files.flatMap((f) => problemsOf(f));
    return {
      kind,
      index,
      label,
      detail,
      range: place([key, index]),
      problems: counts(
        own.filter((p) => inField(p, `${key}[${index}]`)),
        named,
      ),
      files,
      ...extra,
    };
  };

  const models = list("models").map((m, i) => {
    const folder = typeof m.path === "string" ? m.path : "";
    return entry(
      "model",
      "models",
      i,
      typeof m.name === "string" ? m.name : path.basename(folder) || `model ${i}`,
      folder,
      folder ? [path.resolve(root, folder)] : [],
    );
  });
  const benchmarks = list("benchmarks").map((b, i) => {
    const resolved = loaded?.resolved.benchmarks.find((r) => r.entry === i);
    const taskFile = typeof b.task === "string" ? path.resolve(root, b.task) : undefined;
    const files = [...(taskFile ? [taskFile] : []), ...(resolved ? [resolved.task.dataFile] : [])];
    const label =
      typeof b.name === "string"
        ? b.name
        : (resolved?.name ?? (typeof b.task === "string" ? path.basename(b.task, path.extname(b.task)) : `benchmark ${i}`));
    const detail = typeof b.task === "string" ? b.task : "inline task";
    return entry("benchmark", "benchmarks", i, label, detail, files, resolved ? { count: resolved.task.items.length } : {});
  });
  const abilities = list("abilities").map((a, i) => {
    const data =
      typeof a.data === "string" ? [a.data] : Array.isArray(a.data) ? a.data.filter((d): d is string => typeof d === "string") : [];
    const files = data.map((d) => path.resolve(root, d));
    // By name: a list of files with `sets: separate` resolves to more abilities than entries.
    const resolved = loaded?.resolved.abilities.find((r) => r.name === a.name);
    const health = files.flatMap((f) => problemsOf(f)).filter((p) => HEALTH_CODES.has(p.code)).length;
    return entry("ability", "abilities", i, typeof a.name === "string" ? a.name : `ability ${i}`, data.join(", "), files, {
      ...(resolved ? { count: resolved.items.length } : {}),
      ...(resolved?.review ? { review: reviewProgressText(resolved.review.accuracy) } : {}),
      healthWarnings: health,
    });
  });
  const named = new Set([...models, ...benchmarks, ...abilities].flatMap((e) => e.files));
  return {
    file,
    problems: counts(
      own,
      [...named].flatMap((f) => problemsOf(f)),
    ),
    models,
    benchmarks,
    abilities,
  };
}

/** "12/200 reviewed, 91.7% right": items with a decision that holds of those to review, and the share of judged labels found right. */
export function reviewProgressText(a: LabelAccuracy): string {
  const done = a.items - a.counts.open - a.counts.changed;
  const right = a.accuracy.rate === null ? "" : `, ${(a.accuracy.rate * 100).toFixed(1)}% right`;
  return `${done}/${a.items} reviewed${right}`;
}
