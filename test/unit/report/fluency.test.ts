// The fluency measure from the runner's scores to every face: fluencyOf reads only the fluency
// text's items of a scores file; a variant past the threshold has its heatmap cells greyed with
// the reason first in their tooltips (the report's figure and the results view's), and the row
// under the heatmap, the HTML and Markdown reports and the run's summary give each row's
// perplexity against the model's.
import assert from "node:assert/strict";
import { test } from "node:test";
import { fluencyLines } from "../../../src/cli/aisTable";
import { fluencyOf, variantFluency } from "../../../src/core/results/fluency";
import { FLUENCY_ID_PREFIX } from "../../../src/core/prompts/fluencyText";
import { NOT_FLUENT_FILL, runFluencyLines } from "../../../src/core/report/fluency";
import { renderHtml } from "../../../src/core/report/html";
import { renderJson } from "../../../src/core/report/json";
import { RunItems } from "../../../src/core/report/load";
import { renderMarkdown } from "../../../src/core/report/markdown";
import { buildReport } from "../../../src/core/report/model";
import { resultsView } from "../../../src/core/report/view";
import type { RunnerScores } from "../../../src/core/results/items";
import type { ModelFluency, Results } from "../../../src/core/results/schema";
import { aisCell, oneModelResults, topSetsProfile, topVariant } from "../../support/profileResults";

const MODEL_FLUENCY: ModelFluency = {
  text: "built-in",
  tokens: 300,
  loglik_per_token: -2.5,
  perplexity: Math.exp(2.5),
  max_perplexity_ratio: 2,
};

test("fluencyOf: the mean per-token log-likelihood over the fluency items alone, and its perplexity", () => {
  const scores: RunnerScores = new Map([
    [`${FLUENCY_ID_PREFIX}0`, [{ logprob: -30, tokens: 10, greedy: false }]],
    [`${FLUENCY_ID_PREFIX}1`, [{ logprob: -10, tokens: 10, greedy: false }]],
    // a benchmark's item is not counted
    ["arc_easy/0", [{ logprob: -100, tokens: 1, greedy: false }]],
  ]);
  const f = fluencyOf(scores)!;
  assert.equal(f.tokens, 20);
  assert.equal(f.loglik_per_token, -2);
  assert.equal(f.perplexity, Math.exp(2));
  assert.equal(fluencyOf(new Map([["arc_easy/0", [{ logprob: -1, tokens: 1, greedy: false }]]])), undefined);
  const v = variantFluency({ ...MODEL_FLUENCY, perplexity: Math.exp(1.5) }, scores)!;
  assert.ok(Math.abs(v.perplexity_ratio - Math.exp(0.5)) < 1e-12);
  assert.equal(v.fluent, true, "e^0.5 = 1.65 is within 2");
  assert.equal(variantFluency({ ...MODEL_FLUENCY, perplexity: Math.exp(1) }, scores)!.fluent, false, "e^1 = 2.72 is past 2");
});

const cell = (ais: number) => aisCell(ais, { significant: true, flips: { right_to_wrong: 1, wrong_to_right: 0 } });

/** Two abilities, the first's variant lost its fluency (perplexity x3), the second's kept it (x1.1). */
function results(): Results {
  const fluency = (ratio: number) => ({
    loglik_per_token: MODEL_FLUENCY.loglik_per_token - Math.log(ratio),
    perplexity: MODEL_FLUENCY.perplexity * ratio,
    perplexity_ratio: ratio,
    fluent: ratio <= 2,
  });
  const variant = (ability: string, a: number, ratio: number) => ({
    ...topVariant(
      ability,
      a,
      ["b1", "b2"].map((name, b) => ({ name, acc: cell(0.1 * (a + b + 1)), acc_norm: cell(0.1) })),
    ),
    fluency: fluency(ratio),
  });
  return oneModelResults({
    model: "m",
    benchmarks: ["b1", "b2"],
    baseline: { items: 100, acc: 0.8, acc_norm: 0.8, chance: 0.25 },
    run: { run_id: "20261127-000000-ffff", runner_version: undefined },
    profile: {
      ...topSetsProfile(),
      abilities: [
        { name: "A", id: "a0", sequences: 10 },
        { name: "B", id: "a1", sequences: 10 },
      ],
      variants: [variant("A", 0, 3), variant("B", 1, 1.1)],
      fluency: MODEL_FLUENCY,
    },
  });
}

const RUN = { dir: "/p/.bprof/runs/x", resultsFile: "/p/.bprof/runs/x/results.json" };

