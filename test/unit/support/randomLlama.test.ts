import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { writeRandomLlama } from "../../support/randomLlama";
import { readSafetensorsHeader, readTensorF32 } from "../../../src/core/model/safetensors";

function withTmpDir(fn: (dir: string) => void): void {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bprof-random-llama-"));
  try {
    fn(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const FILES = ["config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"];

function fileBytes(dir: string): Buffer[] {
  return FILES.map((f) => fs.readFileSync(path.join(dir, f)));
}

test("same seed gives identical files, another seed different weights", () => {
  withTmpDir((root) => {
    const [a, b, c] = ["a", "b", "c"].map((d) => path.join(root, d)) as [string, string, string];
    writeRandomLlama(a, { seed: 7 });
    writeRandomLlama(b, { seed: 7 });
    writeRandomLlama(c, { seed: 8 });
    assert.deepEqual(fileBytes(a), fileBytes(b));
    assert.notDeepEqual(fileBytes(a)[1], fileBytes(c)[1]);
    assert.deepEqual(fileBytes(a)[0], fileBytes(c)[0]);
    assert.deepEqual(fs.readdirSync(a).sort(), [...FILES].sort());
  });
});

test("config and tensor shapes follow Hugging Face's Llama", () => {
  withTmpDir((dir) => {
    const summary = writeRandomLlama(dir);
    const config = JSON.parse(fs.readFileSync(path.join(dir, "config.json"), "utf8")) as Record<string, unknown>;
    assert.deepEqual(config["architectures"], ["LlamaForCausalLM"]);
    assert.equal(config["model_type"], "llama");
    assert.equal(config["vocab_size"], 258);
    assert.equal(config["head_dim"], 8);
    assert.equal(config["bos_token_id"], 256);
    assert.equal(config["eos_token_id"], 257);
    assert.equal(config["torch_dtype"], "float32");
    assert.equal(config["tie_word_embeddings"], false);

    const [V, H, I, Q, KV] = [258, 32, 64, 32, 16];
    const expected = new Map<string, number[]>([
      ["model.embed_tokens.weight", [V, H]],
      ["model.norm.weight", [H]],
      ["lm_head.weight", [V, H]],
    ]);
    for (const i of [0, 1]) {
      const p = `model.layers.${i}`;
      expected.set(`${p}.input_layernorm.weight`, [H]);
      expected.set(`${p}.self_attn.q_proj.weight`, [Q, H]);
      expected.set(`${p}.self_attn.k_proj.weight`, [KV, H]);
      expected.set(`${p}.self_attn.v_proj.weight`, [KV, H]);
      expected.set(`${p}.self_attn.o_proj.weight`, [H, Q]);
      expected.set(`${p}.post_attention_layernorm.weight`, [H]);
      expected.set(`${p}.mlp.gate_proj.weight`, [I, H]);
      expected.set(`${p}.mlp.up_proj.weight`, [I, H]);
      expected.set(`${p}.mlp.down_proj.weight`, [H, I]);
    }
    const header = readSafetensorsHeader(path.join(dir, "model.safetensors"));
    assert.deepEqual(new Map(header.tensors.map((t) => [t.name, t.shape])), expected);
    assert.ok(header.tensors.every((t) => t.dtype === "F32"));
    assert.deepEqual(header.metadata, { format: "pt" });
    const total = [...expected.values()].reduce((n, s) => n + s.reduce((a, b) => a * b, 1), 0);
    assert.equal(summary.parameters, total);
    assert.equal(summary.mlpParameters, 2 * 3 * I * H);
    assert.equal(summary.tensors, expected.size);
    assert.equal(summary.bytes, fs.statSync(path.join(dir, "model.safetensors")).size);
  });
});

test("weights have the intended scales", () => {
  withTmpDir((dir) => {
    writeRandomLlama(dir);
    const file = path.join(dir, "model.safetensors");
    const stats = (name: string): { mean: number; std: number } => {
      const d = readTensorF32(file, name).data;
      const mean = d.reduce((a, b) => a + b, 0) / d.length;
      const std = Math.sqrt(d.reduce((a, b) => a + (b - mean) ** 2, 0) / d.length);
      return { mean, std };
    };
    const q = stats("model.layers.0.self_attn.q_proj.weight");
    assert.ok(Math.abs(q.mean) < 0.05 && q.std > 0.25 && q.std < 0.35, JSON.stringify(q));
    const normW = stats("model.layers.1.input_layernorm.weight");
    assert.ok(Math.abs(normW.mean - 1) < 0.1 && normW.std > 0.03 && normW.std < 0.2, JSON.stringify(normW));
    const embedA = readTensorF32(file, "model.embed_tokens.weight").data;
    const headA = readTensorF32(file, "lm_head.weight").data;
    assert.notDeepEqual(embedA, headA);
  });
});

test("tied embeddings omit lm_head; BF16 writes bf16 tensors", () => {
  withTmpDir((dir) => {
    const summary = writeRandomLlama(dir, { tieWordEmbeddings: true, dtype: "BF16", numLayers: 1, seed: 3 });
    const header = readSafetensorsHeader(path.join(dir, "model.safetensors"));
    assert.equal(
      header.tensors.some((t) => t.name === "lm_head.weight"),
      false,
    );
    assert.ok(header.tensors.every((t) => t.dtype === "BF16"));
    assert.equal(summary.config.tie_word_embeddings, true);
    assert.equal(summary.config.torch_dtype, "bfloat16");
    assert.equal(summary.config.num_hidden_layers, 1);
  });
});

test("invalid shapes are refused", () => {
  withTmpDir((dir) => {
    assert.throws(() => writeRandomLlama(dir, { numHeads: 4, numKvHeads: 3 }), /multiple of numKvHeads/);
    assert.throws(() => writeRandomLlama(dir, { hiddenSize: 30, numHeads: 4 }), /headDim/);
  });
});

test("a benchmark-sized model is generated quickly", () => {
  withTmpDir((dir) => {
    const start = Date.now();
    const summary = writeRandomLlama(dir, { hiddenSize: 256, intermediateSize: 688, numLayers: 4, numHeads: 4, numKvHeads: 2 });
    assert.ok(summary.parameters > 3_000_000);
    assert.ok(Date.now() - start < 3000, `${Date.now() - start} ms`);
  });
});
