import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { nearMissAbility, PAPER_ABILITIES } from "../../../src/core/diagnostic/paperAbilities";
import { checkDiagnosticDataset, loadDiagnosticDataset, type DiagnosticCheckOptions } from "../../../src/core/diagnostic/dataset";
import { buildBenchmarkIndex } from "../../../src/core/diagnostic/contamination";
import { jaccard, shingleSet, similarSets } from "../../../src/core/diagnostic/nearDuplicates";
import { appendWordHashes, normalizedWords, U32Buffer } from "../../../src/core/diagnostic/wordHashes";
import type { Problem } from "../../../src/core/base/problems";

const FILE = "abilities.diag.jsonl";
/** Small test files: the too-few-items warning is tested on its own. */
const SMALL: DiagnosticCheckOptions = { minItems: 1 };

let nextId = 0;
const CHOICES = ["Paris", "Rome", "Oslo", "Lima"];

/** A valid item with its own id and question; fields can be overridden. */
function item(fields: Record<string, unknown> = {}): Record<string, unknown> {
  const n = nextId++;
  return {
    id: `q${n}`,
    ability: "Deductive Reasoning",
    context: `Passage number ${n} about cities.`,
    question: `Which city is meant in case ${n}?`,
    choices: CHOICES,
    answer: n % 4,
    ...fields,
  };
}

function lines(...entries: (string | Record<string, unknown>)[]): string[] {
  return entries.map((e) => (typeof e === "string" ? e : JSON.stringify(e)));
}

function check(ls: readonly string[], options: DiagnosticCheckOptions = SMALL) {
  return checkDiagnosticDataset(FILE, ls.join("\n") + "\n", options);
}

/** 1-based column of the first occurrence of `needle` in `line` (after `after`, when given). */
function col(line: string, needle: string, after = ""): number {
  const from = after ? line.indexOf(after) : 0;
  const at = line.indexOf(needle, from);
  assert.ok(at >= 0, `${needle} not in ${line}`);
  return at + 1;
}

/** The single diagnostic, asserting where it is and what it says. */
function only(problems: readonly Problem[], line: number, column: number, message: RegExp, severity = "error"): Problem {
  assert.equal(problems.length, 1, problems.map((d) => `${d.line}:${d.column} ${d.message}`).join("\n"));
  const d = problems[0]!;
  assert.deepEqual([d.file, d.line, d.column, d.severity], [FILE, line, column, severity], d.message);
  assert.match(d.message, message);
  return d;
}

test("a clean file gives its items and no problems", () => {
  const ls = lines(item(), item({ meta: { source: "hand-written" } }), item({ context: "", choices: ["yes", "no"], answer: 1 }), "");
  const { items, problems } = check(ls);
  assert.deepEqual(problems, []);
  assert.equal(items.length, 3);
  assert.deepEqual(items[2], { ...JSON.parse(ls[2]!), line: 3 });
  assert.deepEqual(items[1]!.meta, { source: "hand-written" });
});

test("a JSON syntax error points at the column where the JSON goes wrong", () => {
  const bad = '{"id": "a", "ability": "Deductive Reasoning" "context": ""}';
  const { items, problems } = check(lines(item(), bad));
  assert.equal(items.length, 1);
  only(problems, 2, col(bad, '"context"'), /^invalid JSON: expected ','; each line must be one complete JSON object$/);

  const trailing = '{"id": "b", "choices": ["x", "y",]}';
  only(check([trailing]).problems, 1, col(trailing, "]"), /invalid JSON: expected a value \(no trailing comma\)/);
  const twoItems = `${JSON.stringify(item())} ${JSON.stringify(item())}`;
  only(check([twoItems]).problems, 1, col(twoItems, "{", "} "), /unexpected text after the item \(one item per line\)/);
  const cut = '{"id": "c", "question": "Where';
  only(check([cut]).problems, 1, col(cut, '"Where'), /unterminated string \(an item must be complete on one line\)/);
});

test("a line that is not an object is an error on the whole line", () => {
  const d = only(check(['["Paris", "Rome"]']).problems, 1, 1, /each line must be a JSON object .*; found an array/);
  assert.equal(d.endColumn, 18);
});

