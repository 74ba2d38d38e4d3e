// The demo's two-model form: the demo model and a second one that bprof-runner trains here from
// another seed (test size: a short run on items of the demo's training mixture), profiled in one
// config of the demo's form (its benchmarks with `expects`, a second diagnostic set by
// `sets: separate`, a pair), then `bprof compare` between the two models of that run: every cell
// of the difference heatmap is AIS(A) - AIS(B), each AIS recomputed here from the item files, its
// interval paired (both scored the same documents).
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { abilityImpactScore } from "../../src/core/analysis/ais";
import type { BenchmarkItem } from "../../src/core/analysis/generation";
import { loadProfile } from "../../src/core/config/load";
import { ALL_GENERATORS } from "../../src/core/diagnostic/generators/index";
import { renderDiagnosticItem } from "../../src/core/prompts/diagnosticText";
import { inputTokens, loadTokenizer } from "../../src/core/prompts/tokenize";
import { RunItems } from "../../src/core/report/load";
import type { Results } from "../../src/core/results/schema";
import { runProfile } from "../../src/core/run/runProfile";
import { DEMO_MAIN_K, heldOutKeys, trainingItems } from "../../scripts/lib/demoAuthoring";
import { bprof, repoRoot, runnerPath } from "../support/cli";
import { runRunnerJob } from "../support/runnerJob";

const DEMO = path.join(repoRoot, "media", "demo");
/** Sequences per ability the second model sees, and its steps: enough to leave chance on the easier benchmarks. */
const TRAIN_PER_ABILITY = 300;
const TRAIN = { steps: 1000, batch_size: 8, lr: 0.004, min_lr: 0.0004, warmup_steps: 50, weight_decay: 0.1, seed: 2 };

/** The demo's form at test size: three of its benchmarks, three abilities (one with a second set), a pair, one rule. */
const CONFIG = `models:
  - path: ./model
    name: demo-llama
  - path: ./second
    name: second-seed
benchmarks:
  - task: ./benchmarks/demo_quantitative.yaml
    limit: 60
    ability: Quantitative Reasoning
    expects: [Quantitative Reasoning]
  - task: ./benchmarks/demo_temporal.yaml
    limit: 60
    ability: Temporal Reasoning
    expects: {Temporal Reasoning: 0.7, Quantitative Reasoning: 0.3}
  - task: ./benchmarks/demo_contextual.yaml
    limit: 60
    ability: Contextual Recall
    expects: [Contextual Recall]
abilities:
  - name: Quantitative Reasoning
    data: [./diagnostic/quantitative.diag.jsonl, ./diagnostic/quantitative-b.diag.jsonl]
    sets: separate
    limit: 200
  - name: Temporal Reasoning
    data: ./diagnostic/temporal.diag.jsonl
    limit: 200
  - name: Contextual Recall
    data: ./diagnostic/contextual.diag.jsonl
    limit: 200
ablation:
  k: [${DEMO_MAIN_K}]
  selections: [top, random]
  method: signed
  pairs: [[Quantitative Reasoning, Temporal Reasoning]]
  batch_size: 8
seed: 1
bootstrap:
  resamples: 300
`;

function accuracy(items: readonly BenchmarkItem[], benchmark: string): number {
  const on = items.filter((x) => x.benchmark === benchmark);
  return on.filter((x) => "prediction" in x && x.prediction === x.target).length / on.length;
}

async function trainSecondModel(workspace: string, out: string): Promise<void> {
  const held = await heldOutKeys(workspace);
  const tokenizer = await loadTokenizer(path.join(workspace, "model"));
  const items = ALL_GENERATORS.flatMap((g) => trainingItems(g, held).slice(0, TRAIN_PER_ABILITY));
  const sequences = items.map((it) => inputTokens(tokenizer, renderDiagnosticItem(it)));
  const config = JSON.parse(await fs.readFile(path.join(workspace, "model", "config.json"), "utf8")) as object;
  const trained = `${out}.train`;
  await runRunnerJob("train", { config, sequences, train: TRAIN }, trained);
  await fs.mkdir(out, { recursive: true });
  for (const f of ["model.safetensors", "config.json"]) await fs.copyFile(path.join(trained, f), path.join(out, f));
  for (const f of ["tokenizer.json", "tokenizer_config.json"]) await fs.copyFile(path.join(workspace, "model", f), path.join(out, f));
}

