// A profile in 3 CPU shards with the real runner (docs/targets.md, "Shards"): its results equal the
// unsharded run's cell for cell and item for item, and its runner folder is byte for byte the
// unsharded one's; the merge scores nothing again. A shard killed mid-run is resumed alone. The
// merge refuses a shard folder of another job. Several importance rules, and a list of candidate
// sets with a set ranked under one rule only, merge to the unsharded run's results too.
//
// On the CPU a float sum depends on how many threads share it, so the unsharded run gets the
// threads each shard gets (1): the same runner on the same threads gives the same bytes.
import assert from "node:assert/strict";
import { execa } from "execa";
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { gatherShards, ShardMergeError } from "../../src/core/launch/shards";
import { shardsOfRun, shardStateText, shardWorkText } from "../../src/core/results/shards";
import { profilesOf, type Results } from "../../src/core/results/schema";
import { bprof, cliPath, runnerPath } from "../support/cli";
import { CONFIG_YAML, K, makeProfileProject, QUANT, SPATIAL } from "../support/profileProject";
import { filesUnder } from "../support/files";
import { resultsOf, runDirOf } from "../support/runFolder";

let root: string;
const BOTH_RULES = CONFIG_YAML.replace("  batch_size: 2\n", "  batch_size: 2\n  method: [paper, signed]\n");
// both candidate sets from one gradient pass, the all-layer set under the paper's rule only (docs/config.md)
const BOTH_SETS = CONFIG_YAML.replace(
  "  batch_size: 2\n",
  "  batch_size: 2\n  method: [signed, paper]\n  candidates: [mlp, {set: all, method: paper}]\n",
);

/** The unsharded run's folder, the reference. */
let reference: string;

before(async () => {
  ({ root } = await makeProfileProject({
    extraFiles: {
      "one.bprof.yaml": CONFIG_YAML + "threads: 1\n",
      "sharded.bprof.yaml": CONFIG_YAML + "threads: 3\nshards: 3\n",
      "other.bprof.yaml": CONFIG_YAML.replace("seed: 3", "seed: 4") + "threads: 3\nshards: 3\n",
      "rules-one.bprof.yaml": BOTH_RULES + "threads: 1\n",
      "rules-sharded.bprof.yaml": BOTH_RULES + "threads: 2\nshards: 2\n",
      "sets-one.bprof.yaml": BOTH_SETS + "threads: 1\n",
      "sets-sharded.bprof.yaml": BOTH_SETS + "threads: 2\nshards: 2\n",
    },
  }));
  // A longer benchmark, so a shard can be killed while it scores.
  const docs = await fs.readFile(path.join(root, "tasks", "tiny_yes.jsonl"), "utf8");
  await fs.writeFile(path.join(root, "tasks", "tiny_yes.jsonl"), docs.repeat(40));
  reference = await runConfig("one.bprof.yaml");
});
after(async () => fs.rm(root, { recursive: true, force: true }));

async function runConfig(config: string): Promise<string> {
  const result = await bprof(["run", path.join(root, config)], { timeout: 240_000 });
  assert.equal(result.exitCode, 0, `bprof run ${config} failed:\n${result.stderr}\n${result.stdout}`);
  return runDirOf(result.stdout + result.stderr);
}

/** What a sharded model folder holds that the unsharded one's holds too, byte for byte. */
async function assertSameAsReference(runDir: string): Promise<void> {
  assert.deepEqual(await resultsOf(runDir), await resultsOf(reference));
  const model = (dir: string) => path.join(dir, "models", "tiny-llama");
  assert.deepEqual(await filesUnder(path.join(model(runDir), "runner")), await filesUnder(path.join(model(reference), "runner")));
  assert.deepEqual(await filesUnder(path.join(model(runDir), "variants")), await filesUnder(path.join(model(reference), "variants")));
  for (const file of ["job.json", "items.jsonl", "flips.jsonl"])
    assert.equal(await fs.readFile(path.join(model(runDir), file), "utf8"), await fs.readFile(path.join(model(reference), file), "utf8"));
}

async function eventsOf(file: string): Promise<{ type: string; phase?: string; resumed?: boolean }[]> {
  const text = await fs.readFile(file, "utf8");
  // a shard stopped before its runner said anything has an empty file
  return text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as { type: string });
}

