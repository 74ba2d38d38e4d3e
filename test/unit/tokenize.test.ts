import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { byteLevelTokenizer } from "../../scripts/lib/byteTokenizer";
import { loadTokenizer, tokenizeRequest } from "../../src/core/prompts/tokenize";

async function byteTokenizer() {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-tok-"));
  const { tokenizerJson, tokenizerConfig } = byteLevelTokenizer();
  await fs.writeFile(path.join(dir, "tokenizer.json"), JSON.stringify(tokenizerJson));
  await fs.writeFile(path.join(dir, "tokenizer_config.json"), JSON.stringify(tokenizerConfig));
  const tokenizer = await loadTokenizer(dir);
  await fs.rm(dir, { recursive: true });
  return tokenizer;
}

const bytes = (s: string) => [...Buffer.from(s, "utf8")];

test("trailing whitespace of the context moves to the continuation, as lm-eval does", async () => {
  const tokenizer = await byteTokenizer();
  assert.deepEqual(tokenizeRequest(tokenizer, "Answer: ", "yes"), { context: bytes("Answer:"), continuation: bytes(" yes") });
  assert.deepEqual(tokenizeRequest(tokenizer, "Answer:", " yes"), { context: bytes("Answer:"), continuation: bytes(" yes") });
});

test("an empty context is the prefix token (BOS)", async () => {
  const tokenizer = await byteTokenizer();
  assert.deepEqual(tokenizeRequest(tokenizer, "", "hi"), { context: [256], continuation: bytes("hi") });
  assert.deepEqual(tokenizeRequest(tokenizer, "  ", "hi"), { context: [256], continuation: bytes("  hi") });
});
