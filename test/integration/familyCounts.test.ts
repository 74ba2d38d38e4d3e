// The editor's parameter count from config.json (src/core/model/parameters.ts) against the runner's
// family table, over the switches each family reads: for every config below the real runner makes a
// checkpoint (`train` with 0 steps, its tensors those of the table) and `info` counts it; P and the
// MLP candidates must be the runner's. The transformers parity test checks one config per family
// against transformers itself; this one covers the defaults and switches between them without
// Python. A model_type the runner refuses is one the editor does not count.
import assert from "node:assert/strict";
import { execa } from "execa";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { candidateCount, llamaParameterCount } from "../../src/core/model/parameters";
import { runnerPath } from "../support/cli";

const BASE = {
  vocab_size: 64,
  hidden_size: 32,
  intermediate_size: 48,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  rms_norm_eps: 1e-5,
  max_position_embeddings: 64,
  hidden_act: "silu",
};
const GEMMA = { ...BASE, hidden_act: undefined };

/** [what, config.json]: each family's defaults, and its switches turned the other way. */
const CONFIGS: [string, Record<string, unknown>][] = [
  ["llama", { ...BASE, model_type: "llama" }],
  ["llama, biases, tied", { ...BASE, model_type: "llama", attention_bias: true, mlp_bias: true, tie_word_embeddings: true }],
  ["mistral", { ...BASE, model_type: "mistral" }],
  ["mistral, tied, head_dim 16", { ...BASE, model_type: "mistral", tie_word_embeddings: true, head_dim: 16 }],
  ["qwen2", { ...BASE, model_type: "qwen2" }],
  ["qwen2, attention_bias ignored", { ...BASE, model_type: "qwen2", attention_bias: true }],
  ["qwen3, head_dim default", { ...BASE, model_type: "qwen3" }],
  ["qwen3, biases, head_dim 16", { ...BASE, model_type: "qwen3", attention_bias: true, head_dim: 16 }],
  ["granite, biases", { ...BASE, model_type: "granite", attention_bias: true, mlp_bias: true, embedding_multiplier: 12 }],
  ["olmo2", { ...BASE, model_type: "olmo2" }],
  ["olmo2, attention_bias", { ...BASE, model_type: "olmo2", attention_bias: true }],
  ["phi3", { ...BASE, model_type: "phi3" }],
  ["gemma2, defaults (tied, head_dim 256, 4 kv heads)", { ...GEMMA, model_type: "gemma2", num_key_value_heads: undefined }],
  ["gemma2, untied, attention_bias", { ...GEMMA, model_type: "gemma2", tie_word_embeddings: false, attention_bias: true, head_dim: 8 }],
  ["gemma3_text, defaults", { ...GEMMA, model_type: "gemma3_text" }],
  ["gemma3_text, untied, head_dim 8", { ...GEMMA, model_type: "gemma3_text", tie_word_embeddings: false, head_dim: 8 }],
  ["mixtral, defaults (8 experts, 8 kv heads)", { ...BASE, model_type: "mixtral", num_attention_heads: 8, num_key_value_heads: undefined }],
  ["mixtral, 3 experts as num_experts, tied", { ...BASE, model_type: "mixtral", num_experts: 3, tie_word_embeddings: true }],
  ["qwen3_moe, 4 experts of 16", { ...BASE, model_type: "qwen3_moe", num_experts: 4, num_experts_per_tok: 2, moe_intermediate_size: 16 }],
  [
    "qwen3_moe, num_local_experts (save_pretrained's name), biases, head_dim 16",
    {
      ...BASE,
      model_type: "qwen3_moe",
      num_local_experts: 3,
      num_experts_per_tok: 1,
      moe_intermediate_size: 8,
      attention_bias: true,
      head_dim: 16,
    },
  ],
];

async function runner(subcommand: "train" | "info", job: object, out: string): Promise<void> {
  const jobFile = `${out}.job.json`;
  await fs.writeFile(jobFile, JSON.stringify({ protocol: 1, subcommand, device: "cpu", ...job }));
  const run = await execa(runnerPath, [subcommand, "--job", jobFile, "--out", out], { reject: false, timeout: 120_000 });
  assert.equal(run.exitCode, 0, `bprof-runner ${subcommand}: ${run.stdout.trim().split("\n").at(-1)}\n${run.stderr}`);
}

test("the parameter count from config.json is the runner's family table's, switch by switch", { timeout: 300_000 }, async (t) => {
  const scratch = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-family-counts-"));
  t.after(() => fs.rm(scratch, { recursive: true, force: true }));
  for (const [i, [what, raw]] of CONFIGS.entries()) {
    const config = JSON.parse(JSON.stringify(raw)) as Record<string, unknown>; // undefined fields dropped, as config.json lacks them
    const model = path.join(scratch, `model-${i}`);
    const train = { steps: 0, batch_size: 1, lr: 1e-3, min_lr: 1e-4, warmup_steps: 0, seed: 1 };
    await runner("train", { config, sequences: [[1, 2, 3, 4]], train }, model);
    const infoDir = path.join(scratch, `info-${i}`);
    await runner("info", { model: { path: model } }, infoDir);
    const info = JSON.parse(await fs.readFile(path.join(infoDir, "info.json"), "utf8")) as { parameters: number; mlp_parameters: number };
    const counted = llamaParameterCount(config);
    assert.ok(counted, `${what}: counted`);
    assert.equal(counted.total, info.parameters, `${what}: P`);
    assert.equal(candidateCount(counted), info.mlp_parameters, `${what}: the MLP candidates`);
  }
  // a model_type the runner refuses (naming its table's types) is not counted
  const refused = path.join(scratch, "refused");
  const bad = { ...BASE, model_type: "gpt_neox" };
  await fs.writeFile(`${refused}.job.json`, JSON.stringify({ protocol: 1, subcommand: "train", device: "cpu", config: bad }));
  const run = await execa(runnerPath, ["train", "--job", `${refused}.job.json`, "--out", refused], { reject: false });
  assert.notEqual(run.exitCode, 0);
  assert.match(run.stdout, /gpt_neox.*supported: llama, mistral/);
  assert.equal(llamaParameterCount(bad), undefined);
});
