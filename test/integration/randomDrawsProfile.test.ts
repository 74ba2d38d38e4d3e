// `ablation.random_draws` with the real runner (issue 49): a profile drawing the random control 3
// times runs, its runner folder holds 3 random rankings and 3 random variants per k (the first
// draw byte for byte the random control of a run without the key), the progress names the draw, a
// resume reads the draws back and scores only the one missing, and 2 CPU shards give the same
// runner files byte for byte, every draw in the shard given the random control.
//
// On the CPU a float sum depends on how many threads share it, so every run here gets 1 thread
// (the shards 1 each): the same runner on the same threads gives the same bytes.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { bprof } from "../support/cli";
import { filesUnder } from "../support/files";
import { CONFIG_YAML, K, makeProfileProject } from "../support/profileProject";
import { resultsOf, runDirOf } from "../support/runFolder";
import type { Results } from "../../src/core/results/schema";

const DRAWS = CONFIG_YAML.replace("  batch_size: 2\n", "  batch_size: 2\n  random_draws: 3\n");

let root: string;
let parameters: number;
/** The run of 3 draws, unsharded: the reference of the resume and of the shards. */
let drawsRun: string;

before(async () => {
  assert.notEqual(DRAWS, CONFIG_YAML);
  ({ root, parameters } = await makeProfileProject({
    extraFiles: {
      "one.bprof.yaml": CONFIG_YAML + "threads: 1\n",
      "draws.bprof.yaml": DRAWS + "threads: 1\n",
      "draws-sharded.bprof.yaml": DRAWS + "threads: 2\nshards: 2\n",
    },
  }));
});
after(async () => fs.rm(root, { recursive: true, force: true }));

async function runConfig(config: string): Promise<{ runDir: string; stderr: string }> {
  const result = await bprof(["run", path.join(root, config)], { timeout: 240_000 });
  assert.equal(result.exitCode, 0, `bprof run ${config} failed:\n${result.stderr}\n${result.stdout}`);
  return { runDir: runDirOf(result.stdout + result.stderr), stderr: result.stderr };
}

const runnerOf = (runDir: string) => path.join(runDir, "models", "tiny-llama", "runner");

interface ManifestVariant {
  ability: string | null;
  selection: string;
  k: number;
  n: number;
  file: string;
  draw?: number;
}