test("a variant past the threshold: its cells greyed with the reason, the other's in colour; every face lists the perplexities", async () => {
  const report = await buildReport({ ...RUN, results: results() });
  const s = report.models[0]!.profile!.sections[0]!;
  const greyed = s.heatmap.cells.filter((c) => c.fill === NOT_FLUENT_FILL);
  assert.deepEqual(
    greyed.map((c) => [c.row, c.column]),
    [
      [0, 0],
      [0, 1],
    ],
  );
  assert.match(
    greyed[0]!.tooltip[0]!,
    /^this variant lost its fluency: its perplexity of the neutral text is 36\.55, 3\.00 times the unablated model's 12\.18 \(threshold 2\)/,
  );
  assert.equal(greyed[0]!.label, "0.10*", "the value stays readable");

  const html = renderHtml(report, { script: "" });
  assert.match(html, /<span class="label">Fluency<\/span>/);
  assert.match(html, /<span class="lp error">A: 36\.55 \(3\.00x, not fluent\)<\/span>/);
  assert.match(html, /<span class="lp">B: 13\.40 \(1\.10x\)<\/span>/);
  assert.match(
    renderMarkdown(report),
    /\*\*Fluency\*\* .*the unablated model 12\.18.*A 36\.55 \(3\.00x, not fluent\); B 13\.40 \(1\.10x\)/,
  );
  assert.deepEqual(fluencyLines(report.models[0]!), [
    "  fluency (perplexity of the built-in neutral text; the model 12.18): 1 variant(s) past 2x, their AIS greyed in the reports: A 36.55 (3.00x, not fluent)",
  ]);

  const view = (await resultsView({ ...RUN, results: results() })).profile!;
  assert.equal(view.fluency?.perplexity, MODEL_FLUENCY.perplexity);
  assert.deepEqual(
    view.rows.map((r) => r.fluency?.fluent),
    [false, true],
  );
  assert.equal(view.heatmap.cells.filter((c) => c.fill === NOT_FLUENT_FILL).length, 2);
});

test("a run made before the measure: no fluency line, nothing greyed", async () => {
  const old = results();
  delete old.models[0]!.profile!.fluency;
  for (const v of old.models[0]!.profile!.variants) delete v.fluency;
  const report = await buildReport({ ...RUN, results: old });
  assert.equal(report.models[0]!.profile!.sections[0]!.heatmap.cells.filter((c) => c.fill === NOT_FLUENT_FILL).length, 0);
  assert.deepEqual(fluencyLines(report.models[0]!), []);
  assert.doesNotMatch(renderHtml(report, { script: "" }), /class="label">Fluency/);
});

test("the JSON report lists every variant's fluency and the failure signatures", async () => {
  const labelled = results();
  // b1 labelled with B, whose top set hurts b2 more: a failing label to find
  labelled.models[0]!.benchmarks[0]!.ability = "B";
  const run = { ...RUN, results: labelled };
  const json = JSON.parse((await renderJson(run, new RunItems(RUN.dir))).text) as {
    fluency: { ability: string; perplexity_ratio: number; fluent: boolean }[];
    findings: { model: string; signature: string }[];
    models: { profile: { fluency: ModelFluency } }[];
  };
  assert.deepEqual(
    json.fluency.map((f) => [f.ability, f.perplexity_ratio, f.fluent]),
    [
      ["A", 3, false],
      ["B", 1.1, true],
    ],
  );
  assert.deepEqual(json.models[0]!.profile.fluency, MODEL_FLUENCY);
  const expected = (await buildReport(run)).models[0]!.findings.map((f) => ({ model: "m", ...f }));
  assert.deepEqual(
    json.findings.map((f) => f.signature),
    ["fluency-collapse", "label-fails"],
  );
  assert.deepEqual(json.findings, JSON.parse(JSON.stringify(expected)));
});

test("a top set that cost the model its fluency is a failure signature, pointing at ablation.k (or at candidates with all)", async () => {
  const [f] = (await buildReport({ ...RUN, results: results() })).models[0]!.findings;
  assert.equal(f!.signature, "fluency-collapse");
  assert.deepEqual(f!.setting, ["ablation", "k"]);
  assert.equal(f!.figures, "perplexity of the neutral text A 3.00x the unablated model's 12.18 at k = 0.01");
  assert.match(f!.remedy, /^lower k/);
  const all = results();
  all.models[0]!.profile!.candidate_set = "all";
  const [g] = (await buildReport({ ...RUN, results: all })).models[0]!.findings;
  assert.deepEqual(g!.setting, ["ablation", "candidates"]);
  assert.match(g!.remedy, /ablation\.candidates: mlp/);
  // a healthy profile: none
  const fluent = results();
  for (const v of fluent.models[0]!.profile!.variants) v.fluency = { ...v.fluency!, perplexity_ratio: 1.1, fluent: true };
  assert.deepEqual(
    (await buildReport({ ...RUN, results: fluent })).models[0]!.findings.map((x) => x.signature),
    [],
  );
});

test("the Runs view's summary: the worst variant's ratio and the variants past the threshold, by rule and candidate set", () => {
  const r = results();
  assert.deepEqual(runFluencyLines(r), [
    "m: perplexity of the built-in neutral text 12.18 unablated; worst variant A top k = 0.01 at 3.00x; " +
      "1 of 2 variants past 2x (not fluent, their AIS greyed): A top k = 0.01 3.00x",
  ]);
  // an all-layer profile beside the MLP's: its variants are named by their rule
  const model = r.models[0]!;
  model.other_methods = [{ ...model.profile!, candidate_set: "all" }];
  assert.match(
    runFluencyLines(r)[0]!,
    /2 of 4 variants past 2x .*A top k = 0\.01 \(paper\) 3\.00x; A top k = 0\.01 \(paper, all layers\) 3\.00x/,
  );
  // every variant fluent
  model.other_methods = [];
  model.profile!.variants = model.profile!.variants.filter((v) => v.fluency!.fluent);
  assert.match(runFluencyLines(r)[0]!, /worst variant B top k = 0\.01 at 1\.10x; all 1 variants within 2x$/);
  // a run made before the measure: nothing
  delete model.profile!.fluency;
  assert.deepEqual(runFluencyLines(r), []);
});
