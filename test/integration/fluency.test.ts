// The fluency measure with the real runner on the tiny project (a random-weight Llama): the
// built-in text's paragraphs ride in the profile job beside the benchmark items, the baseline and
// every variant are scored on them in the same pass, and results.json holds the model's mean
// per-token log-likelihood and perplexity and each variant's against it. The perplexity is
// checked against the runner's own log-likelihoods of the same items: exp(-sum / tokens).
// A config's own text replaces the built-in one; a threshold below every variant's ratio marks
// them all, one above none.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { loadProfile } from "../../src/core/config/load";
import { resumeRun, runProfile } from "../../src/core/run/runProfile";
import { fluencyParagraphs, BUILT_IN_FLUENCY_TEXT, FLUENCY_ID_PREFIX } from "../../src/core/prompts/fluencyText";
import { readRunnerScores } from "../../src/core/results/items";
import type { Results } from "../../src/core/results/schema";
import { runnerPath } from "../support/cli";
import { CONFIG_YAML, makeProfileProject } from "../support/profileProject";

async function profileOf(config: string, extraFiles?: Record<string, string>) {
  const p = await makeProfileProject({ config, ...(extraFiles ? { extraFiles } : {}) });
  const { profile, problems } = await loadProfile(p.configPath);
  assert.ok(profile, problems.map((x) => x.message).join("\n"));
  const outcome = await runProfile(profile, { runner: { path: runnerPath, sourcesDir: "", cacheDir: "" } });
  const results = JSON.parse(await fs.readFile(outcome.resultsFile, "utf8")) as Results;
  return { p, runDir: outcome.runDir, results };
}

test("every variant's fluency against the model's, from the same pass as the benchmarks", { timeout: 300_000 }, async (t) => {
  const { p, runDir, results } = await profileOf(CONFIG_YAML);
  t.after(() => fs.rm(p.root, { recursive: true, force: true }));
  const profile = results.models[0]!.profile!;
  const fluency = profile.fluency!;
  assert.equal(fluency.text, "built-in");
  assert.equal(fluency.max_perplexity_ratio, 2);
  // the runner's own baseline scores of the paragraphs give the same figure
  const modelDir = path.join(runDir, "models", results.models[0]!.name);
  const runnerDir = (await fs.readdir(modelDir)).find((d) => d.startsWith("runner")) ?? "runner";
  const baseline = await readRunnerScores(path.join(modelDir, runnerDir, "baseline.jsonl"));
  const paragraphs = [...baseline.keys()].filter((id) => id.startsWith(FLUENCY_ID_PREFIX));
  assert.equal(paragraphs.length, fluencyParagraphs(BUILT_IN_FLUENCY_TEXT).length);
  let sum = 0;
  let tokens = 0;
  for (const id of paragraphs)
    for (const c of baseline.get(id) as { logprob: number; tokens: number }[]) [sum, tokens] = [sum + c.logprob, tokens + c.tokens];
  assert.equal(fluency.tokens, tokens);
  assert.ok(Math.abs(fluency.perplexity - Math.exp(-sum / tokens)) <= 1e-9 * fluency.perplexity, `${fluency.perplexity}`);
  assert.ok(fluency.perplexity > 1 && Number.isFinite(fluency.perplexity));
  // no benchmark item is named after it: the benchmark's scores are untouched
  assert.deepEqual(
    results.models[0]!.benchmarks.map((b) => b.name),
    ["tiny_yes"],
  );
  for (const v of profile.variants) {
    const f = v.fluency!;
    assert.ok(f, `${v.scores_file} has a fluency measure`);
    assert.ok(Math.abs(f.perplexity_ratio - f.perplexity / fluency.perplexity) < 1e-12);
    assert.equal(f.fluent, f.perplexity_ratio <= 2);
  }
});

test("a config's own text and threshold: every variant past a threshold just above 1 is marked", { timeout: 300_000 }, async (t) => {
  const text = "The cat sat on the mat by the door.\n\nRain fell softly on the garden all afternoon.\n";
  const config = CONFIG_YAML.replace(
    "  batch_size: 2\n",
    "  batch_size: 2\n  fluency:\n    text: ./neutral.txt\n    max_perplexity_ratio: 1.0000001\n",
  );
  assert.notEqual(config, CONFIG_YAML);
  const { p, results } = await profileOf(config, { "neutral.txt": text });
  t.after(() => fs.rm(p.root, { recursive: true, force: true }));
  const profile = results.models[0]!.profile!;
  assert.equal(profile.fluency!.text, path.join(p.root, "neutral.txt"));
  // a variant whose perplexity moved up past the threshold is marked; one that did not move stays fluent
  for (const v of profile.variants) assert.equal(v.fluency!.fluent, v.fluency!.perplexity_ratio <= 1.0000001);
  assert.ok(
    profile.variants.some((v) => !v.fluency!.fluent),
    "zeroing 1% of the weights raises the perplexity of some variant",
  );
});

test("a run started before the fluency measure resumes as it was, without it", { timeout: 300_000 }, async (t) => {
  const p = await makeProfileProject();
  t.after(() => fs.rm(p.root, { recursive: true, force: true }));
  const { profile } = await loadProfile(p.configPath);
  // compiled as an older version compiled it: no fluency text in the job; stopped before its last variant
  delete profile!.ablation!.fluency;
  const runner = { runner: { path: runnerPath, sourcesDir: "", cacheDir: "" } };
  const first = await runProfile(profile!, runner);
  const runnerDir = path.join(first.runDir, "models", "tiny-llama", "runner");
  const variants = (await fs.readdir(path.join(runnerDir, "variants"))).sort();
  await fs.rm(path.join(runnerDir, "variants", variants.at(-1)!));
  await fs.rm(path.join(runnerDir, "profile.json"));
  await fs.rm(first.resultsFile);
  const outcome = await resumeRun(first.runDir, runner);
  const results = JSON.parse(await fs.readFile(outcome.resultsFile, "utf8")) as Results;
  const resumed = results.models[0]!.profile!;
  assert.equal(resumed.fluency, undefined);
  assert.ok(resumed.variants.every((v) => v.fluency === undefined));
  const job = JSON.parse(await fs.readFile(path.join(first.runDir, "models", "tiny-llama", "job.json"), "utf8")) as {
    items: { id: string }[];
  };
  assert.ok(!job.items.some((i) => i.id.startsWith(FLUENCY_ID_PREFIX)), "the job is the one the run started with");
});
