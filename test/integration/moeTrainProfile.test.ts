// A mixture of experts end to end in the runner (issue 36): `bprof-runner train` makes a small
// Mixtral (2 layers, 4 experts, 2 per token) from scratch on two kinds of sequences (sums and copied
// word pairs), and `bprof-runner profile` ranks both rules over it. The candidates are every
// expert's gate/up/down weights and never the router; P and the candidates are the editor's count
// from config.json; each ability's top set draws on several experts and costs the ability's own
// items at least 5 times what the random control of the same size costs them (measured: 9.5 times
// at the least, `paper` at k = 0.03). The label check of the demo, under its first rule `signed`:
// each ability's top set costs its own items more than the other ability's, at both k (measured:
// sums 3.03 against 0.002 nats at k = 0.01, copies 0.010 against -0.025). Under `paper` it is
// printed, not asserted (at k = 0.01 the copies' top set costs the sums more).
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { candidateCount, llamaParameterCount } from "../../src/core/model/parameters";
import { runRunnerJob } from "../support/runnerJob";

const BOS = 256;
const EOS = 257;
const EXPERTS = 4;
const LAYERS = 2;
const CONFIG = {
  model_type: "mixtral",
  vocab_size: 260,
  hidden_size: 64,
  intermediate_size: 64,
  num_hidden_layers: LAYERS,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  num_local_experts: EXPERTS,
  num_experts_per_tok: 2,
  max_position_embeddings: 64,
  rms_norm_eps: 1e-5,
  bos_token_id: BOS,
  eos_token_id: EOS,
};
const TRAIN = { steps: 1000, batch_size: 8, lr: 0.01, min_lr: 0.001, warmup_steps: 20, seed: 1 };
const K = [0.01, 0.03];
const METHODS = ["signed", "paper"] as const;
const WORDS = ["cat", "dog", "sun", "map", "red", "box", "pen", "cup", "hat", "bus"];

const bytes = (text: string) => [...Buffer.from(text, "utf8")];

interface Item {
  id: string;
  context: number[];
  choices: number[][];
}
interface Scored {
  id: string;
  choices: { logprob: number }[];
}

/** Every sum of two digits and every ordered pair of words copied, each from BOS to EOS. */
function trainingSequences(): number[][] {
  const sums = WORDS.flatMap((_, a) => WORDS.map((__, b) => `${a}+${b}=${a + b}`));
  const copies = WORDS.flatMap((w) => WORDS.map((v) => `${w} ${v}: ${w} ${v}`));
  return [...sums, ...copies].map((s) => [BOS, ...bytes(s), EOS]);
}

/** Items of both kinds from the training distribution, the right choice first. */
function items(): Item[] {
  const out: Item[] = [];
  for (let i = 0; i < 12; i++) {
    const a = (3 * i + 1) % 10;
    const b = (7 * i + 4) % 10;
    const choices = [a + b, a + b + 1, a + b - 1].map((n) => [...bytes(String(n)), EOS]);
    out.push({ id: `arith-${i}`, context: [BOS, ...bytes(`${a}+${b}=`)], choices });
  }
  for (let i = 0; i < 12; i++) {
    const w = WORDS[i % 10]!;
    const v = WORDS[(i * 3 + 1) % 10]!;
    const choices = [`${w} ${v}`, `${v} ${w}`, `${w} ${w}`].map((s) => [...bytes(s), EOS]);
    out.push({ id: `copy-${i}`, context: [BOS, ...bytes(`${w} ${v}: `)], choices });
  }
  return out;
}

async function scores(file: string): Promise<Map<string, Scored>> {
  const lines = (await fs.readFile(file, "utf8")).trim().split("\n");
  return new Map(lines.map((l) => JSON.parse(l) as Scored).map((s) => [s.id, s]));
}

/** The mean log-likelihood of the right choices of an ability's items. */
function meanRight(scored: Map<string, Scored>, ability: string): number {
  const own = [...scored.values()].filter((s) => s.id.startsWith(`${ability}-`));
  return own.reduce((a, s) => a + s.choices[0]!.logprob, 0) / own.length;
}

/** The share of an ability's items whose right choice scores highest. */
function accuracy(scored: Map<string, Scored>, ability: string): number {
  const own = [...scored.values()].filter((s) => s.id.startsWith(`${ability}-`));
  return own.filter((s) => s.choices.every((c) => c.logprob <= s.choices[0]!.logprob)).length / own.length;
}

