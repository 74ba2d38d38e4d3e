// Splitting a profile job into shards of whole abilities: balanced by work (diagnostic tokens and
// variants), not by count; each shard job the whole job with its abilities and a `shard` key.
import assert from "node:assert/strict";
import { test } from "node:test";
import { parseConfig } from "../../../src/core/config/parse";
import { shardProblems, shardSetting } from "../../../src/core/config/shards";
import type { Target } from "../../../src/core/config/target";
import type { ProfileJob } from "../../../src/core/plan/job";
import {
  abilityWork,
  commonWork,
  describeShard,
  IMPORTANCE_PASSES,
  jobFingerprint,
  randomVariants,
  shardJob,
  splitJob,
  variantsPerAbility,
} from "../../../src/core/plan/shards";
import { jobWork, secondsFor } from "../../../src/core/plan/pace";

/** A job whose items read 10 tokens each and whose abilities have `tokens[i]` diagnostic tokens. */
function job(tokens: number[], selections: ProfileJob["ablation"]["selections"] = ["top", "random"]): ProfileJob {
  return {
    protocol: 1,
    subcommand: "profile",
    model: { path: "/m", dtype: "float32" },
    device: "cpu",
    items: [
      {
        id: "b/0",
        context: [1, 2, 3, 4, 5, 6, 7],
        choices: [
          [8, 9],
          [10, 11, 12],
        ],
      }, // 7 + 1 + 2
      { id: "b/1", context: [1, 2, 3, 4, 5], generate: { max_tokens: 5, stop: [] } }, // 5 + 5
    ],
    abilities: tokens.map((n, i) => ({ id: `a${i}`, sequences: [Array.from({ length: n }, (_, t) => t)] })),
    ablation: { k: [0.01, 0.02], selections, method: "paper", front_removal: 0, back_removal: 0, batch_size: 8, seed: 1 },
  };
}

test("an ability's work is its importance pass and its variants; the baseline and random control are one unit", () => {
  const j = job([100, 10]);
  // 1 ranked selection x 2 k variants of 20 tokens each
  assert.equal(abilityWork(j).get("a0"), IMPORTANCE_PASSES * 100 + 2 * 20);
  assert.equal(abilityWork(j).get("a1"), IMPORTANCE_PASSES * 10 + 2 * 20);
  assert.equal(commonWork(j), (1 + 2) * 20);
  assert.equal(commonWork(job([1], ["top"])), 20);
});

test("uneven abilities are balanced by work, not by count", () => {
  // one heavy ability and five light ones: by count, 3 + 3; by work, the heavy one nearly alone
  const j = job([3000, 100, 100, 100, 100, 100]);
  const plans = splitJob(j, 2);
  assert.equal(plans.length, 2);
  assert.deepEqual(plans[0]!.abilities, ["a0"]);
  assert.deepEqual(plans[1]!.abilities, ["a1", "a2", "a3", "a4", "a5"]);
  // the baseline and the random control go to the lighter shard
  assert.equal(plans[0]!.common, false);
  assert.equal(plans[1]!.common, true);
  const total = plans.reduce((n, p) => n + p.work, 0);
  assert.equal(total, [...abilityWork(j).values()].reduce((a, b) => a + b) + commonWork(j));
  assert.equal(plans[0]!.variants + plans[1]!.variants, 6 * 2 + 2);
  assert.equal(plans[1]!.variants, 5 * 2 + 2);
});

test("every ability is in exactly one shard, in the job's order, and the common work in exactly one", () => {
  const j = job([50, 700, 20, 300, 300, 90, 5]);
  for (const count of [1, 2, 3, 4, 7]) {
    const plans = splitJob(j, count);
    assert.equal(plans.length, count);
    const all = plans.flatMap((p) => p.abilities);
    assert.deepEqual([...all].sort(), j.abilities.map((a) => a.id).sort());
    for (const p of plans)
      assert.deepEqual(
        p.abilities,
        [...p.abilities].sort((a, b) => Number(a.slice(1)) - Number(b.slice(1))),
      );
    assert.equal(plans.filter((p) => p.common).length, 1);
  }
  // LPT: no shard holds more than the average plus the largest unit
  const plans = splitJob(j, 3);
  const works = plans.map((p) => p.work);
  const largest = Math.max(...abilityWork(j).values(), commonWork(j));
  assert.ok(Math.max(...works) <= works.reduce((a, b) => a + b) / 3 + largest);
});

