// The fast tokenization path (prompts/pieceEncoder.ts, tokenizeChoices) against the
// straightforward one (@huggingface/tokenizers' encode, lm-eval's _encode_pair per choice), token
// for token, on tokenizers of every pipeline shape it handles or leaves alone and on random text
// heavy with the cases that break naive splitting: trailing and leading spaces, newlines,
// unicode (combining marks, emoji, lone surrogates), added tokens whole and in part.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { Tokenizer } from "@huggingface/tokenizers";
import { byteLevelTokenizer } from "../../../scripts/lib/byteTokenizer";
import { pieceEncoder } from "../../../src/core/prompts/pieceEncoder";
import { loadTokenizer, tokenizeChoices, tokenizeRequest, type ModelTokenizer } from "../../../src/core/prompts/tokenize";
import { byteLevelBpe, LLAMA3_SPLIT, rawCharBpe, sampleText, seeded, type TokenizerFiles } from "../../support/bpeTokenizers";

const BYTE_LEVEL = { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: false };
const LLAMA3_PRE = {
  type: "Sequence",
  pretokenizers: [{ type: "Split", pattern: { Regex: LLAMA3_SPLIT }, behavior: "Isolated", invert: false }, BYTE_LEVEL],
};
// "<|start|>" is a prefix of "<|start|>user": the longer one wins where both match.
const LLAMA3_ADDED = ["<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>", "<|start|>", "<|start|>user"].map(
  (content) => ({ content }),
);

interface Case {
  files: TokenizerFiles;
  /** pieceEncoder's mode, or undefined where the library is left to do it all. */
  mode: "pieces" | "chunks" | undefined;
  /** Added tokens that strip spaces: texts holding them go to the library. */
  stripping?: string;
}

const CASES: Record<string, () => Case> = {
  "the demo models' byte level (chunks, no merges)": () => ({ files: byteLevelTokenizer(), mode: "chunks" }),
  "byte-level BPE over whole lines (chunks, merges across words)": () => ({
    files: byteLevelBpe({ learnOn: "lines", preTokenizer: BYTE_LEVEL }),
    mode: "chunks",
  }),
  "raw characters and an unknown token (chunks)": () => ({ files: rawCharBpe({ byteFallback: false }), mode: "chunks" }),
  "raw characters and byte fallback (chunks)": () => ({ files: rawCharBpe({ byteFallback: true }), mode: "chunks" }),
  "GPT-2: ByteLevel with its regex (pieces)": () => ({
    files: byteLevelBpe({ learnOn: "pieces", preTokenizer: { ...BYTE_LEVEL, use_regex: true } }),
    mode: "pieces",
  }),
  "Llama 3: Split then ByteLevel, ignore_merges, special tokens (pieces)": () => ({
    files: byteLevelBpe({ learnOn: "pieces", preTokenizer: LLAMA3_PRE, ignoreMerges: true, added: LLAMA3_ADDED }),
    mode: "pieces",
  }),
  "Qwen-like: NFC normalizer, Split, ByteLevel (pieces)": () => ({
    files: byteLevelBpe({ learnOn: "pieces", preTokenizer: LLAMA3_PRE, normalizer: { type: "NFC" }, added: LLAMA3_ADDED }),
    mode: "pieces",
  }),
  // A normalized section that reads as an added token is that token ("<|EOT_ID|>" lowercased).
  "Lowercase normalizer, Split, ByteLevel (pieces)": () => ({
    files: byteLevelBpe({ learnOn: "pieces", preTokenizer: LLAMA3_PRE, normalizer: { type: "Lowercase" }, added: LLAMA3_ADDED }),
    mode: "pieces",
  }),
  "an added token that strips the space before it (pieces, its texts to the library)": () => ({
    files: byteLevelBpe({
      learnOn: "pieces",
      preTokenizer: { ...BYTE_LEVEL, use_regex: true },
      added: [{ content: "<|endoftext|>" }, { content: "<mask>", lstrip: true }],
    }),
    mode: "pieces",
    stripping: "<mask>",
  }),
  "Metaspace (left to the library)": () => ({
    files: byteLevelBpe({
      learnOn: "pieces",
      preTokenizer: { type: "Metaspace", replacement: "\u2581", prepend_scheme: "first", split: true },
    }),
    mode: undefined,
  }),
  "a byte-level BPE over the whole text with ignore_merges (left to the library)": () => ({
    files: byteLevelBpe({ learnOn: "lines", preTokenizer: BYTE_LEVEL, ignoreMerges: true }),
    mode: undefined,
  }),
  "a byte-level BPE with a normalizer over the whole text (left to the library)": () => ({
    files: byteLevelBpe({ learnOn: "lines", preTokenizer: BYTE_LEVEL, normalizer: { type: "Lowercase" } }),
    mode: undefined,
  }),
};

const FRAGMENTS = [
  " ",
  "  ",
  "   ",
  "\n",
  "\n\n",
  "\r\n",
  "\t",
  " \n",
  "\u00a0",
  "\u3000",
  ":",
  "?",
  "'s",
  "'",
  "...",
  "12345",
  "3.14",
  "e\u0301",
  "\u0301",
  "caf\u00e9",
  "\ud83d\ude42",
  "\ud83d",
  "\ude42",
  "\ud83d\udc4d\ud83c\udffd",
  "\u65e5\u672c",
  "<",
  "<|",
  "<|eot",
  "|>",
  "<|endoftext|>",
  "<|eot_id|>",
  "<|EOT_ID|>",
  "<|begin_of_text|>",
  "<|start|>",
  "<|start|>user",
  "<|start|>use",
  "<mask>",
  "<s>",
  "</s>",
  "Question:",
  "Answer:",
  " yes",
  " no",
];

