// Two profiles compared: AIS(A) - AIS(B) with its paired or unpaired bootstrap interval, the rank
// correlation of two profiles, and bprof compare's matching of runs, each recomputed by hand.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { scoreItem } from "../../../src/core/analysis/accuracy";
import { abilityImpactScore } from "../../../src/core/analysis/ais";
import { percentile } from "../../../src/core/analysis/bootstrap";
import { aisDifference, averageRanks, rankCorrelation, type CellScores } from "../../../src/core/analysis/compare";
import { compareProfiles } from "../../../src/core/report/compare";
import { comparisonHeatmap } from "../../../src/core/report/compareFigure";
import { renderComparison } from "../../../src/core/report/compareFormats";
import { divergingColour, scaleLimit } from "../../../src/core/report/format";
import { loadRun } from "../../../src/core/report/load";
import { randomInt, seededRandom } from "../../../src/core/base/random";
import { baselineItems, CAUSAL, MODEL, MODEL_FOLDER, QUANT, SPATIAL, writeFixtureRun } from "../../support/reportFixture";

const cell = (baseline: number[], ablated: number[], chance = 0.25): CellScores => ({
  baseline: Uint8Array.from(baseline),
  ablated: Uint8Array.from(ablated),
  chance: new Float64Array(baseline.length).fill(chance),
});

/** The AIS of `scores` on the documents `drawn`, by hand. */
function aisOn(scores: CellScores, drawn: number[]): number | null {
  const mean = (v: ArrayLike<number>) => drawn.reduce((s, i) => s + v[i]!, 0) / drawn.length;
  const ais = abilityImpactScore({ baseline: mean(scores.baseline), ablated: mean(scores.ablated), chance: mean(scores.chance) });
  return ais.defined ? ais.value : null;
}

test("a paired difference: the same documents drawn for both sides, the percentile interval of AIS(A) - AIS(B)", () => {
  const a = cell([1, 1, 1, 1, 0, 1, 1, 0], [0, 0, 1, 1, 0, 1, 0, 0]);
  const b = cell([1, 1, 1, 0, 0, 1, 1, 1], [1, 1, 1, 0, 0, 0, 1, 1]);
  const result = aisDifference(a, b, true, { resamples: 200, seed: 7 });
  // On all documents: A (0.75 - 0.375) / 0.5 = 0.75, B (0.75 - 0.625) / 0.5 = 0.25.
  assert.ok(result.a.defined && Math.abs(result.a.value - 0.75) < 1e-12);
  assert.ok(result.b.defined && Math.abs(result.b.value - 0.25) < 1e-12);
  assert.ok(Math.abs(result.difference! - 0.5) < 1e-12);
  const rand = seededRandom(7);
  const differences: number[] = [];
  for (let r = 0; r < 200; r++) {
    const drawn = Array.from({ length: 8 }, () => randomInt(rand, 8));
    const x = aisOn(a, drawn);
    const y = aisOn(b, drawn);
    if (x !== null && y !== null) differences.push(x - y);
  }
  differences.sort((p, q) => p - q);
  assert.deepEqual(result.interval, { low: percentile(differences, 0.025), high: percentile(differences, 0.975), confidence: 0.95 });
  assert.equal(result.paired, true);
  assert.equal(result.significant, result.interval!.low > 0 || result.interval!.high < 0);
});

test("an unpaired difference: each side drawn from its own stream, sizes may differ", () => {
  const a = cell([1, 1, 1, 0, 1, 0], [0, 1, 0, 0, 1, 0]);
  const b = cell([1, 1, 0, 1], [1, 1, 0, 1]);
  const result = aisDifference(a, b, false, { resamples: 100, seed: 3 });
  const randA = seededRandom(3);
  const randB = seededRandom(4);
  const differences: number[] = [];
  for (let r = 0; r < 100; r++) {
    const x = aisOn(
      a,
      Array.from({ length: 6 }, () => randomInt(randA, 6)),
    );
    const y = aisOn(
      b,
      Array.from({ length: 4 }, () => randomInt(randB, 4)),
    );
    if (x !== null && y !== null) differences.push(x - y);
  }
  differences.sort((p, q) => p - q);
  assert.equal(result.paired, false);
  assert.deepEqual(result.interval, { low: percentile(differences, 0.025), high: percentile(differences, 0.975), confidence: 0.95 });
  assert.throws(() => aisDifference(a, b, true), /paired comparison needs the same documents/);
});