test("more shards than units: the empty ones are dropped", () => {
  const plans = splitJob(job([10, 20]), 5);
  assert.equal(plans.length, 3);
  assert.throws(() => splitJob(job([10]), 0), /not a positive integer/);
});

test("a shard job is the whole job with its abilities, its device and its key", () => {
  const j = job([3000, 100, 100]);
  const plans = splitJob(j, 2);
  const of = jobFingerprint(JSON.stringify(j));
  assert.match(of, /^[0-9a-f]{16}$/);
  const second = shardJob(j, plans, 1, of, "cuda:1");
  assert.deepEqual(
    second.abilities.map((a) => a.id),
    ["a1", "a2"],
  );
  assert.equal(second.device, "cuda:1");
  assert.deepEqual(second.shard, { of, index: 1, count: 2, baseline: true, random: true });
  assert.deepEqual(second.items, j.items);
  assert.deepEqual(second.ablation, j.ablation);
  assert.equal(shardJob(j, plans, 0, of).device, "cpu");
  assert.equal(shardJob(j, plans, 0, of).shard.baseline, false);
  assert.notEqual(jobFingerprint(JSON.stringify(j) + " "), of);
});

test("a shard is described by its abilities' names and its share of the work", () => {
  const plans = splitJob(job([3000, 100, 100]), 2);
  const total = plans.reduce((n, p) => n + p.work, 0);
  const names = new Map([
    ["a0", "Quantitative"],
    ["a1", "Spatial"],
    ["a2", "Temporal"],
  ]);
  assert.match(describeShard(plans[0]!, total, names), /^Quantitative \(\d+% of the work\)$/);
  assert.match(describeShard(plans[1]!, total, names), /^Spatial, Temporal, baseline \+ random control \(\d+% of the work\)$/);
});

const FILE = "/p/x.bprof.yaml";
const BASE = "models:\n  - path: ./m\nbenchmarks:\n  - task: t.yaml\nabilities:\n  - name: A\n    data: a.diag.jsonl\n";

/** The config's shard problems as "line: code: message" (parse problems first). */
function shardLines(extra: string, target: Target = { kind: "local" }): string[] {
  const parsed = parseConfig(BASE + extra, FILE);
  const problems = [...parsed.problems, ...(parsed.config ? shardProblems(parsed.config, parsed.source!, target) : [])];
  return problems.map((p) => `${p.line}: ${p.code}: ${p.message}`);
}

test("`shards` and `devices` in the config: the split they mean", () => {
  const setting = (extra: string) => shardSetting(parseConfig(BASE + extra, FILE).config!);
  assert.equal(setting(""), undefined);
  assert.equal(setting("shards: 1\n"), undefined);
  assert.deepEqual(setting("shards: 3\n"), { count: 3 });
  assert.deepEqual(setting("device: cuda\nshards: auto\n"), { count: "auto" });
  assert.deepEqual(setting("devices: [cuda:0, cuda:1]\n"), { count: 2, devices: ["cuda:0", "cuda:1"] });
  assert.deepEqual(shardLines("shards: 3\nthreads: 6\n"), []);
  assert.deepEqual(shardLines("devices: [cuda:0, cuda:1]\nshards: 2\n"), []);
});

