// Python behaviours lm-eval relies on, reproduced in TypeScript; expected values from CPython 3.11.
import assert from "node:assert/strict";
import { test } from "node:test";
import { applyFilters, exactMatch } from "../../../src/core/lmeval/exactMatch";
import { PythonRandom } from "../../../src/core/lmeval/pythonRandom";
import { findall, pythonRegex, PythonRegexError } from "../../../src/core/lmeval/pythonRegex";

test("PythonRandom matches CPython's random.Random(seed)", () => {
  const r = new PythonRandom(1234);
  const range = (n: number) => Array.from({ length: n }, (_, i) => i);
  // random.Random(1234): sample(range(10), 3), sample(range(100), 5), sample(range(1000), 7), random()
  assert.deepEqual(r.sample(range(10), 3), [7, 1, 0]);
  assert.deepEqual(r.sample(range(100), 5), [11, 74, 4, 85, 88]);
  assert.deepEqual(r.sample(range(1000), 7), [85, 100, 784, 363, 242, 17, 31]);
  assert.equal(r.random(), 0.9866882397888058);
  // A seed above 2^32 is split into 32-bit words: random.Random(2**40 + 5).sample(range(50), 4)
  assert.deepEqual(new PythonRandom(2 ** 40 + 5).sample(range(50), 4), [32, 33, 17, 42]);
});

test("Python regex features used by task files", () => {
  assert.equal("a\nb#### 7".replace(pythonRegex("(?s).*#### ", "g"), ""), "7");
  assert.equal("a\nb#### 7".replace(/.*#### /g, ""), "a\n7", "without (?s), . stops at newlines");
  assert.deepEqual(findall(pythonRegex("(?P<n>\\d+)"), "a1 b22"), ["1", "22"]);
  assert.deepEqual(findall(pythonRegex("(-?[$0-9.,]{2,})|(-?[0-9]+)"), "7 and $18."), [
    ["", "7"],
    ["$18.", ""],
  ]);
  assert.deepEqual(findall(pythonRegex("\\d"), "a1b2"), ["1", "2"]);
  assert.throws(() => pythonRegex("(?x) a b"), PythonRegexError);
  assert.throws(() => pythonRegex("(unclosed"), PythonRegexError);
});

test("regex filter: group_select, tuples, fallback", () => {
  const pipeline = (regex_pattern: string, group_select?: number) => ({
    name: "t",
    steps: [
      { function: "regex" as const, regex_pattern, ...(group_select !== undefined ? { group_select } : {}) },
      { function: "take_first" as const },
    ],
  });
  assert.equal(applyFilters(pipeline("(\\d+)"), ["1 then 2"]), "1");
  assert.equal(applyFilters(pipeline("(\\d+)", -1), ["1 then 2"]), "2");
  assert.equal(applyFilters(pipeline("(\\d+)", 5), ["1 then 2"]), "[invalid]");
  assert.equal(applyFilters(pipeline("x(\\d+)"), ["none"]), "[invalid]");
});

test("exact_match applies regexes, then case, then punctuation, then digits", () => {
  assert.equal(exactMatch("The Answer", "the answer", { ignore_case: true }), true);
  assert.equal(exactMatch("yes!", "yes", { ignore_punctuation: true }), true);
  assert.equal(exactMatch("yes!", "yes"), false);
  assert.equal(exactMatch("v2", "v3", { ignore_numbers: true }), true);
  assert.equal(exactMatch("1,000.", "1000", { regexes_to_ignore: [",", "\\.$"] }), true);
});

test("Python's strip: \\x1c-\\x1f and NEL are whitespace, the byte-order mark is not (lm-eval's n_spaces, regex filter); remove_whitespace drops one space", async () => {
  const { pyLstrip, pyRstrip, pyStrip } = await import("../../../src/core/lmeval/pythonString");
  assert.equal(pyRstrip("Answer:\x1c\x85 \n"), "Answer:");
  assert.equal(pyRstrip("Answer:\ufeff"), "Answer:\ufeff");
  assert.equal(pyLstrip("\u3000\x1f 42 "), "42 ");
  assert.equal(pyStrip("\t 7\u2009"), "7");
  // lm-eval's remove_whitespace drops one leading space and nothing else.
  assert.equal(applyFilters({ name: "f", steps: [{ function: "remove_whitespace" }] }, ["  B"]), " B");
  assert.equal(applyFilters({ name: "f", steps: [{ function: "remove_whitespace" }] }, ["\x1e\x85 B"]), "\x1e\x85 B");
  const { tokenizeChoices } = await import("../../../src/core/prompts/tokenize");
  const { BOS_TOKEN_ID } = await import("../../../scripts/lib/byteTokenizer");
  const bytes = {
    encode: (text: string) => [...Buffer.from(text, "utf8")],
    specials: { before: [BOS_TOKEN_ID], after: [], source: "tokenizer" },
    bosText: { loglikelihood: "<s>" },
    prefixTokenId: BOS_TOKEN_ID,
    decode: () => "",
  };
  // The trailing \x1c moves to the continuation, as lm-eval's context.rstrip() moves it.
  const [request] = tokenizeChoices(bytes as never, "Q?\x1c", ["yes"]);
  assert.deepEqual(request!.context, [BOS_TOKEN_ID, ...Buffer.from("Q?")]);
  assert.deepEqual(request!.continuation, [...Buffer.from("\x1cyes")]);
});