test("3 CPU shards give the unsharded run's results and files; the merge scores nothing again", { timeout: 300_000 }, async () => {
  const validated = await bprof(["validate", path.join(root, "sharded.bprof.yaml")]);
  assert.equal(validated.exitCode, 0, validated.stderr);
  assert.match(
    validated.stdout,
    /^tiny-llama: 3 shards, 1 thread each; the run lasts as long as its largest shard, \d+% of the work; no earlier run of this model to time the shards by$/m,
  );
  assert.match(
    validated.stdout,
    /^ {2}shard 1: baseline \+ random control \(\d+% of the work\)\n {2}shard 2: Spatial Reasoning \(\d+% of the work\)\n {2}shard 3: Quantitative Reasoning \(\d+% of the work\)$/m,
  );

  const result = await bprof(["run", path.join(root, "sharded.bprof.yaml")], { timeout: 240_000 });
  assert.equal(result.exitCode, 0, `bprof run failed:\n${result.stderr}\n${result.stdout}`);
  assert.match(result.stderr, /^tiny-llama: 3 shards, 1 thread each$/m);
  // one progress: the shards' variants counted together towards the whole job's 6
  assert.match(result.stderr, /^tiny-llama variants 6\/6$/m);
  const runDir = runDirOf(result.stdout);
  await assertSameAsReference(runDir);

  // now the config has a run that timed each shard: validation says about how long each will take
  const timed = await bprof(["validate", path.join(root, "sharded.bprof.yaml")]);
  assert.match(
    timed.stdout,
    new RegExp(`the run lasts as long as its largest shard, \\d+% of the work; times at the pace of run ${path.basename(runDir)}$`, "m"),
  );
  assert.equal(timed.stdout.match(/^ {2}shard \d: .*\(\d+% of the work\), about \d+(\.\d)? s$/gm)?.length, 3, timed.stdout);

  const modelDir = path.join(runDir, "models", "tiny-llama");
  const shardJobs = await Promise.all(
    [0, 1, 2].map(async (i) => JSON.parse(await fs.readFile(path.join(modelDir, "shards", String(i), "job.json"), "utf8"))),
  );
  // heaviest first: the baseline and random control (7 of the 9 scorings), then the ability with
  // more diagnostic tokens, each in a shard of its own
  assert.deepEqual(
    shardJobs.map((j) => [j.abilities.map((a: { id: string }) => a.id), j.shard.baseline, j.shard.random]),
    [
      [[], true, true],
      [["spatial-reasoning"], false, false],
      [["quantitative-reasoning"], false, false],
    ],
  );
  // the merge (the model's own events) read every variant back and computed nothing
  const merge = (await eventsOf(path.join(modelDir, "events.jsonl"))).filter((e) => !("shard" in e));
  const variants = merge.filter((e) => e.type === "variant");
  assert.equal(variants.length, 6);
  assert.ok(variants.every((e) => e.resumed === true));
  assert.ok(!merge.some((e) => e.type === "progress" && ["importance", "baseline", "score"].includes(e.phase!)));
});