test("`shards` and `devices` that cannot split the profile are errors at their key", () => {
  assert.deepEqual(shardLines("devices: [cuda:0, cuda:1]\nshards: 3\n"), [
    "9: config.shards: `shards: 3` but `devices` names 2: one shard runs per device (leave `shards` out)",
  ]);
  assert.deepEqual(shardLines("device: cuda\ndevices: [cuda:0]\n"), [
    "9: config.shards: give `device` or `devices`, not both: with `devices` each shard runs on its own device",
  ]);
  assert.deepEqual(shardLines("shards: auto\n"), [
    "8: config.shards: `shards: auto` runs one shard per visible GPU: it needs `device: cuda` (or `devices`); on the CPU give a number",
  ]);
  const ssh: Target = { kind: "ssh", host: { kind: "ssh", connection: { host: "h", options: {} } }, workdir: "w" };
  assert.deepEqual(shardLines("devices: [cuda:0, cuda:1]\n", ssh), []);
  const slurm: Target = { kind: "slurm", host: { kind: "local" }, sbatchOptions: [], pollSeconds: 5 };
  assert.match(shardLines("shards: 2\n", slurm)[0]!, /^8: config\.shards: on a Slurm target the shards are `target\.slurm\.shards`/);
  assert.deepEqual(shardSetting(parseConfig(BASE + "target:\n  slurm:\n    shards: 3\n", FILE).config!), { count: 3 });
  assert.deepEqual(shardLines("target:\n  slurm:\n    shards: 3\n", slurm), []);
  assert.match(shardLines("shards: 0\n")[0]!, /^8: config\.invalid-value: /);
  // a GPU that one runner leaves half idle (a small model) takes two
  assert.deepEqual(shardLines("devices: [cuda:0, cuda:0]\n"), []);
  assert.deepEqual(shardSetting(parseConfig(BASE + "devices: [cuda:0, cuda:0]\n", FILE).config!), {
    count: 2,
    devices: ["cuda:0", "cuda:0"],
  });
  const scoreOnly = parseConfig("models:\n  - path: ./m\nbenchmarks:\n  - task: t.yaml\nshards: 2\n", FILE);
  assert.deepEqual(
    shardProblems(scoreOnly.config!, scoreOnly.source!, { kind: "local" }).map((p) => `${p.line}: ${p.code}: ${p.severity}`),
    ["5: config.no-effect: warning"],
  );
});

test("both rules double an ability's variants; a shard's work is its abilities and the common unit where it runs it", () => {
  const both = { ...job([100]), ablation: { ...job([100]).ablation, method: ["paper", "signed"] as ("paper" | "signed")[] } };
  assert.equal(abilityWork(both).get("a0"), IMPORTANCE_PASSES * 100 + 2 * 2 * 20);
  const whole = job([100, 10]);
  const plans = splitJob(whole, 2);
  const shards = plans.map((_, i) => shardJob(whole, plans, i, "f"));
  assert.equal(
    shards.reduce((n, s) => n + jobWork(s), 0),
    jobWork(whole),
    "the shards' work adds up to the whole job's",
  );
});

test("random_draws multiply the random control's variants, and candidate sets both them and an ability's; all in the common unit", () => {
  const draws = { ...job([100, 10]), ablation: { ...job([100, 10]).ablation, random_draws: 5 } };
  assert.equal(randomVariants(job([100])), 2);
  assert.equal(randomVariants(draws), 2 * 5);
  assert.equal(commonWork(draws), (1 + 2 * 5) * 20);
  assert.equal(abilityWork(draws).get("a0"), abilityWork(job([100, 10])).get("a0"), "an ability's work is not the control's");
  const plans = splitJob(draws, 2);
  assert.equal(plans.find((p) => p.common)!.variants, 2 * 5 + plans.find((p) => p.common)!.abilities.length * 2);
  assert.equal(
    plans.reduce((n, p) => n + p.variants, 0),
    2 * 2 + 2 * 5,
  );
  // [mlp, {set: all, method: paper}] under both rules: 3 rankings per ability, a random control per set
  const sets = {
    ...draws,
    ablation: {
      ...draws.ablation,
      method: ["paper", "signed"] as ("paper" | "signed")[],
      candidates: ["mlp" as const, { set: "all" as const, method: ["paper" as const] }],
    },
  };
  assert.equal(variantsPerAbility(sets), 3 * 2);
  assert.equal(randomVariants(sets), 2 * 2 * 5);
  assert.equal(randomVariants({ ...draws, ablation: { ...draws.ablation, selections: ["top"] } }), 0);
});

test("a measured pace: thread-seconds per unit of work on the CPU, seconds per unit on a GPU", () => {
  const pace = { runId: "r", cpuThreadSeconds: 0.002, gpuSeconds: 0.0001 };
  assert.equal(secondsFor(1000, pace, "cpu", 4), 0.5);
  assert.equal(secondsFor(1000, pace, "cuda:1", 4), 0.1);
  assert.equal(secondsFor(1000, { runId: "r", gpuSeconds: 0.0001 }, "cpu", 4), undefined, "no CPU pace: no CPU estimate");
});