test("missing fields, wrong types, empty ids", () => {
  const missing = JSON.stringify({ id: "m", ability: "Deductive Reasoning", question: "Q?", choices: CHOICES, answer: 1 });
  only(check([missing]).problems, 1, 1, /^missing field `context`: add the passage the question is about; "" when there is none$/);

  const wrong = JSON.stringify(item({ context: 42 }));
  const d = only(check([wrong]).problems, 1, col(wrong, "42"), /^`context` must be a string .*; found a number$/);
  assert.equal(d.field, "context");
  assert.equal(d.endColumn, col(wrong, "42") + 2);

  const numericId = JSON.stringify(item({ id: 7 }));
  only(check([numericId]).problems, 1, col(numericId, "7"), /`id` must be a string \(write "7"\); found a number/);
  const emptyAbility = JSON.stringify(item({ ability: " " }));
  only(check([emptyAbility]).problems, 1, col(emptyAbility, '" "'), /`ability` is empty/);
  const badMeta = JSON.stringify(item({ meta: [1] }));
  only(check([badMeta]).problems, 1, col(badMeta, "[1]"), /`meta` must be an object of extra data; found an array/);
});

test("an unknown field is a warning on its key, suggesting the nearest field, once for all lines", () => {
  const typo = JSON.stringify({ ...item(), anwser: 2 });
  const d = only(
    check([typo]).problems,
    1,
    col(typo, '"anwser"'),
    /^unknown field `anwser`: did you mean `answer`\? Extra data belongs under `meta`$/,
    "warning",
  );
  assert.equal(d.endColumn, col(typo, '"anwser"') + 8);

  const extra = lines({ ...item(), source: "web" }, { ...item(), source: "web" }, { ...item(), source: "web" });
  only(
    check(extra).problems,
    1,
    col(extra[0]!, '"source"'),
    /^unknown field `source`: put extra data under `meta` \(also on 2 more lines\)$/,
    "warning",
  );
});

test("choices: 2 to 26 strings, none empty, none repeated", () => {
  const one = JSON.stringify(item({ choices: ["only"], answer: 0 }));
  only(check([one]).problems, 1, col(one, '["only"]'), /^`choices` has 1 choice; give between 2 and 26$/);
  const many = JSON.stringify(item({ choices: Array.from({ length: 27 }, (_, i) => `c${i}`), answer: 0 }));
  only(check([many]).problems, 1, col(many, '["c0"'), /^`choices` has 27 choices; give between 2 and 26$/);
  const notString = JSON.stringify(item({ choices: ["a", 2, "c"], answer: 0 }));
  only(check([notString]).problems, 1, col(notString, "2,"), /^choice 1 must be a string; found a number$/);
  const repeated = JSON.stringify(item({ choices: ["Paris", "Rome", " paris ", "Oslo"], answer: 0 }));
  const d = only(
    check([repeated]).problems,
    1,
    col(repeated, '" paris "'),
    /^choice 2 repeats choice 0 \(ignoring case and surrounding spaces\): make every choice different$/,
  );
  assert.equal(d.field, "choices[2]");
});

