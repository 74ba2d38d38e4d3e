// A second diagnostic set with the real runner on the tiny project: an abilities entry with `of`
// is ranked and ablated as an ability of its own (its own variants in results.json, marked with
// `of`), and the report's consistency compares its AIS row with its ability's, recomputed here by
// hand from the two rows of results.json.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import { test } from "node:test";
import { loadProfile } from "../../src/core/config/load";
import { loadRun } from "../../src/core/report/load";
import { buildReport } from "../../src/core/report/model";
import { runProfile } from "../../src/core/run/runProfile";
import type { Results } from "../../src/core/results/schema";
import { runnerPath } from "../support/cli";
import { CONFIG_YAML, DIAGNOSTIC, makeProfileProject, SPATIAL } from "../support/profileProject";

const SET_B = `${SPATIAL} (set B)`;

test("a second set of an ability is profiled on its own and compared with the ability's row", { timeout: 300_000 }, async (t) => {
  // Set B: the spatial items but the first, made another way (here: fewer of them).
  const items = DIAGNOSTIC[SPATIAL]!.slice(1).map((item, i) => JSON.stringify({ id: `b-${i}`, ability: SPATIAL, ...item }));
  const config = CONFIG_YAML.replace(
    "ablation:\n",
    `  - name: ${SET_B}\n    of: ${SPATIAL}\n    data: ./diag/spatial-b.diag.jsonl\nablation:\n`,
  );
  const p = await makeProfileProject({ config, extraFiles: { "diag/spatial-b.diag.jsonl": items.join("\n") + "\n" } });
  t.after(() => fs.rm(p.root, { recursive: true, force: true }));
  const { profile, problems } = await loadProfile(p.configPath);
  assert.ok(profile, problems.map((x) => x.message).join("\n"));
  const outcome = await runProfile(profile, { runner: { path: runnerPath, sourcesDir: "", cacheDir: "" } });
  const results = JSON.parse(await fs.readFile(outcome.resultsFile, "utf8")) as Results;
  const model = results.models[0]!.profile!;
  const set = model.abilities.find((a) => a.name === SET_B)!;
  assert.equal(set.of, SPATIAL);
  assert.equal(set.sequences, items.length);
  assert.ok(!model.abilities.find((a) => a.name === SPATIAL)!.of);
  const topOf = (ability: string, k: number) => model.variants.find((v) => v.ability === ability && v.selection === "top" && v.k === k)!;

  const report = await buildReport(await loadRun(outcome.runDir));
  for (const section of report.models[0]!.profile!.sections) {
    const [check] = section.consistency;
    assert.equal(check!.ability, SPATIAL);
    assert.equal(check!.set, SET_B);
    // By hand: a benchmark disagrees when one row's interval excludes the other row's AIS.
    const first = topOf(SPATIAL, section.k).benchmarks;
    const second = topOf(SET_B, section.k).benchmarks;
    const expected = first.flatMap((b, i) => {
      const x = b.acc!;
      const y = second[i]!.acc!;
      if (x.ais === null || y.ais === null) return [];
      const outside = (ci: typeof x.ci, v: number) => ci !== null && (v < ci.low || v > ci.high);
      return outside(x.ci, y.ais) || outside(y.ci, x.ais) ? [{ benchmark: b.name, ais: x.ais, setAis: y.ais }] : [];
    });
    assert.deepEqual(check!.disagreements, expected);
    assert.equal(check!.benchmarks, first.filter((b, i) => b.acc!.ais !== null && second[i]!.acc!.ais !== null).length);
  }
});
