// Two abilities ablated together with the real runner on the tiny project (ablation.pairs): the
// runner zeroes the union of the two top sets, and results.json holds per benchmark the pair's
// AIS and the interference AIS(A+B) - AIS(A) - AIS(B), recomputed here by hand from the item files
// (its interval too: the same seeded draws of documents, the four score vectors resampled alike).
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import { test } from "node:test";
import { abilityImpactScore, scoreVector, type ScoreVector } from "../../src/core/analysis/ais";
import { percentile } from "../../src/core/analysis/bootstrap";
import { loadProfile } from "../../src/core/config/load";
import { renderHtml } from "../../src/core/report/html";
import { renderReport } from "../../src/core/report/index";
import { loadRun, RunItems } from "../../src/core/report/load";
import { renderMarkdown } from "../../src/core/report/markdown";
import { renderLatex } from "../../src/core/report/latex";
import { resultsView } from "../../src/core/report/view";
import { formatAisTables } from "../../src/cli/aisTable";
import { buildReport } from "../../src/core/report/model";
import { randomInt, seededRandom } from "../../src/core/base/random";
import { runPlan, runProfile } from "../../src/core/run/runProfile";
import type { Results } from "../../src/core/results/schema";
import { bprof, runnerPath } from "../support/cli";
import { CONFIG_YAML, makeProfileProject, QUANT, SPATIAL } from "../support/profileProject";

