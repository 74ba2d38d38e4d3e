// Completion in a profiling config: keys from the schema, and values that the workspace knows
// (ability names, task files, diagnostic datasets, model folders) or that the method suggests
// (the paper's k sweep, with the number of parameters each k zeroes).
import * as path from "node:path";
import { parseDocument } from "yaml";
import { PAPER_ABILITIES } from "../diagnostic/paperAbilities";
import { keysAt, schemaAt, takesKeys, valuesAt, type SchemaNode } from "../config/schemaAt";
import { selectedCount } from "../model/parameters";
import { mdText } from "./markdown";
import { range, type Position, type Range } from "./text";
import { yamlCursor, type YamlPath } from "./yamlCursor";
import { PAPER_K_SWEEP } from "../config/parse";

export type CompletionKind = "key" | "value" | "ability" | "file" | "folder" | "number";

export interface CompletionItem {
  label: string;
  kind: CompletionKind;
  detail?: string;
  documentation?: string;
  insertText: string;
  /** What the item replaces: the typed word or value. */
  range: Range;
  /** Sorts before items with a larger key. */
  sortText?: string;
}

/** What completion knows beyond the text: files found in the workspace and the models' sizes. */
export interface CompletionContext {
  configFile: string;
  /** Ability names of the workspace's datasets and configs. */
  abilityNames: readonly string[];
  /** Absolute paths of task files, datasets and model folders found near the config. */
  taskFiles: readonly string[];
  datasetFiles: readonly string[];
  modelFolders: readonly string[];
  /** Parameters of each model of the config (config.json), for the k values' details. */
  modelParameters: readonly { name: string; total: number }[];
}

export function configCompletions(text: string, at: Position, context: CompletionContext): CompletionItem[] {
  const cursor = yamlCursor(text, at);
  const replace = range(at.line, cursor.from, at.line, cursor.to);
  // `- to` under `selections:` is a value of a list of names, not a key.
  const kind = cursor.kind === "key" && !takesKeys(cursor.path) ? "value" : cursor.kind;
  // `expects: {Ability: 0.6}` is keyed by ability names, which no schema lists.
  if (kind === "key" && isExpectsMapping(cursor.path))
    return abilityItems(declaredAbilities(text), replace, "declared in this config's `abilities`").map((item) => ({
      ...item,
      insertText: `${item.insertText}: `,
    }));
  if (kind === "key") return keyCompletions(text, at, cursor.path, replace);
  return valueCompletions(cursor.path, replace, context, text);
}

function keyCompletions(text: string, at: Position, mapping: YamlPath, replace: Range): CompletionItem[] {
  const present = new Set(keysPresent(text, at, mapping));
  return keysAt(mapping)
    .filter(([key]) => !present.has(key))
    .map(([key, node]) => ({ label: key, kind: "key" as const, ...describe(node), insertText: `${key}: `, range: replace }));
}

/** The keys the mapping at `mapping` already has, read with the cursor's line left out (it is half typed). */
function keysPresent(text: string, at: Position, mapping: YamlPath): string[] {
  const lines = text.split("\n");
  lines.splice(at.line, 1, "");
  const doc = parseDocument(lines.join("\n"));
  const value = plainValue(() =>
    mapping.length === 0 ? doc.toJS() : (doc.getIn(mapping, false) as { toJSON?: () => unknown } | undefined)?.toJSON?.(),
  );
  return typeof value === "object" && value !== null && !Array.isArray(value) ? Object.keys(value) : [];
}

function describe(node: SchemaNode): { detail?: string; documentation?: string } {
  return {
    ...(node.description ? { documentation: node.description } : {}),
    ...(node.default !== undefined ? { detail: `default ${JSON.stringify(node.default)}` } : {}),
  };
}

function valueCompletions(field: YamlPath, replace: Range, context: CompletionContext, text: string): CompletionItem[] {
  const names = field.filter((s): s is string => typeof s === "string");
  const last = names[names.length - 1];
  const section = names[0];
  const root = path.dirname(context.configFile);
  if (section === "abilities" && last === "name") return abilityItems([...PAPER_ABILITIES, ...context.abilityNames], replace, "ability");
  if (
    (section === "benchmarks" && (last === "ability" || last === "expects")) ||
    (section === "ablation" && last === "pairs") ||
    (section === "abilities" && last === "of")
  )
    return abilityItems(declaredAbilities(text), replace, "declared in this config's `abilities`");
  if (section === "benchmarks" && last === "task") return fileItems(context.taskFiles, root, replace, "file");
  if (section === "abilities" && last === "data") return fileItems(context.datasetFiles, root, replace, "file");
  if (section === "models" && last === "path") return fileItems(context.modelFolders, root, replace, "folder");
  if (section === "ablation" && last === "k") return kItems(context, replace);
  return valuesAt(field).map((value) => ({
    label: String(value),
    kind: "value" as const,
    insertText: String(value),
    range: replace,
    ...describe(schemaAt(field) ?? {}),
  }));
}

/** The mapping of a benchmark's `expects` (its keys are abilities). */
function isExpectsMapping(mapping: YamlPath): boolean {
  return mapping.length === 3 && mapping[0] === "benchmarks" && typeof mapping[1] === "number" && mapping[2] === "expects";
}

function abilityItems(names: readonly string[], replace: Range, detail: string): CompletionItem[] {
  const paper = new Set<string>(PAPER_ABILITIES);
  return [...new Set(names)].map((name) => ({
    label: name,
    kind: "ability" as const,
    insertText: name,
    range: replace,
    detail: paper.has(name) ? "one of the paper's ten abilities" : detail,
    sortText: `${paper.has(name) ? 1 : 0}${name}`,
  }));
}

/** The abilities a config's text declares (`abilities[i].name`), when it parses. */
function declaredAbilities(text: string): string[] {
  const value = plainValue(() => parseDocument(text).toJS()) as { abilities?: { name?: unknown }[] } | undefined;
  return (Array.isArray(value?.abilities) ? value.abilities : []).map((a) => a?.name).filter((n): n is string => typeof n === "string");
}

/** A document's plain value; undefined when its aliases expand past the parser's limit (it then throws). */
function plainValue(read: () => unknown): unknown {
  try {
    return read();
  } catch {
    return undefined;
  }
}

function fileItems(files: readonly string[], root: string, replace: Range, kind: "file" | "folder"): CompletionItem[] {
  return files.map((file) => {
    const relative = path.relative(root, file).split(path.sep).join("/");
    const shown = relative.startsWith("..") ? relative : `./${relative}`;
    return {
      label: shown,
      kind,
      insertText: shown,
      range: replace,
      sortText: `${shown.split("/").length.toString().padStart(3, "0")}${shown}`,
    };
  });
}

function kItems(context: CompletionContext, replace: Range): CompletionItem[] {
  return PAPER_K_SWEEP.map((k, i) => {
    const counts = context.modelParameters.map(
      (m) => `${mdText(m.name)}: n = ${selectedCount(k, m.total).toLocaleString("en-US")} of ${m.total.toLocaleString("en-US")}`,
    );
    return {
      label: String(k),
      kind: "number" as const,
      insertText: String(k),
      range: replace,
      sortText: String(i),
      detail: k === 0.01024 ? "the paper's main result" : "from the paper's sweep",
      ...(counts.length > 0 ? { documentation: `Parameters zeroed (floor(k x P)):\n${counts.join("\n")}` } : {}),
    };
  });
}
