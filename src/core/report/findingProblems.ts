// The failure signatures of a config's newest finished run as problems on the config, where the
// user would change something: an ability's `data` (its diagnostic dataset), a benchmark's
// `ability` label, or `ablation.k` when the whole profile is too quiet.
import { problemAt, type Problem } from "../base/problems";
import type { Finding } from "./types";
import { parseYamlSource, type FieldPath } from "../base/yamlSource";

/** Where in the config a finding points, by the config's own entries. */
export interface ConfigEntries {
  /** Ability names in the config's order (`abilities[i].name`). */
  abilities: readonly string[];
  /** Each benchmark's name and the index of the `benchmarks` entry that made it. */
  benchmarks: readonly { name: string; entry: number }[];
}

/** Problems on `configFile` (whose text is `text`) for the findings of run `runId`; each at most once per place and signature. */
export function findingProblems(
  configFile: string,
  text: string,
  runId: string,
  findings: readonly Finding[],
  entries: ConfigEntries,
): Problem[] {
  const source = parseYamlSource(text, configFile);
  const seen = new Set<string>();
  const out: Problem[] = [];
  // an unstable ranking is diag.unstable-ranking already, on the dataset itself
  for (const f of findings.filter((x) => x.signature !== "unstable-ranking")) {
    for (const field of fieldsOf(f, entries)) {
      const key = `${formatKey(field)}|${f.signature}|${f.method}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(
        problemAt(
          source.place(field),
          "config.failure-signature",
          `${f.title} ${capitalised(f.figures)} (threshold: ${f.threshold}; run ${runId}, ${f.method} rule). Remedy: ${f.remedy}.`,
          f.abilities.length === 1 ? { ability: f.abilities[0]! } : undefined,
        ),
      );
    }
  }
  return out;
}

function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function formatKey(field: FieldPath): string {
  return field.join(".");
}

/** The config fields a finding points at: a labelled benchmark's `ability`, each ability's `data`, else `ablation.k`. */
function fieldsOf(f: Finding, entries: ConfigEntries): FieldPath[] {
  if (f.benchmark !== undefined) {
    const entry = entries.benchmarks.find((b) => b.name === f.benchmark)?.entry;
    return entry === undefined ? [] : [["benchmarks", entry, "ability"]];
  }
  if (f.abilities.length === 0) return [f.setting ?? ["ablation", "k"]];
  return f.abilities.flatMap((a) => {
    const i = entries.abilities.indexOf(a);
    return i < 0 ? [] : [["abilities", i, "data"]];
  });
}
