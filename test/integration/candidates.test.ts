// `ablation.candidates: all` with the real runner on the tiny project (a random-weight Llama): the
// attention projections' weights (q, k, v, o) are candidates beside the MLP's, so the runner's
// candidate count is theirs and the MLP's together, results.json says which set was ranked, and
// the all-layer top sets are not the MLP-only ones (the scores of some variant differ). The same
// config without the key ranks the MLP alone, as before.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { loadProfile } from "../../src/core/config/load";
import { candidateCount, readParameterCount } from "../../src/core/model/parameters";
import { loadRun } from "../../src/core/report/load";
import { renderMarkdown } from "../../src/core/report/markdown";
import { buildReport } from "../../src/core/report/model";
import { resultsView } from "../../src/core/report/view";
import { runProfile } from "../../src/core/run/runProfile";
import { profilesOf, type Results } from "../../src/core/results/schema";
import { flatCells } from "../../src/core/report/cells";
import { runnerPath } from "../support/cli";
import { CONFIG_YAML, makeProfileProject } from "../support/profileProject";

async function profiled(config: string) {
  const p = await makeProfileProject({ config });
  const { profile, problems } = await loadProfile(p.configPath);
  assert.ok(profile, problems.map((x) => x.message).join("\n"));
  const outcome = await runProfile(profile, { runner: { path: runnerPath, sourcesDir: "", cacheDir: "" } });
  const results = JSON.parse(await fs.readFile(outcome.resultsFile, "utf8")) as Results;
  const modelConfig = JSON.parse(await fs.readFile(path.join(p.root, "model", "config.json"), "utf8")) as Record<string, number>;
  return { p, results, modelConfig, runDir: outcome.runDir };
}

test("candidates: all ranks the attention projections' weights beside the MLP's", { timeout: 300_000 }, async (t) => {
  const all = await profiled(CONFIG_YAML.replace("  batch_size: 2\n", "  batch_size: 2\n  candidates: all\n"));
  const mlp = await profiled(CONFIG_YAML);
  t.after(() => Promise.all([all, mlp].map((x) => fs.rm(x.p.root, { recursive: true, force: true }))));
  const { hidden_size: h, num_attention_heads: heads, num_key_value_heads: kv, num_hidden_layers: layers } = all.modelConfig;
  const headDim = h! / heads!;
  const attention = layers! * (2 * h! * h! + 2 * h! * kv! * headDim);
  const mlpProfile = mlp.results.models[0]!.profile!;
  const allProfile = all.results.models[0]!.profile!;
  assert.equal(mlpProfile.candidates, mlp.p.mlpParameters);
  assert.equal(mlpProfile.candidate_set, undefined);
  assert.equal(allProfile.candidates, all.p.mlpParameters + attention);
  assert.equal(allProfile.candidate_set, "all");
  // the config check of k counts the same candidates from config.json alone
  const counted = (await readParameterCount(path.join(all.p.root, "model")))!;
  assert.equal(candidateCount(counted, 0, 0, "all"), allProfile.candidates);
  assert.equal(candidateCount(counted), mlpProfile.candidates);
  // the job asks for it only when the config does
  const jobOf = async (runDir: string) =>
    JSON.parse(await fs.readFile(path.join(runDir, "models", "tiny-llama", "job.json"), "utf8")) as { ablation: { candidates?: string } };
  assert.equal((await jobOf(all.runDir)).ablation.candidates, "all");
  assert.equal((await jobOf(mlp.runDir)).ablation.candidates, undefined);
  // same n per k, other weights: some top variant scores differently
  const scores = (r: Results) =>
    r.models[0]!.profile!.variants.filter((v) => v.selection === "top").map((v) => [v.n, v.benchmarks[0]!.acc!.ablated]);
  assert.deepEqual(
    scores(all.results).map(([n]) => n),
    scores(mlp.results).map(([n]) => n),
  );
  const itemsOf = async (runDir: string, file: string) => fs.readFile(path.join(runDir, "models", "tiny-llama", file), "utf8");
  const top = (r: Results) => r.models[0]!.profile!.variants.filter((v) => v.selection === "top");
  const differ = await Promise.all(
    top(all.results).map(
      async (v, i) => (await itemsOf(all.runDir, v.items_file)) !== (await itemsOf(mlp.runDir, top(mlp.results)[i]!.items_file)),
    ),
  );
  assert.ok(differ.some(Boolean), "the all-layer top sets change some variant's log-likelihoods");
  // the reports say which weights were candidates
  const report = await buildReport(await loadRun(all.runDir));
  assert.match(renderMarkdown(report), /attention and MLP weights \(`candidates: all`\) can be ablated/);
  assert.match(renderMarkdown(await buildReport(await loadRun(mlp.runDir))), /\d MLP weights can be ablated/);
  assert.equal((await resultsView(await loadRun(all.runDir))).profile?.candidate_set, "all");
  assert.equal((await resultsView(await loadRun(mlp.runDir))).profile?.candidate_set, undefined);
});