test(
  "two models of the demo's form compared: bprof compare's difference heatmap, each cell AIS(A) - AIS(B) from the item files",
  { timeout: 1_500_000 },
  async (t) => {
    const root = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-two-models-"));
    t.after(() => fs.rm(root, { recursive: true, force: true }));
    const workspace = path.join(root, "demo");
    await fs.cp(DEMO, workspace, { recursive: true, filter: (src) => !src.includes(`${path.sep}.bprof`) });
    await trainSecondModel(workspace, path.join(workspace, "second"));
    const configPath = path.join(workspace, "two.bprof.yaml");
    await fs.writeFile(configPath, CONFIG);
    const { profile, problems } = await loadProfile(configPath);
    assert.ok(profile, problems.map((p) => p.message).join("\n"));
    const outcome = await runProfile(profile, { runner: { path: runnerPath, sourcesDir: "", cacheDir: "" } });
    const results = JSON.parse(await fs.readFile(outcome.resultsFile, "utf8")) as Results;
    assert.deepEqual(
      results.models.map((m) => m.name),
      ["demo-llama", "second-seed"],
    );
    // both profiles hold the demo's comparisons within one model: the second set and the pair
    for (const m of results.models) {
      assert.ok(m.profile!.abilities.some((a) => a.of === "Quantitative Reasoning"));
      assert.equal(m.profile!.pairs?.length, 1);
    }

    const out = path.join(root, "comparison.json");
    const compared = await bprof([
      "compare",
      `${outcome.runDir}:demo-llama`,
      `${outcome.runDir}:second-seed`,
      "--format",
      "json",
      "--out",
      out,
    ]);
    assert.equal(compared.exitCode, 0, compared.stderr);
    const comparison = JSON.parse(await fs.readFile(out, "utf8")) as {
      benchmarks: { name: string; paired: boolean }[];
      cells: { ability: string; benchmark: string; difference: number | null }[];
    };
    assert.deepEqual(
      comparison.benchmarks.map((x) => [x.name, x.paired]),
      [
        ["demo_quantitative", true],
        ["demo_temporal", true],
        ["demo_contextual", true],
      ],
      "both models scored the same documents: paired intervals",
    );
    const items = new RunItems(outcome.runDir);
    const aisOf = async (model: Results["models"][number], ability: string, benchmark: string): Promise<number | null> => {
      const variant = model.profile!.variants.find((v) => v.ability === ability && v.selection === "top")!;
      const chance = model.benchmarks.find((b) => b.name === benchmark)!.chance;
      const impact = abilityImpactScore({
        baseline: accuracy(await items.baseline(model.name), benchmark),
        ablated: accuracy(await items.variant(model.name, variant.items_file), benchmark),
        chance,
      });
      return impact.defined ? impact.value : null;
    };
    const [a, b] = results.models as [Results["models"][number], Results["models"][number]];
    assert.equal(comparison.cells.length, 4 * 3, "four rows (three abilities and the second set) by three benchmarks");
    let defined = 0;
    for (const cell of comparison.cells) {
      const [x, y] = [await aisOf(a, cell.ability, cell.benchmark), await aisOf(b, cell.ability, cell.benchmark)];
      const byHand = x === null || y === null ? null : x - y;
      assert.ok(
        byHand === cell.difference || (byHand !== null && cell.difference !== null && Math.abs(byHand - cell.difference) < 1e-9),
        `${cell.ability} x ${cell.benchmark}: ${byHand} by hand, ${cell.difference} compared`,
      );
      if (cell.difference !== null) defined++;
    }
    assert.ok(defined > 0, "the second model is above chance on some benchmark");
    // the HTML comparison draws the difference heatmap
    const html = await bprof([
      "compare",
      `${outcome.runDir}:demo-llama`,
      `${outcome.runDir}:second-seed`,
      "--format",
      "html",
      "--out",
      "-",
    ]);
    assert.equal(html.exitCode, 0, html.stderr);
    assert.match(html.stdout, /<canvas id="comparison"/);
  },
);