test("a shard killed mid-run: --resume runs only the shards that did not finish, with the same results", { timeout: 300_000 }, async () => {
  const child = execa("node", [cliPath, "run", path.join(root, "sharded.bprof.yaml")], {
    reject: false,
    env: { BPROF_RUNNER: process.env.BPROF_RUNNER ?? runnerPath },
  });
  let stderr = "";
  let killed: string | undefined;
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr += String(chunk);
    // once a shard has scored its first variant: SIGKILL a shard runner that is still scoring
    if (killed === undefined && /^tiny-llama variant /m.test(stderr)) {
      killed = "";
      void killAShard(child.pid!).then((shard) => (killed = shard));
    }
  });
  const first = await child;
  assert.ok(killed, `no shard runner was left to kill:\n${first.stderr}`);
  assert.notEqual(first.exitCode, 0, first.stderr);
  assert.match(first.stderr, new RegExp(`shard ${Number(killed) + 1} \\(.*shards/${killed}\\): bprof-runner was killed by SIGKILL`));
  const runDir = runDirOf(first.stderr);
  const modelDir = path.join(runDir, "models", "tiny-llama");
  const finished = await Promise.all(
    [0, 1, 2].map((i) =>
      fs.access(path.join(modelDir, "shards", String(i), "runner", "shard.json")).then(
        () => true,
        () => false,
      ),
    ),
  );
  assert.equal(finished[Number(killed)], false);
  // a shard stopped before its runner had started has no start yet: count the resume's own starts
  const startsOf = async (i: number) =>
    (await eventsOf(path.join(modelDir, "shards", String(i), "events.jsonl"))).filter((e) => e.type === "start").length;
  const startsBefore = await Promise.all([0, 1, 2].map(startsOf));
  const stopped = await shardsOfRun(runDir, false);
  assert.deepEqual(
    stopped.map((s) => s.state === "finished"),
    finished,
    "the Runs tree's shards: finished where shard.json is",
  );
  const killedRow = stopped[Number(killed)]!;
  assert.equal(killedRow.state, "stopped", "SIGKILL leaves no error event: the shard stopped without a word");
  assert.match(shardStateText(killedRow), /^stopped( · variants \d+\/\d+)?$/);
  for (const row of stopped.filter((s) => s.state === "failed")) assert.equal(row.error?.code, "cancelled");

  const resumed = await bprof(["run", "--resume", runDir], { timeout: 240_000 });
  assert.equal(resumed.exitCode, 0, `bprof run --resume failed:\n${resumed.stderr}`);
  const earlier = finished.filter(Boolean).length;
  if (earlier > 0) assert.match(resumed.stderr, new RegExp(`3 shards, 1 thread each; ${earlier} finished earlier`));
  for (const [i, done] of finished.entries()) {
    const starts = (await startsOf(i)) - startsBefore[i]!;
    assert.equal(starts, done ? 0 : 1, `shard ${i} ran ${starts} time(s) on resume`);
  }
  const shards = await shardsOfRun(runDir, false);
  assert.deepEqual(
    shards.map((s) => [s.state, s.variants?.done === s.variants?.total]),
    [0, 1, 2].map(() => ["finished", true]),
  );
  assert.deepEqual(
    shards.map((s) => shardWorkText(s)),
    ["baseline, random control", "spatial-reasoning", "quantitative-reasoning"],
  );
  // the killed shard kept what it had finished: at least the variant it had scored is read back
  const killedEvents = await eventsOf(path.join(modelDir, "shards", String(killed), "events.jsonl"));
  assert.ok(killedEvents.some((e) => e.type === "variant" && e.resumed === true) || killedEvents.some((e) => e.type === "result"));
  await assertSameAsReference(runDir);
});

test("Ctrl-C stops every shard", { timeout: 120_000 }, async () => {
  const child = execa("node", [cliPath, "run", path.join(root, "sharded.bprof.yaml")], {
    reject: false,
    env: { BPROF_RUNNER: process.env.BPROF_RUNNER ?? runnerPath },
  });
  let stderr = "";
  let runners: string[] = [];
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr += String(chunk);
    if (runners.length === 0 && /^tiny-llama variant /m.test(stderr)) {
      runners = ["pending"];
      void execa("pgrep", ["-P", String(child.pid!)], { reject: false }).then((found) => {
        runners = found.stdout.split("\n").filter(Boolean);
        child.kill("SIGINT");
      });
    }
  });
  const cancelled = await child;
  assert.equal(cancelled.exitCode, 130, cancelled.stderr);
  assert.match(cancelled.stderr, /^bprof: cancelled: the run was cancelled; start it again to resume$/m);
  assert.ok(runners.length >= 1, "no shard was running");
  for (const pid of runners) assert.throws(() => process.kill(Number(pid), 0), `runner ${pid} outlived the cancel`);
});

/** SIGKILLs one of the bprof process's shard runners; its shard's index. */
async function killAShard(bprofPid: number): Promise<string> {
  const found = await execa("pgrep", ["-P", String(bprofPid), "-a"], { reject: false });
  for (const line of found.stdout.split("\n")) {
    const match = /^(\d+) .*\/shards\/(\d+)\/job\.json/.exec(line);
    if (!match) continue;
    process.kill(Number(match[1]), "SIGKILL");
    return match[2]!;
  }
  return "";
}

