// `ablation.pairs` (docs/method.md, "Two abilities at once"): the pairs of abilities ablated
// together, as the config names them or all of them, checked where they are written.
import { nearMissAbility } from "../diagnostic/paperAbilities";
import type { Problem } from "../base/problems";
import type { YamlSource } from "../base/yamlSource";
import type { ProfileConfig } from "./types";

/** The pairs of the config (names, each once, in its order); `all`: every two abilities. */
export function resolvePairs(config: ProfileConfig, source: YamlSource, problems: Problem[]): [string, string][] {
  const spec = config.ablation?.pairs;
  if (spec === undefined) return [];
  const names = (config.abilities ?? []).map((a) => a.name);
  const pairs: [string, string][] =
    spec === "all" ? names.flatMap((a, i) => names.slice(i + 1).map((b): [string, string] => [a, b])) : spec.map(([a, b]) => [a, b]);
  let usable = true;
  if (spec !== "all") {
    spec.forEach((pair, p) => {
      pair.forEach((name, j) => {
        if (names.includes(name)) return;
        usable = false;
        const guess = nearMissAbility(name, names);
        problems.push(
          source.at(
            ["ablation", "pairs", p, j],
            "config.unknown-pair-ability",
            `\`${name}\` is not one of this config's abilities${guess ? `: did you mean \`${guess}\`?` : ` (${names.map((n) => `\`${n}\``).join(", ")})`}`,
            guess ? { data: { suggestion: guess } } : {},
          ),
        );
      });
      if (pair[0] === pair[1]) {
        usable = false;
        problems.push(source.at(["ablation", "pairs", p], "config.bad-pairs", `a pair names \`${pair[0]}\` twice: name two abilities`));
      }
    });
  }
  const selections = config.ablation?.selections;
  if (pairs.length > 0 && selections !== undefined && !selections.includes("top")) {
    usable = false;
    problems.push(
      source.at(["ablation", "pairs"], "config.bad-pairs", "pairs ablate the union of two top sets: `ablation.selections` needs `top`", {
        on: "key",
      }),
    );
  }
  const sharded =
    (typeof config.shards === "number" && config.shards > 1) ||
    config.shards === "auto" ||
    (config.devices?.length ?? 0) > 1 ||
    (typeof config.target === "object" && "slurm" in config.target && (config.target.slurm.shards ?? 1) > 1);
  if (pairs.length > 0 && sharded) {
    usable = false;
    problems.push(
      source.at(["ablation", "pairs"], "config.bad-pairs", "pairs need both abilities' top sets in one runner: run them without shards", {
        on: "key",
      }),
    );
  }
  return usable ? dedupe(pairs) : [];
}

/** Each unordered pair once (the first order written). */
function dedupe(pairs: [string, string][]): [string, string][] {
  const seen = new Set<string>();
  return pairs.filter(([a, b]) => {
    const key = JSON.stringify([a, b].sort());
    return seen.has(key) ? false : (seen.add(key), true);
  });
}

/** What `ablation.pairs` costs, for `bprof validate`: one variant per pair, rule and k, each scoring every benchmark item. */
export function pairsCostLine(pairs: readonly (readonly [string, string])[], ks: number, items: number, rules = 1): string {
  const variants = pairs.length * ks * rules;
  return (
    `ablation.pairs: ${pairs.length} pair${pairs.length === 1 ? "" : "s"} x ${ks} k${rules > 1 ? ` x ${rules} rules` : ""} = ${variants} more variant${variants === 1 ? "" : "s"} per model, ` +
    `each scoring the ${items} benchmark item${items === 1 ? "" : "s"} once (as a top-set variant does)`
  );
}