test(
  "bprof-runner trains a Mixtral from scratch and profiles it with both rules over every expert's weights",
  { timeout: 600_000 },
  async (t) => {
    const scratch = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-moe-"));
    t.after(() => fs.rm(scratch, { recursive: true, force: true }));
    const model = path.join(scratch, "model");
    await runRunnerJob("train", { config: CONFIG, sequences: trainingSequences(), train: TRAIN }, model);
    const trained = JSON.parse(await fs.readFile(path.join(model, "train.json"), "utf8")) as { parameters: number; loss: number[] };
    const last = trained.loss.slice(-20).reduce((a, v) => a + v, 0) / 20;
    assert.ok(last < 0.3 * trained.loss[0]!, `training through the experts lowers the loss: ${trained.loss[0]} -> ${last}`);

    const all = items();
    const sequencesOf = (ability: string) =>
      all.filter((it) => it.id.startsWith(`${ability}-`)).map((it) => [...it.context, ...it.choices[0]!]);
    const abilities = ["arith", "copy"].map((id) => ({ id, sequences: sequencesOf(id) }));
    const out = path.join(scratch, "profile");
    const ablation = { k: K, selections: ["top", "random"], method: METHODS, batch_size: 4, seed: 1 };
    await runRunnerJob("profile", { model: { path: model, dtype: "float32" }, items: all, abilities, ablation }, out);

    const manifest = JSON.parse(await fs.readFile(path.join(out, "profile.json"), "utf8")) as {
      parameters: number;
      candidates: { total: number; tensors: { name: string; numel: number; offset: number }[] };
    };
    const counted = llamaParameterCount(CONFIG)!;
    assert.equal(manifest.parameters, trained.parameters, "P as train counts it");
    assert.equal(counted.total, manifest.parameters, "P from config.json, the routers included");
    assert.equal(candidateCount(counted), manifest.candidates.total, "the candidates from config.json");
    const expected = Array.from({ length: LAYERS }, (_, l) =>
      Array.from({ length: EXPERTS }, (__, e) =>
        ["w1", "w3", "w2"].map((w) => `model.layers.${l}.block_sparse_moe.experts.${e}.${w}.weight`),
      ),
    ).flat(2);
    assert.deepEqual(
      manifest.candidates.tensors.map((c) => c.name),
      expected,
      "every expert's gate, up and down, expert by expert; no router",
    );

    const baseline = await scores(path.join(out, "baseline.jsonl"));
    assert.ok(accuracy(baseline, "copy") >= 0.9, `the trained model copies: accuracy ${accuracy(baseline, "copy")}`);
    const expertOf = (index: number) => {
      const tensor = manifest.candidates.tensors.filter((c) => c.offset <= index).at(-1)!;
      return tensor.name.replace(/\.w[123]\.weight$/, "");
    };
    const labelCheck: string[] = [];
    const ratios: string[] = [];
    for (const [i, k] of K.entries()) {
      const random = await scores(path.join(out, "variants", `random.k${i}.jsonl`));
      for (const method of METHODS) {
        const costs: Record<string, Record<string, number>> = {};
        for (const ability of ["arith", "copy"]) {
          const ranking = await fs.readFile(path.join(out, "rankings", `${ability}.${method}.top.bin`));
          const n = Math.floor(k * manifest.parameters);
          const top = Array.from(new BigInt64Array(ranking.buffer.slice(ranking.byteOffset, ranking.byteOffset + 8 * n)), Number);
          const experts = new Set(top.map(expertOf));
          assert.ok(experts.size >= 2, `${ability} ${method} k=${k}: the top ${n} lie in ${experts.size} expert(s)`);
          const variant = await scores(path.join(out, "variants", `${ability}.${method}.top.k${i}.jsonl`));
          const cost = meanRight(baseline, ability) - meanRight(variant, ability);
          const randomCost = meanRight(baseline, ability) - meanRight(random, ability);
          assert.ok(
            cost > 0 && cost > 5 * Math.abs(randomCost),
            `${ability} ${method} k=${k}: its top set costs its items ${cost.toFixed(4)} nats, the random control ${randomCost.toFixed(4)}`,
          );
          ratios.push(`${ability} ${method} k=${k}: ${cost.toFixed(3)} vs random ${randomCost.toFixed(3)}`);
          costs[ability] = {
            arith: meanRight(baseline, "arith") - meanRight(variant, "arith"),
            copy: meanRight(baseline, "copy") - meanRight(variant, "copy"),
          };
        }
        if (method === "signed")
          for (const [own, other] of [
            ["arith", "copy"],
            ["copy", "arith"],
          ] as const)
            assert.ok(
              costs[own]![own]! > costs[own]![other]!,
              `k=${k} signed: ${own}'s top set costs ${own} ${costs[own]![own]} nats, ${other} ${costs[own]![other]}`,
            );
        labelCheck.push(
          `k=${k} ${method}: arith's top set costs arith ${costs["arith"]!["arith"]!.toFixed(3)}, copy ${costs["arith"]!["copy"]!.toFixed(3)}; ` +
            `copy's costs copy ${costs["copy"]!["copy"]!.toFixed(3)}, arith ${costs["copy"]!["arith"]!.toFixed(3)}`,
        );
      }
    }
    t.diagnostic(
      `loss ${trained.loss[0]!.toFixed(3)} -> ${last.toFixed(3)}; baseline accuracy arith ${accuracy(baseline, "arith")}, copy ${accuracy(baseline, "copy")}`,
    );
    t.diagnostic(`an ability's top set against the random control, the cost to its own items (nats): ${ratios.join("; ")}`);
    for (const line of labelCheck) t.diagnostic(line);
  },
);
