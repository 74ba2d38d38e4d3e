// The editor counts parameters from src/core/model/families.json, a copy of the runner's family
// table (`bprof-runner --families`, written by `npm run families`). The copy must be what the built
// runner prints now: a family or tensor changed in native-runner/src/config.cpp without regenerating
// it fails here, before the two counts can drift apart (familyCounts.test.ts then checks the walk).
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import { test } from "node:test";
import { modelShape } from "../../src/core/model/parameters";
import { familiesFile, runnerFamilies } from "../../scripts/families";
import { runnerPath } from "../support/cli";

test("the committed families.json is the built runner's family table", async () => {
  const printed = await runnerFamilies(runnerPath);
  const committed = await fs.readFile(familiesFile, "utf8");
  assert.equal(
    committed,
    printed,
    "src/core/model/families.json differs from `bprof-runner --families`: run `npm run families` and commit it",
  );
});

test("every family of the table is one the editor counts, and only those", async () => {
  const table = JSON.parse(await runnerFamilies(runnerPath)) as { families: { model_type: string }[] };
  const config = { vocab_size: 64, hidden_size: 32, intermediate_size: 48, num_hidden_layers: 2, num_attention_heads: 4 };
  for (const { model_type } of table.families) assert.ok(modelShape({ ...config, model_type }), `${model_type} is counted`);
  assert.equal(modelShape({ ...config, model_type: "gpt_neox" }), undefined);
});
