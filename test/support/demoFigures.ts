// The demo's comparisons recomputed by hand from a run's per-item files: the expected abilities
// (`expects`), the consistency of its second diagnostic set (`sets: separate`) and its pair
// (`ablation.pairs`). test/integration/demo.test.ts runs them on the demo's run; each throws
// (assert) on a figure that is missing or differs from the one computed here.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { abilityImpactScore } from "../../src/core/analysis/ais";
import { loadRun, RunItems } from "../../src/core/report/load";
import { buildReport } from "../../src/core/report/model";
import type { BenchmarkItem } from "../../src/core/analysis/generation";
import type { Results } from "../../src/core/results/schema";
import { DEMO_MAIN_K, DEMO_PAIR, SECOND_SET_ABILITY } from "../../scripts/lib/demoAuthoring";
import { separateSetName } from "../../src/core/config/abilities";

const TOLERANCE = 1e-9;

/** acc of one benchmark's items: a document is right when its predicted choice is its target. */
function accuracy(items: readonly BenchmarkItem[], benchmark: string): number {
  const on = items.filter((x) => x.benchmark === benchmark);
  assert.ok(on.length > 0, `no items of ${benchmark}`);
  return on.filter((x) => "prediction" in x && x.prediction === x.target).length / on.length;
}

/** Spearman's rho: Pearson's correlation of the ranks, ties given their mean rank. */
function spearman(xs: readonly number[], ys: readonly number[]): number {
  const ranks = (v: readonly number[]) =>
    v.map((x) => {
      const below = v.filter((y) => y < x).length;
      const equal = v.filter((y) => y === x).length;
      return below + (equal + 1) / 2;
    });
  const [rx, ry] = [ranks(xs), ranks(ys)];
  const mean = (v: number[]) => v.reduce((a, b) => a + b, 0) / v.length;
  const [mx, my] = [mean(rx), mean(ry)];
  const cov = rx.reduce((s, r, i) => s + (r - mx) * (ry[i]! - my), 0);
  const sx = Math.sqrt(rx.reduce((s, r) => s + (r - mx) ** 2, 0));
  const sy = Math.sqrt(ry.reduce((s, r) => s + (r - my) ** 2, 0));
  return cov / (sx * sy);
}

export interface DemoFigures {
  /** Per benchmark with `expects`: `confirmed of expected`. */
  expectations: string[];
  /** rho of the second set's row against its ability's. */
  consistencyRho: number | null;
  /** The pair's interference per benchmark. */
  interference: Record<string, number | null>;
}

/** Checks the demo run's three comparisons against the item files under the first rule at the main k; returns the figures. */
export async function checkDemoFigures(runDir: string): Promise<DemoFigures> {
  const results = JSON.parse(await fs.readFile(path.join(runDir, "results.json"), "utf8")) as Results;
  const model = results.models[0]!;
  const profile = model.profile!;
  const items = new RunItems(runDir);
  const baseline = await items.baseline(model.name);
  const chanceOf = new Map(model.benchmarks.map((b) => [b.name, b.chance]));
  const topOf = (ability: string) => profile.variants.find((v) => v.ability === ability && v.selection === "top" && v.k === DEMO_MAIN_K)!;
  /** AIS of a variant's items on one benchmark, from the files. */
  const aisByHand = async (itemsFile: string, benchmark: string): Promise<number | null> => {
    const impact = abilityImpactScore({
      baseline: accuracy(baseline, benchmark),
      ablated: accuracy(await items.variant(model.name, itemsFile), benchmark),
      chance: chanceOf.get(benchmark)!,
    });
    return impact.defined ? impact.value : null;
  };
  const close = (a: number | null, b: number | null, what: string) =>
    assert.ok(a === b || (a !== null && b !== null && Math.abs(a - b) < TOLERANCE), `${what}: ${a} by hand, ${b} in the run`);

  const report = await buildReport(await loadRun(runDir));
  const section = report.models[0]!.profile!.sections.find((s) => s.k === DEMO_MAIN_K)!;

  // expects: every benchmark has them; each expected ability's AIS is its top set's, recomputed
  assert.equal(section.expectations.length, model.benchmarks.length, "every demo benchmark has `expects`");
  for (const check of section.expectations) {
    for (const e of check.expected)
      close(await aisByHand(topOf(e.ability).items_file, check.benchmark), e.ais, `${check.benchmark}: ${e.ability}`);
    const shows = check.expected.filter((e) => e.ais !== null && e.ais > 0 && e.significant).map((e) => e.ability);
    assert.deepEqual(check.confirmed, shows, check.benchmark);
  }

  // the second set: its own top set, its row against its ability's
  const set = separateSetName(SECOND_SET_ABILITY, 1);
  assert.ok(
    profile.abilities.some((a) => a.name === set && a.of === SECOND_SET_ABILITY),
    `${set} is a second set of ${SECOND_SET_ABILITY}`,
  );
  const [consistency] = section.consistency;
  assert.ok(consistency && consistency.ability === SECOND_SET_ABILITY && consistency.set === set, JSON.stringify(section.consistency));
  const names = model.benchmarks.map((b) => b.name);
  const first = await Promise.all(names.map((b) => aisByHand(topOf(SECOND_SET_ABILITY).items_file, b)));
  const second = await Promise.all(names.map((b) => aisByHand(topOf(set).items_file, b)));
  const both = names.flatMap((_, i) => (first[i] !== null && second[i] !== null ? [i] : []));
  assert.equal(consistency.benchmarks, both.length);
  close(
    spearman(
      both.map((i) => first[i]!),
      both.map((i) => second[i]!),
    ),
    consistency.rankCorrelation,
    "the second set's rho",
  );

  // the pair: AIS of the union, and the interference AIS(A+B) - AIS(A) - AIS(B), per benchmark
  const pair = profile.pairs?.find((p) => p.k === DEMO_MAIN_K && p.abilities.join() === DEMO_PAIR.join());
  assert.ok(pair, `the pair ${DEMO_PAIR.join(" + ")} at k = ${DEMO_MAIN_K}`);
  assert.ok(pair.n > topOf(DEMO_PAIR[0]).n && pair.n <= 2 * topOf(DEMO_PAIR[0]).n, `the union's size ${pair.n}`);
  const interference: Record<string, number | null> = {};
  for (const b of pair.benchmarks) {
    const union = await aisByHand(pair.items_file, b.name);
    const a = await aisByHand(topOf(DEMO_PAIR[0]).items_file, b.name);
    const c = await aisByHand(topOf(DEMO_PAIR[1]).items_file, b.name);
    close(union, b.acc!.ais, `${b.name}: AIS of the pair`);
    // saturated (the pair at chance, or either ability alone at chance): not defined
    const atChance = (ability: string) => topOf(ability).benchmarks.find((x) => x.name === b.name)!.acc!.saturated === true;
    const saturated = union !== null && (union >= 1 || b.acc!.ci!.high >= 1 || DEMO_PAIR.some(atChance));
    assert.equal(b.acc!.reason !== undefined && b.acc!.interference === null, saturated, `${b.name}: the pair's saturation`);
    close(union === null || a === null || c === null || saturated ? null : union - a - c, b.acc!.interference, `${b.name}: interference`);
    interference[b.name] = b.acc!.interference;
  }
  return {
    expectations: section.expectations.map((e) => `${e.benchmark}: ${e.confirmed.length} of ${e.expected.length}`),
    consistencyRho: consistency.rankCorrelation,
    interference,
  };
}