test("answer: an integer index within the choices", () => {
  const range = JSON.stringify(item({ answer: 4 }));
  only(
    check([range]).problems,
    1,
    col(range, "4", '"answer"'),
    /^`answer` 4 is out of range: with 4 choices it must be 0 to 3 \(0-based\)$/,
  );
  const negative = JSON.stringify(item({ answer: -1 }));
  only(check([negative]).problems, 1, col(negative, "-1"), /out of range/);
  const fraction = JSON.stringify(item({ answer: 1.5 }));
  only(
    check([fraction]).problems,
    1,
    col(fraction, "1.5"),
    /^`answer` must be an integer index into `choices`, 0 for the first; found a number 1.5$/,
  );
  const letter = JSON.stringify(item({ answer: "B" }));
  only(check([letter]).problems, 1, col(letter, '"B"'), /\(a number, not the choice's text or letter\); found a string "B"/);
});

test("a duplicate id is an error on the second, naming the line of the first", () => {
  const ls = lines(item({ id: "same" }), item(), item({ id: "same" }));
  only(check(ls).problems, 3, col(ls[2]!, '"same"'), /^duplicate id `same` \(first used on line 1\): give every item its own id$/);
});

test("a duplicate question (same context and question up to case, spacing and punctuation) is a warning", () => {
  const ls = lines(
    item({ context: "The cat sat on the mat.", question: "Where did the cat sit?" }),
    item({ context: "", question: "Something else entirely?" }),
    item({ context: "the CAT sat on  the mat", question: "Where did the cat sit ?!" }),
  );
  only(
    check(ls).problems,
    3,
    col(ls[2]!, '"Where'),
    /^duplicate question: the same context and question as line 1 \(ignoring case, spacing and punctuation\); remove one of them$/,
    "warning",
  );
});

/** A deterministic 100-word passage. */
function passage(seed: number, words = 100): string {
  return Array.from({ length: words }, (_, i) => `w${(seed * 7919 + i * 104729) % 100003}`).join(" ");
}

test("near-duplicate questions: Jaccard of word 3-gram sets >= 0.9", () => {
  const base = passage(1).split(" ");
  const oneWordChanged = base.map((w, i) => (i === 50 ? "changed" : w)).join(" ");
  const tenWordsChanged = base.map((w, i) => (i % 10 === 5 ? "changed" + i : w)).join(" ");
  const ls = lines(
    item({ context: base.join(" "), question: "Which word comes first?" }),
    item({ context: tenWordsChanged, question: "Which word comes first?" }),
    item({ context: oneWordChanged, question: "Which word comes first?" }),
  );
  // One changed word changes 3 of 100 shingles on each side: 97 / 103 = 94%. Ten changes: far below.
  only(
    check(ls).problems,
    3,
    col(ls[2]!, '"Which'),
    /^near-duplicate question: its context and question share 94% of their word 3-grams with line 1 \(Jaccard similarity; 90% or more counts\); rewrite or remove one of them$/,
    "warning",
  );
});

test("several questions about one shared passage are not near duplicates", () => {
  const context = passage(2, 200);
  const ls = lines(item({ context, question: "Which word is first?" }), item({ context, question: "Which word is last?" }));
  assert.deepEqual(check(ls).problems, []);
});

test("an ability that nearly matches a known one is a warning suggesting it; new names are fine", () => {
  const ls = lines(
    item({ ability: "Temporal Reasonning" }),
    item({ ability: "Temporal Reasonning" }),
    item({ ability: "Abductive Reasoning" }),
    item({ ability: "Moral Reasoning" }),
  );
  only(
    check(ls).problems,
    1,
    col(ls[0]!, '"Temporal Reasonning"'),
    /^ability `Temporal Reasonning` is not a known ability: did you mean `Temporal Reasoning`\? .* \(also on 1 more line\)$/,
    "warning",
  );
  assert.equal(nearMissAbility("deductive reasoning"), "Deductive Reasoning");
  assert.equal(nearMissAbility("Commonsense and Causal Reasoning"), "Commonsense & Causal Reasoning");
  assert.equal(nearMissAbility("Long term knowledge"), "Long-term Knowledge");
  assert.equal(nearMissAbility("Quantitive Reasoning"), "Quantitative Reasoning");
  assert.equal(nearMissAbility("Spatial Reasoning"), undefined, "a known name is no near miss");
  assert.equal(nearMissAbility("Abductive Reasoning"), undefined);
  assert.equal(nearMissAbility("Inductive Reasoning"), undefined);
  assert.equal(nearMissAbility("Causal Reasoning"), undefined);
  assert.equal(nearMissAbility("Visual Reasoning"), undefined);
  assert.equal(
    nearMissAbility("Ethical Judgment", [...PAPER_ABILITIES, "Ethical Judgement"]),
    "Ethical Judgement",
    "abilities the profile declares count",
  );
});

test("too few items for an ability: a warning on its first item", () => {
  const ls = lines(item(), item({ ability: "Spatial Reasoning" }), item());
  const { problems } = check(ls, { minItems: 3 });
  assert.equal(problems.length, 2);
  const [deductive, spatial] = problems;
  assert.deepEqual([deductive!.line, deductive!.column], [1, col(ls[0]!, '"Deductive')]);
  assert.equal(
    deductive!.message,
    "only 2 items for ability `Deductive Reasoning`; at least 3 are needed for a stable ranking of its parameters (the paper used about 2000): add items, or measure the ranking's stability with `ablation.stability: true`",
  );
  assert.deepEqual([spatial!.line, spatial!.column], [2, col(ls[1]!, '"Spatial')]);
  assert.match(check(ls, {}).problems[0]!.message, /at least 200 are needed/);
});

test("a run's measured ranking stability replaces the count's rule: stable, no warning; unstable, a warning that says the figure", () => {
  const ls = lines(item(), item({ ability: "Spatial Reasoning" }), item());
  const measure = (jaccard: number) => ({ runId: "r1", model: "m", k: 0.01, jaccard, halves: [1, 1] as [number, number] });
  const measured = new Map([
    ["Deductive Reasoning", measure(0.8)],
    ["Spatial Reasoning", measure(0.2)],
  ]);
  const { problems } = check(ls, { minItems: 3, measured });
  assert.deepEqual(
    problems.map((p) => [p.code, p.line]),
    [["diag.unstable-ranking", 2]],
  );
  assert.match(problems[0]!.message, /Spatial Reasoning.*Jaccard index 0\.200 at k = 0\.01 \(run r1, model m\), below 0\.5/);
});

/** Items whose choices all have the same length, so only the answer position can be skewed. */
function positioned(answers: readonly number[]): string[] {
  return answers.map((answer) => JSON.stringify(item({ choices: ["aa", "bb", "cc", "dd"], answer })));
}

test("answer-position imbalance: chi-square against uniform, a warning on line 1", () => {
  // (45 - 15)^2 / 15 + 3 * (5 - 15)^2 / 15 = 80; scipy.stats.chi2.sf(80, 3) = 3.07e-17.
  const { problems } = check(positioned(Array.from({ length: 60 }, (_, i) => (i < 45 ? 0 : (i % 3) + 1))));
  only(
    problems,
    1,
    1,
    /^answer positions are unbalanced: chi-square = 80.0, df = 3, p = 3.1e-17 \(observed\/expected: A 45\/15, B 5\/15, C 5\/15, D 5\/15\); .*shuffle the choices/,
    "warning",
  );
  assert.deepEqual(check(positioned(Array.from({ length: 60 }, (_, i) => i % 4))).problems, []);
});

test("correct answer systematically the longest choice: binomial test, a warning on line 1", () => {
  const choices = (longest: number) => ["aa", "bb", "cc", "dd"].map((c, k) => (k === longest ? "a longer one" : c));
  // Positions balanced, answer always the longest: scipy.stats.binom.sf(39, 40, 0.25) = 8.27e-25.
  const ls = Array.from({ length: 40 }, (_, i) => JSON.stringify(item({ choices: choices(i % 4), answer: i % 4 })));
  only(
    check(ls).problems,
    1,
    1,
    /^the correct answer is the strictly longest choice in 40 of 40 items \(100.0%; chance 10, 25.0%; one-sided binomial test p = 8.3e-25\); a model can score by picking the longest choice/,
    "warning",
  );
});

test("13-gram overlap with a benchmark document (GPT-3's contamination test)", () => {
  const sentence = "The quick brown fox jumps over the lazy dog while the farmer watches from the porch";
  const benchmarkTexts = [
    { benchmark: "arc_easy", docIndex: 0, text: "Question: what color is the sky? Answer: blue." },
    { benchmark: "hellaswag", docIndex: 17, text: `Some preamble. ${sentence}. And more text after it.` },
  ];
  const copied = sentence.split(" ").slice(2, 15).join(" "); // 13 words
  const ls = lines(
    item({ context: "Unrelated passage.", question: `Consider: ${copied.toUpperCase()}!` }),
    item({ question: sentence.split(" ").slice(2, 14).join(" ") }),
  );
  const d = only(
    check(ls, { ...SMALL, benchmarkTexts }).problems,
    1,
    col(ls[0]!, '"Consider'),
    /^possible contamination: shares the 13-word sequence "brown fox jumps over the lazy dog while the farmer watches from the" with benchmark `hellaswag` \(document 17\) \(GPT-3's 13-gram overlap test\)/,
    "warning",
  );
  assert.equal(d.field, "question");
  // The index can be built once and reused; 12 shared words are not an overlap (item 2 above).
  const index = buildBenchmarkIndex(benchmarkTexts);
  assert.equal(check(ls, { ...SMALL, benchmarkIndex: index }).problems.length, 1);
  // A copy spanning a choice names the choice and counts further shared 13-grams.
  const inChoices = lines(item({ context: "", question: "Pick one.", choices: ["no", sentence], answer: 0 }));
  const c = check(inChoices, { ...SMALL, benchmarkIndex: index }).problems;
  assert.equal(c.length, 1);
  assert.equal(c[0]!.field, "choices[1]");
  assert.match(c[0]!.message, /"the quick brown fox .* watches" and 3 more 13-grams with benchmark `hellaswag`/);
});

test("normalised words: lowercase, punctuation stripped, split on whitespace", () => {
  assert.deepEqual(normalizedWords("Don't STOP,  now:\tthe Café's «menu»!"), ["dont", "stop", "now", "the", "cafés", "menu"]);
});

test("CRLF line ends and a byte order mark do not shift lines or columns", () => {
  const bad = JSON.stringify(item({ answer: 9 }));
  const text = `\uFEFF${JSON.stringify(item())}\r\n${bad}\r\n`;
  const { items, problems } = checkDiagnosticDataset(FILE, text, SMALL);
  assert.equal(items.length, 1);
  only(problems, 2, col(bad, "9"), /out of range/);
});

test("loadDiagnosticDataset reads a file; a missing file is one diagnostic", async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-diag-"));
  try {
    const file = path.join(dir, "a.diag.jsonl");
    await fs.writeFile(file, lines(item(), item()).join("\n"));
    const loaded = await loadDiagnosticDataset(file, SMALL);
    assert.equal(loaded.items.length, 2);
    assert.deepEqual(loaded.problems, []);
    const missing = await loadDiagnosticDataset(path.join(dir, "none.diag.jsonl"));
    assert.equal(missing.problems.length, 1);
    assert.match(missing.problems[0]!.message, /^cannot read the diagnostic dataset: /);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
});

test("an empty file is a warning", () => {
  only(checkDiagnosticDataset(FILE, "\n\n", SMALL).problems, 1, 1, /no items/, "warning");
});

test("the near-duplicate join finds exactly the pairs a brute-force comparison finds", () => {
  // 400 texts over a small vocabulary (so shingles are shared), a third of them edited copies.
  let seed = 7;
  const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296;
  const texts: string[] = [];
  for (let i = 0; i < 400; i++) {
    const source =
      i > 10 && random() < 0.35
        ? texts[Math.floor(random() * i)]!.split(" ")
        : Array.from({ length: 20 + Math.floor(random() * 40) }, () => `v${Math.floor(random() * 30)}`);
    const edits = Math.floor(random() * 3);
    for (let e = 0; e < edits; e++) source[Math.floor(random() * source.length)] = `e${i}x${e}`;
    texts.push(source.join(" "));
  }
  const buffer = new U32Buffer();
  const from = new Int32Array(texts.length);
  const to = new Int32Array(texts.length);
  texts.forEach((t, i) => {
    from[i] = buffer.length;
    appendWordHashes(t, buffer);
    to[i] = buffer.length;
  });
  const sets = texts.map((_, i) => shingleSet(buffer.values, from[i]!, to[i]!, 3));
  const expected: string[] = [];
  for (let i = 0; i < texts.length; i++) {
    const j = sets.findIndex((s, k) => k < i && jaccard(sets[i]!, s) >= 0.9);
    if (j >= 0) expected.push(`${i}~${j}`);
  }
  const found = similarSets(buffer.values, from, to, 3, 0.9).map((p) => `${p.index}~${p.earlier}`);
  assert.ok(expected.length > 30, `only ${expected.length} similar pairs: the test data is too easy`);
  assert.deepEqual(found, expected);
});

test("shingle sets and their Jaccard similarity agree with JavaScript's Set, small sets and large", () => {
  let seed = 7;
  const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
  // Words from a small vocabulary repeat n-grams within a text; lengths up to 2,000 words grow the scratch table.
  const words = (length: number) => Array.from({ length }, () => `w${Math.floor(random() * 12)}`).join(" ");
  for (const length of [0, 1, 2, 5, 40, 300, 2000]) {
    const [a, b] = [words(length), words(length + Math.floor(random() * 50))];
    const setOf = (text: string) => {
      const buffer = new U32Buffer();
      appendWordHashes(text, buffer);
      return shingleSet(buffer.values, 0, buffer.length, 3);
    };
    const [x, y] = [setOf(a), setOf(b)];
    const [sx, sy] = [new Set(x), new Set(y)];
    assert.equal(sx.size, x.length, `${length} words: a shingle repeats in its set`);
    const shared = [...sx].filter((h) => sy.has(h)).length;
    const union = sx.size + sy.size - shared;
    assert.equal(jaccard(x, y), union === 0 ? 1 : shared / union, `${length} words`);
  }
});
