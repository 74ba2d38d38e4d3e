// The failure signatures of a config's newest finished run, as the editor's Problems on the config:
// two abilities with the same AIS on each ability's `data`, every AIS near zero on `ablation.k`, a
// failing label on the benchmark's `ability`; none for a healthy run, and none once a newer run
// is healthy.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { findingProblems } from "../../../src/core/report/findingProblems";
import type { Finding } from "../../../src/core/report/types";
import type { CellMetric } from "../../../src/core/results/schema";
import { WorkspaceModel } from "../../../src/core/workspace/model";
import { CONFIG_YAML, makeProfileProject, QUANT, SPATIAL } from "../../support/profileProject";
import { oneModelResults, topSetsProfile, topVariant } from "../../support/profileResults";

function cell(ais: number): CellMetric {
  return {
    baseline: 0.8,
    ablated: 0.8 - ais * 0.3,
    chance: 0.5,
    ais,
    ci: { low: ais - 0.05, high: ais + 0.05, confidence: 0.95 },
    significant: false,
    undefined_resamples: 0,
    flips: { right_to_wrong: 0, wrong_to_right: 0 },
  };
}

/** A finished run of `configFile` whose two abilities have these AIS on tiny_yes and a second benchmark. */
async function writeRun(root: string, configFile: string, id: string, rows: Record<string, [number, number]>): Promise<void> {
  const dir = path.join(root, ".bprof", "runs", id);
  await fs.mkdir(dir, { recursive: true });
  await fs.writeFile(
    path.join(dir, "run.json"),
    JSON.stringify({ run_id: id, created: "2026-11-27T00:00:00.000Z", config_file: configFile }),
  );
  const benchmarks = ["tiny_yes", "tiny_other"];
  const results = oneModelResults({
    model: "tiny-llama",
    path: path.join(root, "model"),
    benchmarks,
    baseline: { items: 8, acc: 0.8, acc_norm: 0.8, chance: 0.5 },
    run: { run_id: id, config_file: configFile },
    profile: {
      ...topSetsProfile(),
      seed: 3,
      bootstrap: { resamples: 500, confidence: 0.95, seed: 3 },
      abilities: Object.keys(rows).map((name, a) => ({ name, id: `a${a}`, sequences: 4 })),
      variants: Object.entries(rows).map(([ability, ais], a) =>
        topVariant(
          ability,
          a,
          benchmarks.map((name, b) => ({ name, acc: cell(ais[b]!), acc_norm: cell(ais[b]!) })),
        ),
      ),
    },
  });
  await fs.writeFile(path.join(dir, "results.json"), JSON.stringify(results));
}

/** Each problem as code@line on the config, with the line's text. */
function linesOf(problems: readonly { code: string; line: number }[], text: string): string[] {
  const lines = text.split("\n");
  return problems.map((p) => `${p.code}@${lines[p.line - 1]!.trim()}`);
}

test("a run whose two abilities have the same AIS: a warning on each ability's data in the config, gone after a healthy run", async (t) => {
  const p = await makeProfileProject();
  t.after(() => fs.rm(p.root, { recursive: true, force: true }));
  await writeRun(p.root, p.configPath, "20261127-000001-aaaa", { [QUANT]: [0.3, 0.2], [SPATIAL]: [0.31, 0.2] });
  const model = new WorkspaceModel();
  model.filesFound([p.configPath]);
  const problems = (await model.update()).problems.get(p.configPath) ?? [];
  const found = problems.filter((x) => x.code === "config.failure-signature");
  assert.deepEqual(linesOf(found, CONFIG_YAML), [
    "config.failure-signature@data: ./diag/quantitative.diag.jsonl",
    "config.failure-signature@data: [./diag/spatial.diag.jsonl]",
  ]);
  assert.equal(found[0]!.severity, "warning");
  assert.match(found[0]!.message, /^Every ability has the same AIS: .* On each of the 2 benchmarks/);
  assert.match(found[0]!.message, /run 20261127-000001-aaaa, paper rule\)\. Remedy: make each dataset's items/);

  // a newer run, healthy: the config is checked again (as a finished run's results.json makes it) and the warnings go
  await writeRun(p.root, p.configPath, "20261127-000002-bbbb", { [QUANT]: [0.3, 0.05], [SPATIAL]: [0.02, 0.25] });
  model.filesChanged([{ file: p.configPath, kind: "changed" }]);
  const after = (await model.update()).problems.get(p.configPath) ?? [];
  assert.deepEqual(
    after.filter((x) => x.code === "config.failure-signature"),
    [],
  );
});

test("findings point at ablation.k (every AIS near zero), a benchmark's ability label and ablation.candidates (fluency lost with all)", () => {
  const text = [
    "models: [{ path: ./model }]",
    "benchmarks:",
    "  - task: ./a.yaml",
    "  - task: ./b.yaml",
    "    ability: Spatial Reasoning",
    "abilities:",
    "  - name: Spatial Reasoning",
    "    data: ./s.diag.jsonl",
    "ablation:",
    "  k: [0.00064]",
    "  candidates: all",
    "",
  ].join("\n");
  const base = { method: "paper" as const, k: 0.00064, figures: "f", threshold: "t", remedy: "r" };
  const findings: Finding[] = [
    { ...base, signature: "ais-near-zero", abilities: [], title: "Every AIS is near zero." },
    { ...base, signature: "label-fails", abilities: ["Spatial Reasoning"], benchmark: "b", title: "The label of b does not hold." },
    { ...base, signature: "unstable-ranking", abilities: ["Spatial Reasoning"], title: "Unstable." },
    { ...base, signature: "fluency-collapse", abilities: [], setting: ["ablation", "candidates"], title: "Not fluent." },
  ];
  const problems = findingProblems("/p/x.bprof.yaml", text, "r1", findings, {
    abilities: ["Spatial Reasoning"],
    benchmarks: [
      { name: "a", entry: 0 },
      { name: "b", entry: 1 },
    ],
  });
  // the unstable ranking is diag.unstable-ranking's, on the dataset
  assert.deepEqual(linesOf(problems, text), [
    "config.failure-signature@k: [0.00064]",
    "config.failure-signature@ability: Spatial Reasoning",
    "config.failure-signature@candidates: all",
  ]);
  assert.equal(problems[1]!.data?.ability, "Spatial Reasoning");
  assert.equal(problems[0]!.message, "Every AIS is near zero. F (threshold: t; run r1, paper rule). Remedy: r.");
});
