// The ability half of a config: `abilities` (each a diagnostic dataset), `ablation` (the k sweep
// and the selections), checked against the files they name and the models they will ablate.
import * as path from "node:path";
import { nearMissAbility, PAPER_ABILITIES } from "../abilities";
import { loadDiagnosticDataset, type DiagnosticDatasetCheck, type DiagnosticItem } from "../datasets/diagnostic";
import { buildBenchmarkIndex, type BenchmarkText } from "../datasets/ngrams";
import { errorsOf, type Diagnostic } from "../diagnostics";
import { isFile } from "../fsutil";
import { candidateCount, readParameterCount, selectedCount } from "../model/parameters";
import type { YamlSource } from "../yamlSource";
import type { ImportanceMethod, ProfileConfig, Selection } from "./types";

export interface ResolvedAbility {
  name: string;
  /** Absolute paths of its diagnostic datasets, in config order. */
  files: string[];
  /** Its items (those whose `ability` is `name`), in file order, `limit` applied. */
  items: DiagnosticItem[];
}

export interface ResolvedAblation {
  /** Ascending and distinct. */
  k: number[];
  selections: Selection[];
  method: ImportanceMethod;
  frontRemoval: number;
  backRemoval: number;
  batchSize: number;
}

export const DEFAULT_SELECTIONS: readonly Selection[] = ["top", "random"];
export const DEFAULT_BATCH_SIZE = 8;
export const DEFAULT_SEED = 1;

/** What the checks need to know about the resolved models and benchmarks. */
export interface AbilityCheckContext {
  root: string;
  models: readonly { name: string; path: string }[];
  /** Benchmark documents, for the diagnostic datasets' contamination check. */
  benchmarkTexts: readonly BenchmarkText[];
}

export interface AbilitySection {
  abilities: ResolvedAbility[];
  ablation?: ResolvedAblation;
  diagnostics: Diagnostic[];
}

export async function checkAbilitySection(config: ProfileConfig, source: YamlSource, context: AbilityCheckContext): Promise<AbilitySection> {
  const diagnostics: Diagnostic[] = [];
  const specs = config.abilities ?? [];
  if (specs.length === 0) {
    if (config.ablation) diagnostics.push(source.at(["ablation"], "warning", "`ablation` has no effect without `abilities`: the run only scores the benchmarks", "key"));
    if (config.bootstrap) diagnostics.push(source.at(["bootstrap"], "warning", "`bootstrap` has no effect without `abilities`: there is no AIS to put an interval on", "key"));
    return { abilities: [], diagnostics };
  }
  const abilities = await loadAbilities(config, source, context, diagnostics);
  if (!config.ablation) {
    diagnostics.push(source.at(["abilities"], "error", "`abilities` need `ablation` with the fractions k of parameters to zero, e.g. `ablation: {k: [0.01024]}` (the paper's main result)", "key"));
    return { abilities, diagnostics };
  }
  const ablation = resolveAblation(config.ablation);
  diagnostics.push(...(await ablationDiagnostics(config, source, context, ablation)));
  return { abilities, ablation, diagnostics };
}

function resolveAblation(spec: NonNullable<ProfileConfig["ablation"]>): ResolvedAblation {
  return {
    k: [...spec.k].sort((a, b) => a - b),
    selections: spec.selections ?? [...DEFAULT_SELECTIONS],
    method: spec.method ?? "paper",
    frontRemoval: spec.front_removal ?? 0,
    backRemoval: spec.back_removal ?? 0,
    batchSize: spec.batch_size ?? DEFAULT_BATCH_SIZE,
  };
}