test(
  "candidates: [mlp, all] ranks both sets from one gradient pass, each as its own run would, by every rule",
  { timeout: 300_000 },
  async (t) => {
    const withKey = (key: string) => CONFIG_YAML.replace("  batch_size: 2\n", `  batch_size: 2\n${key}`);
    const both = await profiled(withKey("  candidates: [mlp, all]\n  method: [signed, paper]\n"));
    const mlp = await profiled(withKey("  method: [signed, paper]\n"));
    const all = await profiled(withKey("  candidates: all\n  method: [signed, paper]\n"));
    t.after(() => Promise.all([both, mlp, all].map((x) => fs.rm(x.p.root, { recursive: true, force: true }))));
    const profiles = profilesOf(both.results.models[0]!);
    assert.deepEqual(
      profiles.map((p) => `${p.method} ${p.candidate_set ?? "mlp"}`),
      ["signed mlp", "paper mlp", "signed all", "paper all"],
    );
    const jobOf = async (runDir: string) =>
      JSON.parse(await fs.readFile(path.join(runDir, "models", "tiny-llama", "job.json"), "utf8")) as {
        ablation: { candidates?: unknown };
      };
    assert.deepEqual((await jobOf(both.runDir)).ablation.candidates, ["mlp", "all"]);
    // each set's candidates counted as its own run counts them
    const single = [...profilesOf(mlp.results.models[0]!), ...profilesOf(all.results.models[0]!)];
    assert.deepEqual(
      profiles.map((p) => p.candidates),
      single.map((p) => p.candidates),
    );
    // the same scores, variant by variant (the random control of each set included): one pass gives
    // each set the rankings its own pass gives
    const itemsOf = async (runDir: string, file: string) => fs.readFile(path.join(runDir, "models", "tiny-llama", file), "utf8");
    for (const [r, p] of profiles.entries()) {
      const alone = single[r]!;
      assert.equal(p.variants.length, alone.variants.length);
      for (const [i, v] of p.variants.entries()) {
        const w = alone.variants[i]!;
        assert.equal(`${v.ability} ${v.selection} ${v.k} ${v.n}`, `${w.ability} ${w.selection} ${w.k} ${w.n}`);
        assert.equal(await itemsOf(both.runDir, v.items_file), await itemsOf(r < 2 ? mlp.runDir : all.runDir, w.items_file), v.items_file);
      }
    }
    // the reports and the results view show both sets
    const run = await loadRun(both.runDir);
    const markdown = renderMarkdown(await buildReport(run));
    assert.match(markdown, /paper, all layers/);
    assert.match(markdown, /over the attention and MLP weights/);
    const view = await resultsView(run, { method: "paper", candidates: "all" });
    assert.deepEqual(view.choices.candidates, ["mlp", "all"]);
    assert.deepEqual(view.choices.methods, ["signed", "paper"]);
    assert.equal(view.profile?.method, "paper");
    assert.equal(view.profile?.candidate_set, "all");
    assert.equal((await resultsView(run, { method: "signed" })).profile?.candidate_set, undefined);
    // the all-layer set ranked by one rule only: its profile is that rule's of the full list
    const one = await profiled(withKey("  candidates: [mlp, {set: all, method: paper}]\n  method: [signed, paper]\n"));
    t.after(() => fs.rm(one.p.root, { recursive: true, force: true }));
    const oneProfiles = profilesOf(one.results.models[0]!);
    assert.deepEqual(
      oneProfiles.map((p) => `${p.method} ${p.candidate_set ?? "mlp"}`),
      ["signed mlp", "paper mlp", "paper all"],
    );
    assert.deepEqual((await jobOf(one.runDir)).ablation.candidates, ["mlp", { set: "all", method: ["paper"] }]);
    for (const [i, v] of oneProfiles[2]!.variants.entries())
      assert.equal(await itemsOf(one.runDir, v.items_file), await itemsOf(both.runDir, profiles[3]!.variants[i]!.items_file), v.items_file);
    const cells = flatCells(run.results);
    assert.deepEqual(
      cells
        .filter((c) => c.ability === null && c.benchmark === cells[0]!.benchmark && c.metric === "acc" && c.k === cells[0]!.k)
        .map((c) => c.candidates ?? "mlp"),
      ["mlp", "all"],
    );
  },
);

test("candidates: all with stability: true is refused at the key", async (t) => {
  const p = await makeProfileProject({
    config: CONFIG_YAML.replace("  batch_size: 2\n", "  batch_size: 2\n  candidates: all\n  stability: true\n"),
  });
  t.after(() => fs.rm(p.root, { recursive: true, force: true }));
  const { profile, problems } = await loadProfile(p.configPath);
  assert.equal(profile, undefined);
  const problem = problems.find((x) => x.field === "ablation.candidates");
  assert.ok(problem, problems.map((x) => x.message).join("\n"));
  assert.equal(problem.code, "config.invalid-value");
});
