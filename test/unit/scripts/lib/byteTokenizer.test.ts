import { test } from "node:test";
import assert from "node:assert/strict";
import { Tokenizer } from "@huggingface/tokenizers";
import { BOS_TOKEN_ID, EOS_TOKEN_ID, byteLevelTokenizer, bytesToUnicode } from "../../../../scripts/lib/byteTokenizer";

function loadTokenizer(): Tokenizer {
  const { tokenizerJson, tokenizerConfig } = byteLevelTokenizer();
  return new Tokenizer(tokenizerJson, tokenizerConfig);
}

const TEXTS = ["Hé llo\n", " a  b , . ?'s don't \t\r\n x", "日本語 🙂", "\u0000\u007f\u00ff", ""];

test("bytes_to_unicode matches GPT-2's table", () => {
  const table = bytesToUnicode();
  assert.equal(table.length, 256);
  assert.equal(new Set(table).size, 256);
  assert.equal(table[0x21], "!");
  assert.equal(table[0x20], "\u0120"); // GPT-2's "Ġ"
  assert.equal(table[0x0a], "\u010a"); // "Ċ"
  assert.equal(table[0x00], "\u0100");
  assert.equal(table[0xad], "\u0143");
  assert.equal(table[0xff], "\u00ff");
});

test("without special tokens every UTF-8 byte is one token, id = byte value", () => {
  const tokenizer = loadTokenizer();
  for (const text of TEXTS) {
    const ids = tokenizer.encode(text, { add_special_tokens: false }).ids;
    assert.deepEqual(ids, [...Buffer.from(text, "utf8")], JSON.stringify(text));
    // The library refuses to decode an empty id list, so the empty text only checks encoding.
    if (ids.length > 0) assert.equal(tokenizer.decode(ids), text);
  }
});

test("with special tokens BOS is prepended and skipped on decode", () => {
  const tokenizer = loadTokenizer();
  const text = "Hé llo\n";
  const ids = tokenizer.encode(text, { add_special_tokens: true }).ids;
  assert.deepEqual(ids, [BOS_TOKEN_ID, ...Buffer.from(text, "utf8")]);
  assert.equal(tokenizer.decode(ids, { skip_special_tokens: true }), text);
  assert.equal(tokenizer.decode(ids), `<|begin_of_text|>${text}`);
});

test("special token ids and vocabulary size", () => {
  const tokenizer = loadTokenizer();
  assert.equal(tokenizer.token_to_id("<|begin_of_text|>"), BOS_TOKEN_ID);
  assert.equal(tokenizer.token_to_id("<|end_of_text|>"), EOS_TOKEN_ID);
  assert.equal(tokenizer.get_vocab(true).size, 258);
  assert.deepEqual(tokenizer.encode("x<|end_of_text|>", { add_special_tokens: false }).ids, [0x78, EOS_TOKEN_ID]);
});
