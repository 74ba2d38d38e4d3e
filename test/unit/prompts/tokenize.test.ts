import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { BOS_TOKEN, BOS_TOKEN_ID, byteLevelTokenizer, EOS_TOKEN, EOS_TOKEN_ID } from "../../../scripts/lib/byteTokenizer";
import { generationContext } from "../../../src/core/plan/job";
import { inputTokens, loadTokenizer, tokenizeChoices, tokenizeRequest, type TokenizerOptions } from "../../../src/core/prompts/tokenize";

/** The demo models' byte tokenizer, its post-processor changed by `postProcessor` when given. */
async function byteTokenizer(options: TokenizerOptions = {}, postProcessor?: (json: Record<string, unknown>) => unknown) {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-tok-"));
  const { tokenizerJson, tokenizerConfig } = byteLevelTokenizer();
  if (postProcessor) tokenizerJson.post_processor = postProcessor(tokenizerJson);
  await fs.writeFile(path.join(dir, "tokenizer.json"), JSON.stringify(tokenizerJson));
  await fs.writeFile(path.join(dir, "tokenizer_config.json"), JSON.stringify(tokenizerConfig));
  const tokenizer = await loadTokenizer(dir, options);
  await fs.rm(dir, { recursive: true });
  return tokenizer;
}

const bytes = (s: string) => [...Buffer.from(s, "utf8")];
const BOS = BOS_TOKEN_ID;

test("trailing whitespace of the context moves to the continuation, as lm-eval does", async () => {
  const tokenizer = await byteTokenizer();
  assert.deepEqual(tokenizeRequest(tokenizer, "Answer: ", "yes"), { context: [BOS, ...bytes("Answer:")], continuation: bytes(" yes") });
  assert.deepEqual(tokenizeRequest(tokenizer, "Answer:", " yes"), { context: [BOS, ...bytes("Answer:")], continuation: bytes(" yes") });
});

test("an empty context is the prefix token (BOS); a continuation that starts with it gives its own", async () => {
  const tokenizer = await byteTokenizer();
  assert.deepEqual(tokenizeRequest(tokenizer, "", "hi"), { context: [BOS], continuation: bytes("hi") });
  // lm-eval's _encode_pair: the context "" (its spaces moved) encodes to BOS alone.
  assert.deepEqual(tokenizeRequest(tokenizer, "  ", "hi"), { context: [BOS], continuation: bytes("  hi") });
  assert.deepEqual(tokenizeRequest(tokenizer, "", `${BOS_TOKEN}hi`), { context: [BOS], continuation: bytes("hi") });
});

test("contexts start with the special tokens the tokenizer adds by default (lm-eval 0.4.10+), once", async () => {
  const tokenizer = await byteTokenizer();
  assert.deepEqual(tokenizer.specials, { before: [BOS], after: [], source: "tokenizer" });
  assert.deepEqual(inputTokens(tokenizer, "Q?"), [BOS, ...bytes("Q?")]);
  // A chat template that writes BOS itself: lm-eval's has_bos_prefix adds none.
  assert.deepEqual(inputTokens(tokenizer, `${BOS_TOKEN}Q?`), [BOS, ...bytes("Q?")]);
  assert.deepEqual(tokenizeRequest(tokenizer, `${BOS_TOKEN}Q?\nA:`, " yes"), {
    context: [BOS, ...bytes("Q?\nA:")],
    continuation: bytes(" yes"),
  });
  assert.deepEqual(generationContext(tokenizer, "Q: 2+2?\nA:"), [BOS, ...bytes("Q: 2+2?\nA:")]);
  assert.deepEqual(generationContext(tokenizer, `${BOS_TOKEN}Q:`), [BOS, ...bytes("Q:")]);
});

test("add_bos_token: false adds nothing (lm-eval before 0.4.10); true adds BOS where the tokenizer adds none", async () => {
  const off = await byteTokenizer({ addBosToken: false });
  assert.deepEqual(off.specials, { before: [], after: [], source: "add_bos_token" });
  assert.deepEqual(tokenizeRequest(off, "Answer: ", "yes"), { context: bytes("Answer:"), continuation: bytes(" yes") });
  assert.deepEqual(generationContext(off, "Q:"), bytes("Q:"));
  const qwenLike = await byteTokenizer({}, () => null);
  assert.deepEqual(qwenLike.specials, { before: [], after: [], source: "tokenizer" });
  assert.deepEqual(inputTokens(qwenLike, "Q?"), bytes("Q?"));
  const forced = await byteTokenizer({ addBosToken: true }, () => null);
  assert.deepEqual(forced.specials, { before: [BOS], after: [], source: "add_bos_token" });
  assert.deepEqual(inputTokens(forced, "Q?"), [BOS, ...bytes("Q?")]);
});

test("a tokenizer that also appends EOS: the continuation is what follows the context's tokens, as lm-eval slices it", async () => {
  const bosEos = () => ({
    type: "TemplateProcessing",
    single: [
      { SpecialToken: { id: BOS_TOKEN, type_id: 0 } },
      { Sequence: { id: "A", type_id: 0 } },
      { SpecialToken: { id: EOS_TOKEN, type_id: 0 } },
    ],
    pair: [{ Sequence: { id: "A", type_id: 0 } }, { Sequence: { id: "B", type_id: 1 } }],
    special_tokens: {
      [BOS_TOKEN]: { id: BOS_TOKEN, ids: [BOS_TOKEN_ID], tokens: [BOS_TOKEN] },
      [EOS_TOKEN]: { id: EOS_TOKEN, ids: [EOS_TOKEN_ID], tokens: [EOS_TOKEN] },
    },
  });
  const tokenizer = await byteTokenizer({}, bosEos);
  assert.deepEqual(tokenizer.specials, { before: [BOS], after: [EOS_TOKEN_ID], source: "tokenizer" });
  // lm-eval: whole = BOS "Q: yes" EOS, context = BOS "Q:" EOS, continuation = whole[len(context):]: the
  // space stands where EOS is in the context, so "yes" EOS remains.
  const expected = { context: [BOS, ...bytes("Q:"), EOS_TOKEN_ID], continuation: [...bytes("yes"), EOS_TOKEN_ID] };
  assert.deepEqual(tokenizeRequest(tokenizer, "Q: ", "yes"), expected);
  assert.deepEqual(tokenizeChoices(tokenizer, "Q: ", ["yes"]), [expected]);
});