function randomText(random: () => number, maxFragments: number): string {
  let text = "";
  const n = Math.floor(random() * (maxFragments + 1));
  for (let i = 0; i < n; i++)
    text += random() < 0.5 ? sampleText(random, 1 + Math.floor(random() * 3)) : FRAGMENTS[Math.floor(random() * FRAGMENTS.length)]!;
  return text;
}

async function load(files: TokenizerFiles): Promise<{ fast: ModelTokenizer; reference: ModelTokenizer; library: Tokenizer }> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-fasttok-"));
  try {
    await fs.writeFile(path.join(dir, "tokenizer.json"), JSON.stringify(files.tokenizerJson));
    await fs.writeFile(path.join(dir, "tokenizer_config.json"), JSON.stringify(files.tokenizerConfig));
    const fast = await loadTokenizer(dir);
    const library = new Tokenizer(files.tokenizerJson, files.tokenizerConfig);
    const reference: ModelTokenizer = { ...fast, encode: (text) => library.encode(text, { add_special_tokens: false }).ids };
    delete reference.stablePrefix;
    return { fast, reference, library };
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

for (const [name, makeCase] of Object.entries(CASES)) {
  test(`fast tokenization = the library's, ${name}`, async () => {
    const { files, mode, stripping } = makeCase();
    const { fast, reference, library } = await load(files);
    const random = seeded(name.length * 7919);
    const plain = (text: string) => library.encode(text, { add_special_tokens: false }).ids;

    // The pipeline is recognised as expected, and texts go to the library only where they must.
    let fallbacks = 0;
    const encoder = pieceEncoder(
      files.tokenizerJson,
      files.tokenizerConfig,
      library,
      (text) => (fallbacks++, plain(text)),
      (c) => c,
    );
    assert.equal(encoder?.mode, mode);
    const texts = [
      "",
      " ",
      "a",
      "\n",
      "\ud83d",
      "hello world",
      "  leading",
      "trailing  ",
      ...FRAGMENTS,
      ...Array.from({ length: 300 }, () => randomText(random, 30)),
    ];
    for (const text of texts) {
      assert.deepEqual(fast.encode(text), plain(text), JSON.stringify(text));
      if (encoder) assert.deepEqual(encoder.encode(text), plain(text), JSON.stringify(text));
    }
    const mustFallBack = texts.filter((t) => stripping !== undefined && t.includes(stripping)).length;
    assert.equal(fallbacks, encoder ? mustFallBack : 0);

    // stablePrefix's promise, checked on the library itself: nothing after the prefix changes its tokens.
    let reused = 0;
    for (let i = 0; i < 200; i++) {
      const text = randomText(random, 20);
      const p = fast.stablePrefix?.(text) ?? 0;
      assert.ok(p === 0 || (p > 0 && p < text.length), `stablePrefix ${p} of ${JSON.stringify(text)}`);
      if (p === 0) continue;
      reused++;
      const head = text.slice(0, p);
      for (const y of [text.slice(p), text.slice(p) + randomText(random, 5), text.slice(p) + " " + randomText(random, 3)]) {
        assert.deepEqual(plain(head + y), [...plain(head), ...plain(y)], `cut ${p} of ${JSON.stringify(head + y)}`);
      }
    }
    if (mode === "chunks") assert.ok(reused > 100, `a stable prefix was found for only ${reused} of 200 texts`);

    // tokenizeChoices = lm-eval's _encode_pair for each choice.
    const contexts = [
      "",
      " ",
      "\n\n",
      "Answer:",
      "Answer: ",
      "Answer:\n",
      "Q: 2+2=\u00a0",
      ...Array.from({ length: 200 }, () => randomText(random, 25)),
    ];
    for (const context of contexts) {
      const continuations = Array.from({ length: 1 + Math.floor(random() * 5) }, () => (random() < 0.6 ? " " : "") + randomText(random, 4));
      if (random() < 0.2) continuations.push("", " ", "\n", "  two spaces");
      const expected = continuations.map((c) => tokenizeRequest(reference, context, c));
      assert.deepEqual(
        tokenizeChoices(fast, context, continuations),
        expected,
        `context ${JSON.stringify(context)}, continuations ${JSON.stringify(continuations)}`,
      );
    }
  });
}

test("tokenizeChoices on a tokenizer without stablePrefix is tokenizeRequest per choice", () => {
  const utf8 = (text: string) => [...Buffer.from(text, "utf8")];
  const tokenizer: ModelTokenizer = {
    encode: utf8,
    specials: { before: [1], after: [], source: "tokenizer" },
    bosText: { loglikelihood: "<s>", generation: "<s>" },
    prefixTokenId: 1,
    decode: () => "",
  };
  for (const context of ["", "  ", "Answer: ", "Q?\n", "<s>Q?"]) {
    const continuations = ["yes", " no", ""];
    assert.deepEqual(
      tokenizeChoices(tokenizer, context, continuations),
      continuations.map((c) => tokenizeRequest(tokenizer, context, c)),
    );
  }
});