test("a pair of abilities: the union of their top sets ablated, its AIS and interference by hand", { timeout: 300_000 }, async (t) => {
  const config = CONFIG_YAML.replace("  selections: [top, random]\n", `  selections: [top, random]\n  pairs: [[${QUANT}, ${SPATIAL}]]\n`);
  const p = await makeProfileProject({ config });
  t.after(() => fs.rm(p.root, { recursive: true, force: true }));
  const { profile, problems } = await loadProfile(p.configPath);
  assert.ok(profile, problems.map((x) => x.message).join("\n"));
  assert.deepEqual(profile.ablation!.pairs, [[QUANT, SPATIAL]]);
  const outcome = await runProfile(profile, { runner: { path: runnerPath, sourcesDir: "", cacheDir: "" } });
  const results = JSON.parse(await fs.readFile(outcome.resultsFile, "utf8")) as Results;
  const model = results.models[0]!;
  const pairs = model.profile!.pairs!;
  assert.equal(pairs.length, 2, "one per k");
  // the progress estimate counts the pairs' variants as the runner scores them
  assert.equal(runPlan(profile).models[0]!.variants, model.profile!.variants.length + pairs.length);
  assert.equal(runPlan(profile).models[0]!.pairVariants, 2);
  const items = new RunItems(outcome.runDir);
  const baseline = (await items.baseline(model.name)).filter((i) => i.benchmark === "tiny_yes");
  const { resamples, confidence, seed } = model.profile!.bootstrap;
  // The report shows them per k, under the section's metric.
  const report = await buildReport(await loadRun(outcome.runDir));
  for (const section of report.models[0]!.profile!.sections) {
    const pair = pairs.find((x) => x.k === section.k)!;
    const acc = pair.benchmarks[0]!.acc!;
    if (acc.reason !== undefined) assert.ok(section.reasons.includes(acc.reason), JSON.stringify(section.reasons));
    assert.deepEqual(section.pairs, [
      {
        abilities: [QUANT, SPATIAL],
        n: pair.n,
        cells: [
          {
            benchmark: "tiny_yes",
            ais: acc.ais,
            ci: acc.ci,
            interference: acc.interference,
            interferenceCi: acc.interference_ci,
            significant: acc.significant,
            // a reason is a note of the section's, by number
            ...(acc.reason !== undefined ? { reason: section.reasons.indexOf(acc.reason) + 1 } : {}),
            p: acc.p,
            q: acc.q,
          },
        ],
      },
    ]);
  }
  // the results view's Pairs tab: the interference heatmap, one row per pair, the run's values
  for (const pair of pairs) {
    const view = await resultsView(await loadRun(outcome.runDir), { k: pair.k });
    const heatmap = view.profile!.pairsHeatmap!;
    assert.deepEqual(heatmap.rows, [`${QUANT} + ${SPATIAL}`]);
    assert.deepEqual(
      heatmap.cells.map((c) => c.value),
      [pair.benchmarks[0]!.acc!.interference],
    );
  }
  assert.match(renderMarkdown(report), /\*\*Two abilities at once\*\*/);
  assert.match(renderLatex(report), /\\label\{tab:pairs-/);
  assert.match(formatAisTables(report.models[0]!), new RegExp(`${QUANT} \\+ ${SPATIAL} \\(n = \\d+\\): \\S+ -?\\d\\.\\d{3}`));
  const json = JSON.parse((await renderReport(await loadRun(outcome.runDir), { format: "json", metric: "acc" })).text) as {
    pairs: { k: number; benchmark: string; metric: string; interference: number | null }[];
  };
  assert.deepEqual(
    json.pairs.map((x) => [x.k, x.benchmark, x.metric, x.interference]),
    pairs.map((x) => [x.k, "tiny_yes", "acc", x.benchmarks[0]!.acc!.interference]),
  );
  assert.match(renderHtml(report, { script: "" }), new RegExp(`<th scope="row">${QUANT} \\+ ${SPATIAL}</th>`));
  for (const pair of pairs) {
    assert.deepEqual(pair.abilities, [QUANT, SPATIAL]);
    // The union's size: n + n - |A n B|, the two top sets' intersection the run reports as overlap.
    const overlap = model.profile!.overlap.find((o) => o.k === pair.k)!;
    assert.equal(pair.n, 2 * overlap.n - overlap.intersections[0]![1]!);
    const top = (ability: string) => model.profile!.variants.find((v) => v.ability === ability && v.selection === "top" && v.k === pair.k)!;
    const vector = async (file: string): Promise<ScoreVector> =>
      scoreVector(
        (await items.variant(model.name, file)).filter((i) => i.benchmark === "tiny_yes"),
        "acc",
      );
    const base = scoreVector(baseline, "acc");
    const [a, b, both] = [await vector(top(QUANT).items_file), await vector(top(SPATIAL).items_file), await vector(pair.items_file)];
    const chance = 0.5; // two choices a document
    const aisOn = (ablated: ScoreVector, drawn: number[]) => {
      const mean = (v: ScoreVector) => drawn.reduce((s, i) => s + v[i]!, 0) / drawn.length;
      const x = abilityImpactScore({ baseline: mean(base), ablated: mean(ablated), chance });
      return x.defined ? x.value : null;
    };
    const all = base.length;
    const everyDocument = Array.from({ length: all }, (_, i) => i);
    const cell = pair.benchmarks.find((x) => x.name === "tiny_yes")!.acc!;
    assert.equal(cell.ais, aisOn(both, everyDocument));
    const [x, y, z] = [aisOn(both, everyDocument), aisOn(a, everyDocument), aisOn(b, everyDocument)];
    t.diagnostic(
      `k = ${pair.k}: n = ${pair.n}, AIS ${x} ${y} ${z}, interference ${cell.interference} ${JSON.stringify(cell.interference_ci)}`,
    );
    if (x === null || y === null || z === null) {
      assert.equal(cell.interference, null);
      continue;
    }
    // saturated (the pair's AIS or its interval reaching 1, or either ability's top cell at
    // chance): no interference, no star
    const topCell = (ability: string) => top(ability).benchmarks.find((x) => x.name === "tiny_yes")!.acc!;
    if (x >= 1 || cell.ci!.high >= 1 || topCell(QUANT).saturated || topCell(SPATIAL).saturated) {
      assert.deepEqual([cell.interference, cell.interference_ci, cell.p, cell.significant], [null, null, null, false]);
      assert.match(cell.reason!, /^saturated: not defined/);
      continue;
    }
    assert.ok(Math.abs(cell.interference! - (x - y - z)) < 1e-12);
    const rand = seededRandom(seed);
    const values: number[] = [];
    for (let r = 0; r < resamples; r++) {
      const drawn = Array.from({ length: all }, () => randomInt(rand, all));
      const [p2, a2, b2] = [aisOn(both, drawn), aisOn(a, drawn), aisOn(b, drawn)];
      if (p2 !== null && a2 !== null && b2 !== null) values.push(p2 - a2 - b2);
    }
    values.sort((m, n) => m - n);
    const tail = (1 - confidence) / 2;
    assert.ok(Math.abs(cell.interference_ci!.low - percentile(values, tail)) < 1e-12);
    assert.ok(Math.abs(cell.interference_ci!.high - percentile(values, 1 - tail)) < 1e-12);
    // its p: two-sided, from the share of resampled interferences on either side of 0 (+1 each);
    // alone in its table (one pair, one benchmark), its q is its p
    const sideCount = Math.min(values.filter((v) => v <= 0).length, values.filter((v) => v >= 0).length);
    assert.equal(cell.p, Math.min(1, (2 * (1 + sideCount)) / (values.length + 1)));
    assert.equal(cell.q, cell.p);
    assert.equal(cell.significant, cell.q! < model.profile!.stats!.threshold);
  }
});

test("bprof validate states what pairs cost, and names a misspelt ability of a pair where it is written", async (t) => {
  const good = CONFIG_YAML.replace("  selections: [top, random]\n", `  selections: [top, random]\n  pairs: all\n`);
  const p = await makeProfileProject({ config: good });
  t.after(() => fs.rm(p.root, { recursive: true, force: true }));
  const ok = await bprof(["validate", p.configPath]);
  assert.equal(ok.exitCode, 0, ok.stderr);
  // all: the one pair of the two abilities, at the config's two k; the tiny benchmark has 8 documents
  assert.match(ok.stdout, /ablation\.pairs: 1 pair x 2 k = 2 more variants per model, each scoring the 8 benchmark items once/);
  const bad = CONFIG_YAML.replace(
    "  selections: [top, random]\n",
    `  selections: [top, random]\n  pairs: [[${QUANT}, Spatial Reasonin]]\n`,
  );
  await fs.writeFile(p.configPath, bad);
  const refused = await bprof(["validate", p.configPath]);
  assert.equal(refused.exitCode, 2);
  const line = bad.split("\n").findIndex((l) => l.includes("pairs:")) + 1;
  assert.match(
    refused.stderr,
    new RegExp(`:${line}:\\d+: error: \`Spatial Reasonin\` is not one of this config's abilities: did you mean \`${SPATIAL}\`\\?`),
  );
});

test(
  "pairs under each importance rule: the union of the two top sets of that rule, in that rule's profile",
  { timeout: 300_000 },
  async (t) => {
    const config = CONFIG_YAML.replace(
      "  selections: [top, random]\n",
      `  selections: [top, random]\n  method: [signed, paper]\n  pairs: [[${QUANT}, ${SPATIAL}]]\n`,
    );
    const p = await makeProfileProject({ config });
    t.after(() => fs.rm(p.root, { recursive: true, force: true }));
    const { profile, problems } = await loadProfile(p.configPath);
    assert.ok(profile, problems.map((x) => x.message).join("\n"));
    const outcome = await runProfile(profile, { runner: { path: runnerPath, sourcesDir: "", cacheDir: "" } });
    const results = JSON.parse(await fs.readFile(outcome.resultsFile, "utf8")) as Results;
    const model = results.models[0]!;
    const [signed, paper] = [model.profile!, model.other_methods![0]!];
    assert.deepEqual([signed.method, paper.method], ["signed", "paper"]);
    // the plan counts a pair per rule and k, as the runner scores them
    assert.equal(runPlan(profile).models[0]!.pairVariants, 2 * 2);
    const items = new RunItems(outcome.runDir);
    for (const rule of [signed, paper]) {
      assert.equal(rule.pairs?.length, 2, `${rule.method}: one pair per k`);
      for (const pair of rule.pairs!) {
        // each rule's union: n + n - |A n B| of that rule's top sets (its overlap)
        const overlap = rule.overlap.find((o) => o.k === pair.k)!;
        assert.equal(pair.n, 2 * overlap.n - overlap.intersections[0]![1]!, `${rule.method} at k = ${pair.k}`);
        // its AIS from its own item file, against that rule's top sets
        const top = (ability: string) => rule.variants.find((v) => v.ability === ability && v.selection === "top" && v.k === pair.k)!;
        const acc = async (file: string) => {
          const on = (await items.variant(model.name, file)).filter((i) => i.benchmark === "tiny_yes");
          return on.filter((i) => "prediction" in i && i.prediction === i.target).length / on.length;
        };
        const base = (await items.baseline(model.name)).filter((i) => i.benchmark === "tiny_yes");
        const baseline = base.filter((i) => "prediction" in i && i.prediction === i.target).length / base.length;
        const ais = async (file: string) => {
          const x = abilityImpactScore({ baseline, ablated: await acc(file), chance: 0.5 });
          return x.defined ? x.value : null;
        };
        const [both, a, b] = [await ais(pair.items_file), await ais(top(QUANT).items_file), await ais(top(SPATIAL).items_file)];
        const cell = pair.benchmarks[0]!.acc!;
        assert.equal(cell.ais, both);
        const saturated =
          (both !== null && (both >= 1 || cell.ci!.high >= 1)) ||
          [QUANT, SPATIAL].some((ability) => top(ability).benchmarks[0]!.acc!.saturated);
        if (both !== null && a !== null && b !== null && !saturated) assert.ok(Math.abs(cell.interference! - (both - a - b)) < 1e-12);
        else assert.equal(cell.interference, null, `${rule.method} at k = ${pair.k}: ${cell.reason}`);
      }
    }
    assert.notEqual(signed.pairs![0]!.items_file, paper.pairs![0]!.items_file, "each rule's pair has its own file");
  },
);