test("the merge refuses a shard folder of another job, naming it", { timeout: 300_000 }, async () => {
  const ours = await runConfig("sharded.bprof.yaml");
  const theirs = await runConfig("other.bprof.yaml");
  const shards = (dir: string) => path.join(dir, "models", "tiny-llama", "shards");
  const of = JSON.parse(await fs.readFile(path.join(shards(ours), "0", "job.json"), "utf8")).shard.of as string;
  const abilities = ["quantitative-reasoning", "spatial-reasoning"];
  const folders = [0, 1, 2].map((i) => path.join(shards(ours), String(i), "runner"));
  const stranger = path.join(shards(theirs), "1", "runner");
  const out = path.join(root, "merged");
  await assert.rejects(
    gatherShards(out, [folders[0]!, stranger, folders[2]!], of, abilities),
    (e: Error) => e instanceof ShardMergeError && e.message.includes(stranger) && /a shard of another job/.test(e.message),
  );
  await assert.rejects(
    gatherShards(out, [folders[1]!, folders[0]!, folders[2]!], of, abilities),
    (e: Error) =>
      e instanceof ShardMergeError && e.message.includes(folders[1]!) && /holds shard 2 of 3, where shard 1 of 3/.test(e.message),
  );
  await fs.rm(path.join(folders[2]!, "shard.json"));
  await assert.rejects(
    gatherShards(out, folders, of, abilities),
    (e: Error) => e instanceof ShardMergeError && e.message.includes(folders[2]!) && /no finished shard/.test(e.message),
  );

  // resuming a run whose shard folder was swapped for another job's: refused before any runner starts
  await fs.rm(path.join(shards(ours), "1"), { recursive: true });
  await fs.cp(path.join(shards(theirs), "1"), path.join(shards(ours), "1"), { recursive: true });
  await fs.rm(path.join(ours, "results.json"));
  const resumed = await bprof(["run", "--resume", ours]);
  assert.notEqual(resumed.exitCode, 0);
  assert.match(resumed.stderr, /shards\/1\/job\.json is not the shard job compiled now/);
});

test(
  "both importance rules in 2 shards: the unsharded run's results and files, each rule's files from its ability's shard",
  { timeout: 300_000 },
  async () => {
    const one = await runConfig("rules-one.bprof.yaml");
    const sharded = await runConfig("rules-sharded.bprof.yaml");
    assert.deepEqual(await resultsOf(sharded), await resultsOf(one));
    const runner = (dir: string) => path.join(dir, "models", "tiny-llama", "runner");
    const files = await filesUnder(runner(sharded));
    assert.deepEqual(files, await filesUnder(runner(one)));
    assert.ok(files.has(path.join("variants", "spatial-reasoning.signed.top.k1.jsonl")), [...files.keys()].join(", "));
    const results = JSON.parse(await fs.readFile(path.join(sharded, "results.json"), "utf8"));
    assert.deepEqual(
      results.models[0].other_methods.map((p: { method: string }) => p.method),
      ["signed"],
    );
  },
);

test(
  "a candidate list with a set of its own rule in 2 shards: the unsharded run's results and files, every set's profile merged",
  { timeout: 300_000 },
  async () => {
    const validated = await bprof(["validate", path.join(root, "sets-sharded.bprof.yaml")]);
    assert.equal(validated.exitCode, 0, validated.stderr + validated.stdout);
    const one = await runConfig("sets-one.bprof.yaml");
    const sharded = await runConfig("sets-sharded.bprof.yaml");
    assert.deepEqual(await resultsOf(sharded), await resultsOf(one));
    const model = (dir: string) => path.join(dir, "models", "tiny-llama");
    const files = await filesUnder(path.join(model(sharded), "runner"));
    assert.deepEqual(files, await filesUnder(path.join(model(one), "runner")));
    assert.deepEqual(await filesUnder(path.join(model(sharded), "variants")), await filesUnder(path.join(model(one), "variants")));
    for (const file of ["items.jsonl", "flips.jsonl"])
      assert.equal(await fs.readFile(path.join(model(sharded), file), "utf8"), await fs.readFile(path.join(model(one), file), "utf8"));
    // the merge kept every ranking: both rules over the MLP, the paper's over all layers
    const results = JSON.parse(await fs.readFile(path.join(sharded, "results.json"), "utf8")) as Results;
    const profiles = profilesOf(results.models[0]!);
    assert.deepEqual(
      profiles.map((p) => `${p.method} ${p.candidate_set ?? "mlp"}`),
      ["signed mlp", "paper mlp", "paper all"],
    );
    // each ability's top sets at each k under every ranking, whichever shard ranked it
    const expected = [QUANT, SPATIAL].flatMap((a) => K.map((k) => `${a} ${k}`)).sort();
    for (const p of profiles)
      assert.deepEqual(
        p.variants
          .filter((v) => v.selection === "top")
          .map((v) => `${v.ability} ${v.k}`)
          .sort(),
        expected,
        `${p.method} ${p.candidate_set ?? "mlp"}`,
      );
  },
);
