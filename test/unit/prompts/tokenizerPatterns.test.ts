// A tokenizer.json's regular expressions run with a time bound: a pattern that backtracks
// catastrophically, in any place the library runs one (a Split pre-tokenizer alone or in a
// Sequence, a Replace normalizer, pre-tokenizer or decoder), stops within seconds with the problem
// at its line and column; patterns that do not get the same ids as the library gives.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { Tokenizer } from "@huggingface/tokenizers";
import { loadTokenizer } from "../../../src/core/prompts/tokenize";
import { TokenizerPatternError } from "../../../src/core/prompts/tokenizerPatterns";
import { byteLevelBpe, LLAMA3_SPLIT, sampleText, seeded, type AddedTokenSpec } from "../../support/bpeTokenizers";

const BYTE_LEVEL = { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: false };
const HOSTILE = "(\\w+\\s?)*$";
/** Ordinary benchmark text: a long run of words and spaces, then punctuation. */
const QUESTION = "Do fish live in water or in trees and do they breathe through gills like the other animals that swim in the sea?";

let scratch: string;
before(async () => {
  scratch = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-patterns-"));
});
after(() => fs.rm(scratch, { recursive: true, force: true }));

const split = (regex: string, more: Record<string, unknown> = {}) => ({
  type: "Split",
  pattern: { Regex: regex },
  behavior: "Isolated",
  invert: false,
  ...more,
});
/** A Replace that puts back what it matches ("$&"), so that only its time tells. */
const replace = (regex: string) => ({ type: "Replace", pattern: { Regex: regex }, content: "$&" });

/** A model folder whose tokenizer.json has these parts; its text, to find the pattern's line in. */
async function modelFolder(
  name: string,
  parts: { preTokenizer?: unknown; normalizer?: unknown; decoder?: unknown; added?: AddedTokenSpec[] },
): Promise<{ dir: string; file: string; text: string }> {
  const files = byteLevelBpe({
    learnOn: "pieces",
    preTokenizer: parts.preTokenizer ?? BYTE_LEVEL,
    ...(parts.normalizer ? { normalizer: parts.normalizer } : {}),
    ...(parts.added ? { added: parts.added } : {}),
  });
  if (parts.decoder) files.tokenizerJson.decoder = parts.decoder;
  const dir = path.join(scratch, name);
  await fs.mkdir(dir, { recursive: true });
  const file = path.join(dir, "tokenizer.json");
  const text = JSON.stringify(files.tokenizerJson, null, 2);
  await fs.writeFile(file, text);
  await fs.writeFile(path.join(dir, "tokenizer_config.json"), JSON.stringify(files.tokenizerConfig));
  return { dir, file, text };
}

/** The 1-based line and column of the first `"Regex": "<regex>"` value in `text`. */
function placeOf(text: string, regex: string): { line: number; column: number } {
  const at = text.indexOf(`"Regex": ${JSON.stringify(regex)}`) + '"Regex": '.length;
  const before = text.slice(0, at);
  return { line: before.split("\n").length, column: at - before.lastIndexOf("\n") };
}

async function assertPatternProblem(run: () => unknown, file: string, text: string): Promise<void> {
  const start = performance.now();
  let caught: unknown;
  try {
    await run();
  } catch (e) {
    caught = e;
  }
  const seconds = (performance.now() - start) / 1000;
  assert.ok(caught instanceof TokenizerPatternError, `a TokenizerPatternError, got ${String(caught)}`);
  const { problem } = caught;
  assert.equal(problem.code, "model.tokenizer-pattern");
  assert.deepEqual({ file: problem.file, line: problem.line, column: problem.column }, { file, ...placeOf(text, HOSTILE) });
  assert.match(problem.message, /ran past its time limit/);
  assert.ok(seconds < 5, `stopped after ${seconds.toFixed(1)} s`);
}

const PLACES: Record<string, Parameters<typeof modelFolder>[1]> = {
  "a Split in a Sequence": { preTokenizer: { type: "Sequence", pretokenizers: [split(HOSTILE), BYTE_LEVEL] } },
  "a Split alone, inverted": { preTokenizer: split(HOSTILE, { invert: true }) },
  "a Split whose matches are removed": { preTokenizer: split(HOSTILE, { behavior: "Removed" }) },
  "a Replace pre-tokenizer before a published Split": {
    preTokenizer: { type: "Sequence", pretokenizers: [replace(HOSTILE), split(LLAMA3_SPLIT), BYTE_LEVEL] },
  },
  "a Replace normalizer": { normalizer: { type: "Sequence", normalizers: [{ type: "NFC" }, replace(HOSTILE)] } },
};

for (const [place, parts] of Object.entries(PLACES)) {
  test(`a catastrophic pattern in ${place} is an error at the pattern within seconds`, async () => {
    const { dir, file, text } = await modelFolder(place.replace(/\W+/g, "-"), parts);
    const tokenizer = await loadTokenizer(dir);
    await assertPatternProblem(() => tokenizer.encode(QUESTION), file, text);
  });
}

test("a catastrophic normalizer pattern that the library runs on the added tokens as it builds stops the load", async () => {
  const { dir, file, text } = await modelFolder("normalized-added", {
    normalizer: replace(HOSTILE),
    added: [
      { content: "<|start|>", special: true },
      { content: QUESTION, special: false, normalized: true },
    ],
  });
  await assertPatternProblem(() => loadTokenizer(dir), file, text);
});

test("a catastrophic Replace decoder stops a decode", async () => {
  const { dir, file, text } = await modelFolder("decoder", {
    decoder: { type: "Sequence", decoders: [BYTE_LEVEL, replace(HOSTILE)] },
  });
  const tokenizer = await loadTokenizer(dir);
  const ids = tokenizer.encode(QUESTION);
  await assertPatternProblem(() => tokenizer.decode(ids), file, text);
});

test("a pattern that is not published but harmless gives the ids the library gives", async () => {
  const regex = `${LLAMA3_SPLIT}|\\u0000`;
  const parts = { preTokenizer: { type: "Sequence", pretokenizers: [split(regex), replace("\\d{5,}"), BYTE_LEVEL] } };
  const { dir, text } = await modelFolder("harmless", parts);
  const files = JSON.parse(text) as object;
  const config = JSON.parse(await fs.readFile(path.join(dir, "tokenizer_config.json"), "utf8")) as Record<string, unknown>;
  const library = new Tokenizer(files, config);
  const tokenizer = await loadTokenizer(dir);
  const random = seeded(3);
  for (let i = 0; i < 50; i++) {
    const sample = sampleText(random, 40) + " 1234567";
    assert.deepEqual(tokenizer.encode(sample), library.encode(sample, { add_special_tokens: false }).ids, sample);
  }
});
