// Failure signatures found in real runs of the demo model (media/demo), made to go wrong on
// purpose: two abilities whose diagnostic datasets hold the same items (the second a copy of the
// first under another name) rank the same top sets and get the same AIS on every benchmark, and a
// k far below the paper's main one moves no benchmark. Each run is the real runner's, on three of
// the demo's held-out benchmarks (40 documents each) and 200 diagnostic items per ability.
// Negative AIS from a dataset whose answers follow a surface cue needs a model that learned the
// cue (the demo model's negative cells are near-chance noise): surfaceCueSignature.test.ts trains
// one.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { loadProfile } from "../../src/core/config/load";
import { loadRun } from "../../src/core/report/load";
import { buildReport } from "../../src/core/report/model";
import type { ModelReport } from "../../src/core/report/types";
import { runProfile } from "../../src/core/run/runProfile";
import { repoRoot, runnerPath } from "../support/cli";

const DEMO = path.join(repoRoot, "media", "demo");
const COPY = "Arithmetic (a copy)";
let root: string;

before(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-signatures-"));
  // the Quantitative Reasoning items again, under another ability's name and ids
  const lines = (await fs.readFile(path.join(DEMO, "diagnostic", "quantitative.diag.jsonl"), "utf8")).split("\n").filter((l) => l.trim());
  const copy = lines.map((l) => {
    const item = JSON.parse(l) as { id: string; ability: string };
    return JSON.stringify({ ...item, id: `copy-${item.id}`, ability: COPY });
  });
  await fs.writeFile(path.join(root, "copy.diag.jsonl"), copy.join("\n") + "\n");
});

after(() => fs.rm(root, { recursive: true, force: true }));

function config(k: number, abilities: string): string {
  const benchmark = (name: string) => `  - task: ${path.join(DEMO, "benchmarks", `demo_${name}.yaml`)}\n    limit: 40\n`;
  return (
    `models:\n  - path: ${path.join(DEMO, "model")}\n    name: demo-llama\n    dtype: float32\n` +
    `benchmarks:\n${["quantitative", "semantic", "mixed"].map(benchmark).join("")}` +
    `abilities:\n${abilities}` +
    `ablation:\n  k: [${k}]\n  selections: [top]\n  method: signed\n  batch_size: 8\nseed: 1\nbootstrap:\n  resamples: 200\noutput: ${path.join(root, ".bprof")}\n`
  );
}

async function profiled(name: string, text: string): Promise<ModelReport> {
  const file = path.join(root, `${name}.bprof.yaml`);
  await fs.writeFile(file, text);
  const { profile, problems } = await loadProfile(file);
  assert.ok(profile, problems.map((p) => p.message).join("\n"));
  const outcome = await runProfile(profile, { runner: { path: runnerPath, sourcesDir: "", cacheDir: "" } });
  return (await buildReport(await loadRun(outcome.runDir))).models[0]!;
}

const QUANT_ENTRY = `  - name: Quantitative Reasoning\n    data: ${path.join(DEMO, "diagnostic", "quantitative.diag.jsonl")}\n    limit: 200\n`;

test("two identical diagnostic datasets: the same AIS for both abilities is found", { timeout: 600_000 }, async () => {
  const model = await profiled(
    "twins",
    config(0.01024, QUANT_ENTRY + `  - name: ${COPY}\n    data: ${path.join(root, "copy.diag.jsonl")}\n    limit: 200\n`),
  );
  const rows = model.profile!.sections[0]!.rows;
  // the premise: the two top sets moved the benchmarks, by the same amounts
  assert.deepEqual(
    rows[0]!.cells.map((c) => c.ais),
    rows[1]!.cells.map((c) => c.ais),
  );
  assert.ok(rows[0]!.cells.filter((c) => Math.abs(c.ais ?? 0) >= 0.05).length >= 2, JSON.stringify(rows[0]!.cells.map((c) => c.ais)));
  assert.deepEqual(
    model.findings.map((f) => [f.signature, f.abilities]),
    [["same-ais", ["Quantitative Reasoning", COPY]]],
  );
});

test("k far below the paper's main result: every AIS near zero is found, with the next k to try", { timeout: 600_000 }, async () => {
  const model = await profiled("small", config(0.00001, QUANT_ENTRY));
  const found = model.findings.map((f) => f.signature);
  assert.deepEqual(found, ["ais-near-zero"], JSON.stringify(model.profile!.sections[0]!.rows.map((r) => r.cells.map((c) => c.ais))));
  assert.match(model.findings[0]!.remedy, /k = 0\.00004/);
});

test(
  "all layers at the paper's main k: fluency collapse is found, pointing at candidates; MLP-only is fluent",
  { timeout: 600_000 },
  async () => {
    const all = await profiled(
      "all-layers",
      config(0.01024, QUANT_ENTRY).replace("  method: signed\n", "  method: signed\n  candidates: all\n"),
    );
    const collapse = all.findings.find((f) => f.signature === "fluency-collapse");
    assert.ok(collapse, JSON.stringify(all.findings));
    assert.deepEqual(collapse.setting, ["ablation", "candidates"]);
    const row = all.profile!.sections[0]!.rows[0]!;
    assert.ok(row.fluency!.perplexity_ratio > 2, `${row.fluency!.perplexity_ratio}`);
    const mlp = await profiled("mlp-only", config(0.01024, QUANT_ENTRY));
    assert.ok(mlp.profile!.sections[0]!.rows[0]!.fluency!.fluent);
    assert.equal(
      mlp.findings.find((f) => f.signature === "fluency-collapse"),
      undefined,
    );
  },
);
