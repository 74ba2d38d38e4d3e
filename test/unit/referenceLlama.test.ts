import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { writeRandomLlama } from "../support/randomLlama";
import { readSafetensorsHeader, readTensorF32 } from "../../src/core/model/safetensors";
import { writeSafetensors } from "../support/safetensorsWriter";
import { logSoftmax, referenceChoiceLogprob, referenceLogits } from "../support/referenceLlama";

function withModel(options: Parameters<typeof writeRandomLlama>[1], fn: (dir: string) => void): void {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bprof-reference-"));
  try {
    writeRandomLlama(dir, options);
    fn(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const TOKENS = [256, ...Buffer.from("The cat sat on the mat.")];

test("logits of a prefix do not change when tokens are appended (causality)", () => {
  withModel({}, (dir) => {
    const full = referenceLogits(dir, TOKENS);
    const prefix = referenceLogits(dir, TOKENS.slice(0, 9));
    assert.equal(full.length, TOKENS.length);
    assert.equal(full[0]!.length, 258);
    prefix.forEach((row, t) => row.forEach((v, i) => assert.ok(Math.abs(v - full[t]![i]!) < 1e-12)));
  });
});

test("log-softmax rows are normalised and the model is far from uniform", () => {
  withModel({ tieWordEmbeddings: true }, (dir) => {
    const logits = referenceLogits(dir, TOKENS);
    let entropy = 0;
    for (const row of logits) {
      const lp = logSoftmax(row);
      assert.ok(Math.abs(lp.reduce((a, v) => a + Math.exp(v), 0) - 1) < 1e-12);
      entropy -= lp.reduce((a, v) => a + Math.exp(v) * v, 0) / logits.length;
    }
    assert.ok(entropy < Math.log(258) - 1, `mean entropy ${entropy}`);
    // Different contexts give different predictions.
    const argmaxes = new Set(logits.map((r) => r.indexOf(Math.max(...r))));
    assert.ok(argmaxes.size > 3);
  });
});

test("grouped-query attention equals full attention with each kv head repeated for its group", () => {
  withModel({ numHeads: 4, numKvHeads: 2 }, (dir) => {
    // Hugging Face's repeat_kv: kv head j serves query heads j*g .. j*g+g-1 (g = heads / kv).
    const mha = `${dir}-mha`;
    fs.mkdirSync(mha);
    try {
      const weights = path.join(dir, "model.safetensors");
      const tensors = readSafetensorsHeader(weights).tensors.map((t) => {
        const data = readTensorF32(weights, t.name).data;
        if (!/\.self_attn\.[kv]_proj\.weight$/.test(t.name)) return { name: t.name, dtype: "F32" as const, shape: t.shape, data };
        const rowsPerHead = 8 * 32; // head_dim x hidden
        const repeated = new Float32Array(data.length * 2);
        for (let h = 0; h < 4; h++)
          repeated.set(data.subarray(Math.floor(h / 2) * rowsPerHead, (Math.floor(h / 2) + 1) * rowsPerHead), h * rowsPerHead);
        return { name: t.name, dtype: "F32" as const, shape: [t.shape[0]! * 2, t.shape[1]!], data: repeated };
      });
      writeSafetensors(path.join(mha, "model.safetensors"), tensors);
      const config = JSON.parse(fs.readFileSync(path.join(dir, "config.json"), "utf8")) as Record<string, unknown>;
      fs.writeFileSync(path.join(mha, "config.json"), JSON.stringify({ ...config, num_key_value_heads: 4 }));
      const grouped = referenceLogits(dir, TOKENS);
      const full = referenceLogits(mha, TOKENS);
      grouped.forEach((row, t) => row.forEach((v, i) => assert.ok(Math.abs(v - full[t]![i]!) < 1e-9)));
    } finally {
      fs.rmSync(mha, { recursive: true, force: true });
    }
  });
});

test("choice logprob follows the scoring rule", () => {
  withModel({ numKvHeads: 1 }, (dir) => {
    const context = [256, ...Buffer.from("Q: 1+1? A:")];
    const continuation = [...Buffer.from(" 2")];
    const input = [...context, ...continuation];
    const logits = referenceLogits(dir, input);
    const expected = continuation.reduce((sum, tok, j) => sum + logSoftmax(logits[context.length - 1 + j]!)[tok]!, 0);
    const { logprob, greedy } = referenceChoiceLogprob(dir, context, continuation);
    assert.ok(Math.abs(logprob - expected) < 1e-12);
    assert.ok(logprob < 0);
    assert.equal(greedy, false);

    // Continuing with the argmax token is greedy by definition.
    const last = logits[context.length - 1]!;
    const best = last.indexOf(Math.max(...last));
    const greedyChoice = referenceChoiceLogprob(dir, context, [best]);
    assert.equal(greedyChoice.greedy, true);
    assert.ok(Math.abs(greedyChoice.logprob - logSoftmax(last)[best]!) < 1e-12);
    assert.throws(() => referenceChoiceLogprob(dir, [], [1]), /context/);
    assert.throws(() => referenceChoiceLogprob(dir, [1], []), /continuation/);
  });
});