test("an AIS undefined on either side gives no difference and no interval", () => {
  const atChance = cell([1, 0, 0, 0], [1, 0, 0, 0]);
  const result = aisDifference(cell([1, 1, 1, 0], [0, 1, 1, 0]), atChance, true, { resamples: 50 });
  assert.equal(result.b.defined, false);
  assert.equal(result.difference, null);
  assert.equal(result.interval, null);
  assert.equal(result.significant, false);
});

test("Spearman's rank correlation with average ranks for ties; null when it is not defined", () => {
  assert.deepEqual(averageRanks([0.3, 0.1, 0.3, 0.2]), [3.5, 1, 3.5, 2]);
  assert.equal(rankCorrelation([1, 2, 3, 4], [10, 20, 30, 40]), 1);
  assert.equal(rankCorrelation([1, 2, 3, 4], [4, 3, 2, 1]), -1);
  // Ranks (1, 2, 3) and (1.5, 1.5, 3): Pearson of the ranks is 0.866...
  assert.ok(Math.abs(rankCorrelation([1, 2, 3], [5, 5, 9])! - Math.sqrt(3) / 2) < 1e-12);
  assert.equal(rankCorrelation([1, 2], [2, 1]), null);
  assert.equal(rankCorrelation([1, 1, 1], [1, 2, 3]), null);
});

test("bprof compare's model: a run against itself differs by 0 everywhere; a changed variant's difference is recomputed by hand", async () => {
  const dirA = await writeFixtureRun();
  const dirB = await writeFixtureRun();
  const runA = await loadRun(dirA);
  const runB = await loadRun(dirB);
  const same = await compareProfiles({ run: runA }, { run: runB }, { resamples: 100 });
  assert.equal(same.k, 0.01);
  assert.deepEqual(same.abilities, [CAUSAL, QUANT, SPATIAL]);
  assert.deepEqual(
    same.benchmarks.map((b) => [b.benchmark, b.paired]),
    [
      ["arc_easy", true],
      ["logiqa", true],
    ],
  );
  for (const c of same.cells) {
    if (c.difference !== null) assert.equal(c.difference, 0, `${c.ability} on ${c.benchmark}`);
    assert.equal(c.signDiffers, false);
  }

  // In B the causal top set also turns arc_easy's document 1 wrong: AIS (0.75 - 0.25) / 0.5 = 1 there,
  // against A's (0.75 - 0.5) / 0.5 = 0.5.
  const variant = runB.results.models[0]!.profile!.variants.find((v) => v.ability === CAUSAL && v.selection === "top" && v.k === 0.01)!;
  const choices = ["a", "bb", "ccc", "dddd"];
  const turned = baselineItems().map((item) => {
    if (item.benchmark !== "arc_easy" || item.index > 1) return item.index === 13 ? { ...item, prediction: 1, predictionNorm: 1 } : item;
    const wrong = (item.target + 1) % 4;
    return scoreItem(
      "arc_easy",
      item.index,
      item.target,
      choices,
      choices.map((_, i) => ({ logprob: i === wrong ? -1 : -3 - i, tokens: 1, greedy: false })),
    );
  });
  await fs.writeFile(path.join(dirB, "models", MODEL_FOLDER, variant.items_file), turned.map((i) => JSON.stringify(i)).join("\n") + "\n");
  const changed = await compareProfiles({ run: runA, model: MODEL }, { run: runB, model: MODEL }, { resamples: 100 });
  const causalArc = changed.cells.find((c) => c.ability === CAUSAL && c.benchmark === "arc_easy")!;
  assert.ok(causalArc.a.defined && causalArc.a.value === 0.5);
  assert.ok(causalArc.b.defined && causalArc.b.value === 1);
  assert.equal(causalArc.difference, -0.5);
  // logiqa: A's document 13 turned right (AIS -1), B's too: no difference, no sign change.
  const causalLogiqa = changed.cells.find((c) => c.ability === CAUSAL && c.benchmark === "logiqa")!;
  assert.equal(causalLogiqa.difference, 0);

  const markdown = renderComparison(changed, "md");
  assert.match(markdown, /\| Commonsense & Causal Reasoning \| (\*\*)?−0\.50/);
  const csv = renderComparison(changed, "csv").split("\n");
  assert.equal(csv[0], "ability,benchmark,metric,paired,ais_a,ais_b,difference,ci_low,ci_high,significant,sign_differs");
  assert.ok(csv.some((line) => line.startsWith("Commonsense & Causal Reasoning,arc_easy,acc,true,0.5,1,-0.5,-")));
  const json = JSON.parse(renderComparison(changed, "json")) as { cells: { ability: string; benchmark: string; difference: number }[] };
  assert.equal(json.cells.find((c) => c.ability === CAUSAL && c.benchmark === "arc_easy")!.difference, -0.5);

  await assert.rejects(compareProfiles({ run: runA, model: "nope" }, { run: runB }), /A: run .* has no model `nope`/);
  await assert.rejects(compareProfiles({ run: runA }, { run: runB }, { k: 0.5 }), /ran no k = 0.5/);
});

