// ablation.pairs in a config: `all` is every two abilities once; a pair that cannot run is a
// problem where it is written (a misspelt name with its fix, one ability twice, no top selection,
// a sharded run), and then no pair reaches the job.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import { test } from "node:test";
import { loadProfile } from "../../../src/core/config/load";
import { rankingRuleCount } from "../../../src/core/config/abilities";
import { pairsCostLine } from "../../../src/core/config/pairs";
import { fixesFor } from "../../../src/core/language/fixes";
import { CONFIG_YAML, makeProfileProject, QUANT, SPATIAL } from "../../support/profileProject";

test("ablation.pairs: all, the pairs written (each once), and what cannot run", async (t) => {
  const project = await makeProfileProject();
  t.after(() => fs.rm(project.root, { recursive: true, force: true }));
  const withPairs = (pairs: string, selections = "[top, random]") =>
    CONFIG_YAML.replace("  selections: [top, random]\n", `  selections: ${selections}\n  pairs: ${pairs}\n`);
  const load = (text: string) => loadProfile(project.configPath, { text });
  const errors = (r: Awaited<ReturnType<typeof load>>) => r.problems.filter((p) => p.severity === "error");

  const all = await load(withPairs("all"));
  assert.deepEqual(errors(all), []);
  assert.deepEqual(all.profile!.ablation!.pairs, [[QUANT, SPATIAL]]);
  const twice = await load(withPairs(`[[${QUANT}, ${SPATIAL}], [${SPATIAL}, ${QUANT}]]`));
  assert.deepEqual(twice.profile!.ablation!.pairs, [[QUANT, SPATIAL]], "an unordered pair once");

  const misspelt = withPairs(`[[${QUANT}, Spatial Reasonin]]`);
  const [unknown] = errors(await load(misspelt));
  assert.equal(unknown!.code, "config.unknown-pair-ability");
  assert.equal(unknown!.field, "ablation.pairs[0][1]");
  assert.equal(unknown!.line, misspelt.split("\n").findIndex((l) => l.includes("pairs:")) + 1);
  assert.equal(fixesFor(unknown!, misspelt)[0]!.edits[0]!.newText, SPATIAL);

  const same = errors(await load(withPairs(`[[${QUANT}, ${QUANT}]]`)));
  assert.deepEqual(
    same.map((p) => [p.code, p.message]),
    [["config.bad-pairs", `a pair names \`${QUANT}\` twice: name two abilities`]],
  );
  const noTop = errors(await load(withPairs("all", "[bottom]")));
  assert.ok(
    noTop.some((p) => p.code === "config.bad-pairs" && /needs `top`/.test(p.message)),
    JSON.stringify(noTop),
  );
  const sharded = errors(await load(withPairs("all").replace("seed: 3\n", "seed: 3\nshards: 2\n")));
  assert.ok(
    sharded.some((p) => p.code === "config.bad-pairs" && /without shards/.test(p.message)),
    JSON.stringify(sharded),
  );
});

test("what pairs cost: a variant per pair, rule (of each candidate set) and k", () => {
  assert.equal(rankingRuleCount({ methods: ["paper"] }), 1);
  assert.equal(rankingRuleCount({ methods: ["signed", "paper"], candidates: ["mlp", "all"] }), 4);
  // the demo's: both rules over the MLP, the paper's alone over every layer
  assert.equal(rankingRuleCount({ methods: ["signed", "paper"], candidates: ["mlp", "all"], candidateMethods: { all: ["paper"] } }), 3);
  assert.equal(
    pairsCostLine([["A", "B"]], 2, 10, 3),
    "ablation.pairs: 1 pair x 2 k x 3 rules = 6 more variants per model, each scoring the 10 benchmark items once (as a top-set variant does)",
  );
  assert.match(pairsCostLine([["A", "B"]], 1, 10), /^ablation\.pairs: 1 pair x 1 k = 1 more variant per model/);
});
