// Row 6: one profile in 2 local shards against 1 runner, the threads split evenly, through the
// code `bprof run` uses (src/core/launch/shards.ts): its wall time, and the merge's own (from the
// last shard's end to the merge's), which should be a runner start and the files read back: the
// merge loads no weight.
import * as fs from "node:fs";
import * as path from "node:path";
import { performance } from "node:perf_hooks";
import { runLocal } from "../../src/core/launch/local";
import { runShardsLocally } from "../../src/core/launch/shards";
import { ConfinedFolder } from "../../src/core/base/confinedFolder";
import type { ProfileJob } from "../../src/core/plan/job";
import type { ShardsResult } from "./format";
import { runRunner } from "./runner";

export interface ShardsSizes {
  hidden: number;
  layers: number;
  abilities: number;
  sequences: number;
  length: number;
  items: number;
  context: number;
}

const VOCAB = 512;

/** A deterministic token stream: the same job every bench. */
function tokens(count: number, salt: number): number[] {
  return Array.from({ length: count }, (_, t) => 1 + ((t * 7919 + salt * 104729) % (VOCAB - 1)));
}

export async function benchShards(runner: string, sizes: ShardsSizes, dir: string, threads: number): Promise<ShardsResult> {
  // a random-weight model of the runner's own making (`train` with 0 steps)
  await runRunner(
    runner,
    {
      protocol: 1,
      subcommand: "train",
      config: {
        model_type: "llama",
        vocab_size: VOCAB,
        hidden_size: sizes.hidden,
        intermediate_size: 4 * sizes.hidden,
        num_hidden_layers: sizes.layers,
        num_attention_heads: 4,
        num_key_value_heads: 2,
        tie_word_embeddings: false,
      },
      device: "cpu",
      sequences: [tokens(4, 0)],
      train: { steps: 0, batch_size: 1, lr: 0.01, warmup_steps: 0, seed: 1 },
    },
    path.join(dir, "model"),
    threads,
  );
  const job: ProfileJob = {
    protocol: 1,
    subcommand: "profile",
    model: { path: path.join(dir, "model", "out"), dtype: "float32" },
    device: "cpu",
    items: Array.from({ length: sizes.items }, (_, i) => ({
      id: `b/${i}`,
      context: tokens(sizes.context, 1000 + i),
      choices: [tokens(3, 2000 + i), tokens(5, 3000 + i), tokens(4, 4000 + i), tokens(2, 5000 + i)],
    })),
    abilities: Array.from({ length: sizes.abilities }, (_, a) => ({
      id: `ability-${a}`,
      sequences: Array.from({ length: sizes.sequences }, (_, s) => tokens(sizes.length, 100 * a + s)),
    })),
    ablation: {
      k: [0.001, 0.01],
      selections: ["top", "random"],
      method: "paper",
      front_removal: 0,
      back_removal: 0,
      batch_size: 8,
      seed: 1,
    },
  };
  const jobText = JSON.stringify(job, null, 2) + "\n";

  const oneDir = path.join(dir, "one");
  fs.mkdirSync(oneDir, { recursive: true });
  fs.writeFileSync(path.join(oneDir, "job.json"), jobText);
  let t0 = performance.now();
  await runLocal({
    runnerPath: runner,
    subcommand: "profile",
    jobFile: path.join(oneDir, "job.json"),
    outDir: path.join(oneDir, "runner"),
    threads,
  });
  const oneSeconds = (performance.now() - t0) / 1000;

  const shardedDir = path.join(dir, "sharded");
  fs.mkdirSync(shardedDir, { recursive: true });
  fs.writeFileSync(path.join(shardedDir, "job.json"), jobText);
  let lastShardEnd = 0;
  t0 = performance.now();
  await runShardsLocally({
    runnerPath: runner,
    files: await ConfinedFolder.at(shardedDir, "the bench's folder"),
    job,
    jobText,
    modelDir: shardedDir,
    setting: { count: 2 },
    threads,
    resume: false,
    onEvent: (event, shard) => {
      if (shard !== undefined && event.type === "summary") lastShardEnd = performance.now();
    },
  });
  const end = performance.now();
  const same =
    fs.readFileSync(path.join(oneDir, "runner", "profile.json"), "utf8") ===
    fs.readFileSync(path.join(shardedDir, "runner", "profile.json"), "utf8");
  return {
    threads,
    shards: 2,
    abilities: sizes.abilities,
    items: sizes.items,
    one_seconds: oneSeconds,
    sharded_seconds: (end - t0) / 1000,
    merge_seconds: (end - lastShardEnd) / 1000,
    same_manifest: same,
  };
}