test("random_draws: 3 draws the random control 3 times per k; the first draw is the one random control", { timeout: 300_000 }, async () => {
  const validated = await bprof(["validate", path.join(root, "draws.bprof.yaml")]);
  assert.equal(validated.exitCode, 0, validated.stderr + validated.stdout);
  assert.doesNotMatch(validated.stderr, /random_draws/);

  const one = await runConfig("one.bprof.yaml");
  const draws = await runConfig("draws.bprof.yaml");
  drawsRun = draws.runDir;
  // 2 abilities x top x 2 k, and the random control's 3 draws x 2 k
  assert.match(draws.stderr, /^tiny-llama variants 10\/10$/m, draws.stderr);
  for (const [draw, k] of [
    [1, K[0]],
    [2, K[1]],
    [3, K[1]],
  ] as const)
    assert.match(
      draws.stderr,
      new RegExp(`^tiny-llama random control · draw ${draw} of 3 · k ${String(k).replace(".", "\\.")} \\d+/\\d+$`, "m"),
      draws.stderr,
    );
  assert.match(draws.stderr, /^tiny-llama variant random control · draw 3 of 3 · k 0\.01, n \d+$/m);

  const job = JSON.parse(await fs.readFile(path.join(draws.runDir, "models", "tiny-llama", "job.json"), "utf8"));
  assert.equal(job.ablation.random_draws, 3);
  const plainJob = JSON.parse(await fs.readFile(path.join(one.runDir, "models", "tiny-llama", "job.json"), "utf8"));
  assert.ok(!("random_draws" in plainJob.ablation), "a job of one draw has no random_draws");

  const files = await filesUnder(runnerOf(draws.runDir));
  const names = [...files.keys()];
  assert.deepEqual(
    names.filter((f) => f.startsWith(path.join("rankings", "random"))).sort(),
    ["random.bin", "random.d1.bin", "random.d2.bin"].map((f) => path.join("rankings", f)),
  );
  for (const i of [0, 1])
    assert.deepEqual(
      names.filter((f) => new RegExp(`^variants/random\\.k${i}(\\.d\\d)?\\.jsonl$`).test(f)).sort(),
      [`random.k${i}.jsonl`, `random.k${i}.d1.jsonl`, `random.k${i}.d2.jsonl`].map((f) => path.join("variants", f)).sort(),
    );
  // three different random sets: their rankings differ, and so do the scores of the widest k
  const rankings = ["random.bin", "random.d1.bin", "random.d2.bin"].map((f) => files.get(path.join("rankings", f))!);
  assert.equal(new Set(rankings).size, 3);

  const manifest = JSON.parse(files.get("profile.json")!) as { variants: ManifestVariant[] };
  const random = manifest.variants.filter((v) => v.selection === "random");
  assert.deepEqual(
    random.map((v) => `${v.draw} ${v.k} ${v.n} ${v.file}`),
    [0, 1, 2].flatMap((d) =>
      K.map((k, i) => `${d} ${k} ${Math.floor(k * parameters)} variants/random.k${i}${d === 0 ? "" : `.d${d}`}.jsonl`),
    ),
  );

  // the first draw, and everything else the runs share, is the run without random_draws byte for byte
  const plain = await filesUnder(runnerOf(one.runDir));
  for (const [file, text] of plain) {
    if (file === "profile.json" || file === "job.fingerprint") continue;
    assert.equal(files.get(file), text, file);
  }
  assert.equal(files.size, plain.size + 2 + 4, "draws 1 and 2: a ranking each and a variant per k");
  const plainManifest = JSON.parse(plain.get("profile.json")!) as { variants: ManifestVariant[] };
  assert.deepEqual(
    manifest.variants.filter((v) => (v.draw ?? 0) === 0).map(({ draw: _draw, ...rest }) => rest),
    plainManifest.variants,
  );
});

test("a resumed run of 3 draws reads the draws on disk back and scores only the one missing", { timeout: 300_000 }, async () => {
  assert.ok(drawsRun, "the run of 3 draws ran");
  const runner = runnerOf(drawsRun);
  const before = await filesUnder(runner);
  const results = await resultsOf(drawsRun);
  // as if the run had stopped while scoring the last draw at the last k
  for (const file of ["profile.json", "variants/random.k1.d2.jsonl", "rankings/random.d2.bin"]) await fs.rm(path.join(runner, file));
  const resumed = await bprof(["run", "--resume", drawsRun], { timeout: 240_000 });
  assert.equal(resumed.exitCode, 0, `bprof run --resume failed:\n${resumed.stderr}\n${resumed.stdout}`);
  assert.match(resumed.stderr, /^tiny-llama variant random control · draw 2 of 3 · k 0\.01, n \d+ \(resumed\)$/m);
  assert.match(resumed.stderr, /^tiny-llama variant random control · draw 3 of 3 · k 0\.001, n \d+ \(resumed\)$/m);
  assert.match(resumed.stderr, /^tiny-llama variant random control · draw 3 of 3 · k 0\.01, n \d+$/m);
  assert.equal(resumed.stderr.match(/^tiny-llama variant .*[^)]$/gm)?.length, 1, resumed.stderr);
  assert.deepEqual(await filesUnder(runner), before);
  assert.deepEqual((await resultsOf(drawsRun)).models, results.models);
});