test("the comparison in every report format: the difference heatmap's cells, the HTML page and the LaTeX table carry the same numbers", async () => {
  const dirA = await writeFixtureRun();
  const dirB = await writeFixtureRun();
  const runB = await loadRun(dirB);
  // B's causal top set leaves arc_easy untouched: AIS 0 there, against A's 0.5 (see the test above).
  const variant = runB.results.models[0]!.profile!.variants.find((v) => v.ability === CAUSAL && v.selection === "top" && v.k === 0.01)!;
  await fs.writeFile(
    path.join(dirB, "models", MODEL_FOLDER, variant.items_file),
    baselineItems()
      .map((i) => JSON.stringify(i))
      .join("\n") + "\n",
  );
  const c = await compareProfiles({ run: await loadRun(dirA) }, { run: runB }, { resamples: 100 });
  const causalArc = c.cells.find((x) => x.ability === CAUSAL && x.benchmark === "arc_easy")!;
  assert.ok(causalArc.a.defined && causalArc.a.value === 0.5);
  assert.ok(causalArc.b.defined && causalArc.b.value === 0);
  assert.equal(causalArc.difference, 0.5);

  const heatmap = comparisonHeatmap(c);
  assert.deepEqual(heatmap.rows, c.abilities);
  assert.deepEqual(heatmap.columns, ["arc_easy", "logiqa"]);
  assert.equal(heatmap.cells.length, c.abilities.length * 2);
  const drawn = heatmap.cells.find((x) => heatmap.rows[x.row] === CAUSAL && heatmap.columns[x.column] === "arc_easy")!;
  assert.equal(drawn.value, 0.5);
  assert.equal(heatmap.scale.limit, scaleLimit(c.cells.map((x) => x.difference)));
  assert.equal(drawn.fill, divergingColour(0.5, heatmap.scale.limit));
  assert.match(drawn.label, /^\+0\.50\*?$/);
  // logiqa: B's causal set no longer turns document 13 right (AIS 0), A's does (AIS -1): -1 - 0.
  const causalLogiqa = c.cells.find((x) => x.ability === CAUSAL && x.benchmark === "logiqa")!;
  assert.ok(causalLogiqa.a.defined && causalLogiqa.b.defined);
  assert.equal(causalLogiqa.difference, causalLogiqa.a.value - causalLogiqa.b.value);

  const html = renderComparison(c, "html", { script: "/* bundle */" });
  assert.match(html, /<h1>Two profiles compared<\/h1>/);
  const data = JSON.parse(/<script type="application\/json" id="bprof-report-data">(.*?)<\/script>/s.exec(html)![1]!) as {
    heatmaps: { id: string; cells: unknown[] }[];
  };
  assert.equal(data.heatmaps.length, 1);
  assert.equal(data.heatmaps[0]!.cells.length, heatmap.cells.length);
  assert.ok(html.includes(`<canvas id="${data.heatmaps[0]!.id}"`));
  assert.match(html, /<th scope="row">Commonsense &amp; Causal Reasoning<\/th><td[^>]*>\+0\.500/);
  assert.throws(() => renderComparison(c, "html"), /needs the heatmap bundle/);

  const latex = renderComparison(c, "latex");
  assert.match(latex, /\\begin\{tabular\}\{lrr\}/);
  assert.match(latex, /^Commonsense \\& Causal Reasoning & \$\+0\.50(\^\{\*\})?\$ & \$-1\.00/m);
  assert.match(latex, /^Spearman's \$\\rho\$ & /m);
});