async function loadAbilities(config: ProfileConfig, source: YamlSource, context: AbilityCheckContext, diagnostics: Diagnostic[]): Promise<ResolvedAbility[]> {
  const specs = config.abilities ?? [];
  const declared = specs.map((a) => a.name);
  const declaredSet = new Set(declared);
  const seenNames = new Map<string, number>();
  const datasets = new Map<string, Promise<DiagnosticDatasetCheck>>();
  const benchmarkIndex = context.benchmarkTexts.length > 0 ? buildBenchmarkIndex(context.benchmarkTexts) : undefined;
  const load = (file: string) => {
    let loaded = datasets.get(file);
    if (!loaded) {
      loaded = loadDiagnosticDataset(file, { abilities: declared, ...(benchmarkIndex ? { benchmarkIndex } : {}) });
      datasets.set(file, loaded);
    }
    return loaded;
  };
  const reported = new Set<string>();
  const abilities: ResolvedAbility[] = [];

  for (const [i, spec] of specs.entries()) {
    const first = seenNames.get(spec.name);
    if (first !== undefined) {
      diagnostics.push(source.at(["abilities", i, "name"], "error", `ability \`${spec.name}\` is declared twice (first as abilities[${first}]): list its datasets under one entry's \`data\``));
    } else {
      seenNames.set(spec.name, i);
    }
    const suggestion = nearMissAbility(spec.name, PAPER_ABILITIES);
    const earlier = declared.slice(0, i).filter((name) => name !== spec.name);
    const twin = suggestion === undefined ? nearMissAbility(spec.name, earlier) : undefined;
    if (suggestion !== undefined) {
      diagnostics.push(source.at(["abilities", i, "name"], "warning",
        `ability \`${spec.name}\` is not one of the paper's abilities: did you mean \`${suggestion}\`? (a new ability is fine; a misspelt one does not match the items of \`${suggestion}\`)`));
    } else if (twin !== undefined) {
      diagnostics.push(source.at(["abilities", i, "name"], "warning",
        `ability \`${spec.name}\` is almost the name of \`${twin}\`, declared above: if they are one ability, declare it once with both datasets under \`data\``));
    }

    const entries = typeof spec.data === "string" ? [{ file: spec.data, at: ["abilities", i, "data"] }] : spec.data.map((file, j) => ({ file, at: ["abilities", i, "data", j] }));
    const files: string[] = [];
    const items: DiagnosticItem[] = [];
    const abilitiesInFiles = new Set<string>();
    let usable = true;
    for (const entry of entries) {
      const file = path.resolve(context.root, entry.file);
      files.push(file);
      if (!(await isFile(file))) {
        diagnostics.push(source.at(entry.at, "error", `diagnostic dataset not found: ${file}`));
        usable = false;
        continue;
      }
      const loaded = await load(file);
      if (!reported.has(file)) {
        reported.add(file);
        diagnostics.push(...loaded.diagnostics);
        if (errorsOf(loaded.diagnostics).length > 0) {
          diagnostics.push(source.at(entry.at, "error", `the diagnostic dataset ${path.basename(file)} has errors (see ${file})`));
        }
        const undeclared = countBy(loaded.items.filter((item) => !declaredSet.has(item.ability)), (item) => item.ability);
        if (undeclared.size > 0) {
          const list = [...undeclared].map(([name, n]) => `\`${name}\` (${n})`).join(", ");
          diagnostics.push(source.at(entry.at, "warning", `${path.basename(file)} has items of abilities not declared in \`abilities\`, which are not used: ${list}`));
        }
      }
      if (errorsOf(loaded.diagnostics).length > 0) usable = false;
      for (const item of loaded.items) {
        abilitiesInFiles.add(item.ability);
        if (item.ability === spec.name) items.push(item);
      }
    }
    if (usable && items.length === 0) {
      const found = abilitiesInFiles.size > 0 ? `its items are for ${[...abilitiesInFiles].map((a) => `\`${a}\``).join(", ")}` : "it has no items";
      diagnostics.push(source.at(["abilities", i, "data"], "error", `no diagnostic item has \`"ability": "${spec.name}"\`: ${found}`));
    }
    abilities.push({ name: spec.name, files, items: spec.limit !== undefined ? items.slice(0, spec.limit) : items });
  }
  return abilities;
}

function countBy<T>(values: readonly T[], key: (value: T) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(key(v), (counts.get(key(v)) ?? 0) + 1);
  return counts;
}

/**
 * k against each model whose config.json is readable: n = floor(k x P) must not exceed the MLP
 * candidates of the included layers (the runner refuses such a job), and an n of 0 ablates
 * nothing. Layer removal must leave a layer.
 */
async function ablationDiagnostics(config: ProfileConfig, source: YamlSource, context: AbilityCheckContext, ablation: ResolvedAblation): Promise<Diagnostic[]> {
  const diagnostics: Diagnostic[] = [];
  const k = config.ablation!.k;
  // Where each value sits in the file: the runner sees them sorted, the user as written.
  const kIndex = (value: number) => k.indexOf(value);
  for (const model of context.models) {
    const count = await readParameterCount(model.path);
    if (!count) continue;
    const { frontRemoval, backRemoval } = ablation;
    if (frontRemoval + backRemoval >= count.layers) {
      const at = frontRemoval > 0 ? "front_removal" : "back_removal";
      diagnostics.push(source.at(["ablation", at], "error",
        `front_removal + back_removal = ${frontRemoval + backRemoval} excludes every layer of model \`${model.name}\` (${count.layers} layers): no candidate is left`));
      continue;
    }
    const candidates = candidateCount(count, frontRemoval, backRemoval);
    const share = candidates / count.total;
    const layers = frontRemoval + backRemoval > 0 ? ` of layers ${frontRemoval}..${count.layers - backRemoval - 1}` : "";
    for (const value of ablation.k) {
      const n = selectedCount(value, count.total);
      const at = ["ablation", "k", kIndex(value)];
      if (n > candidates) {
        diagnostics.push(source.at(at, "error",
          `k = ${value} selects floor(k x ${count.total}) = ${n} parameters of model \`${model.name}\`, more than its ${candidates} MLP candidates${layers} ` +
          `(${(100 * share).toFixed(2)}% of its parameters): k must be at most ${candidates} / ${count.total} = ${share.toPrecision(4)}`));
      } else if (n === 0) {
        diagnostics.push(source.at(at, "warning",
          `k = ${value} selects floor(k x ${count.total}) = 0 parameters of model \`${model.name}\`: its variants are the unmodified model`));
      }
    }
  }
  return diagnostics;
}