test("2 CPU shards of 3 draws give the unsharded runner files byte for byte, every draw in one shard", { timeout: 300_000 }, async () => {
  assert.ok(drawsRun, "the run of 3 draws ran");
  const sharded = await runConfig("draws-sharded.bprof.yaml");
  assert.match(sharded.stderr, /^tiny-llama variants 10\/10$/m, sharded.stderr);
  assert.deepEqual(await filesUnder(runnerOf(sharded.runDir)), await filesUnder(runnerOf(drawsRun)));
  assert.deepEqual(await resultsOf(sharded.runDir), await resultsOf(drawsRun));

  const shards = path.join(sharded.runDir, "models", "tiny-llama", "shards");
  const manifests = await Promise.all(
    [0, 1].map(async (i) => JSON.parse(await fs.readFile(path.join(shards, String(i), "runner", "shard.json"), "utf8"))),
  );
  const randomShard = manifests.find((m) => m.random === true);
  assert.ok(randomShard, "a shard ran the random control");
  assert.deepEqual(
    (randomShard.variants as ManifestVariant[])
      .filter((v) => v.selection === "random")
      .map((v) => `${v.draw} ${v.k}`)
      .sort(),
    [0, 1, 2].flatMap((d) => K.map((k) => `${d} ${k}`)).sort(),
  );
  for (const m of manifests.filter((x) => x !== randomShard))
    assert.ok(!(m.variants as ManifestVariant[]).some((v) => v.selection === "random"), "the random control runs in one shard only");
});

test("each top cell's null and specificity from the 3 draws recomputed by hand from the items files", { timeout: 60_000 }, async () => {
  assert.ok(drawsRun, "the first test ran the draws");
  const results = JSON.parse(await fs.readFile(path.join(drawsRun, "results.json"), "utf8")) as Results;
  const profile = results.models[0]!.profile!;
  const modelDir = path.join(drawsRun, "models", "tiny-llama");
  type Item = { benchmark: string; prediction: number; target: number; choices: unknown[] };
  const itemsOf = async (file: string): Promise<Item[]> =>
    (await fs.readFile(path.join(modelDir, file), "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Item);
  const baseline = await itemsOf("items.jsonl");
  const accuracy = (items: Item[]) => items.filter((i) => i.prediction === i.target).length / items.length;
  let checked = 0;
  for (const k of profile.k) {
    const random = profile.variants.find((v) => v.selection === "random" && v.k === k)!;
    const later = (profile.random_draws ?? []).filter((d) => d.k === k);
    assert.equal(later.length, 2, "draws 1 and 2 at each k, beside the random variant");
    const drawFiles = [random.items_file, ...later.map((d) => d.items_file)];
    for (const top of profile.variants.filter((v) => v.selection === "top" && v.k === k)) {
      for (const cells of top.benchmarks) {
        const on = (items: Item[]) => items.filter((i) => i.benchmark === cells.name);
        const before = on(baseline);
        const p0 = accuracy(before);
        const chance = before.reduce((s, i) => s + 1 / i.choices.length, 0) / before.length;
        if (!(p0 > chance)) continue;
        const ais = (items: Item[]) => (p0 - accuracy(items)) / (p0 - chance);
        const a = ais(on(await itemsOf(top.items_file)));
        const draws: number[] = [];
        for (const file of drawFiles) draws.push(ais(on(await itemsOf(file))));
        const cell = cells.acc!;
        const mean = draws.reduce((s, d) => s + d, 0) / draws.length;
        assert.ok(Math.abs(cell.ais! - a) < 1e-12);
        assert.equal(cell.random_null!.draws, 3);
        assert.equal(cell.random_null!.p, (1 + draws.filter((d) => d >= a).length) / 4);
        assert.ok(Math.abs(cell.random_null!.mean - mean) < 1e-12, `${cells.name}: null mean ${cell.random_null!.mean} against ${mean}`);
        // specificity is against the draws' mean; with several draws its p is the bootstrap's
        if (cell.specificity!.value !== null) {
          assert.ok(Math.abs(cell.specificity!.value - (a - mean)) < 1e-12);
          assert.equal(cell.specificity!.test, "bootstrap");
        }
        checked++;
      }
    }
  }
  assert.ok(checked > 0, "some cell had a baseline above chance to check");
});
