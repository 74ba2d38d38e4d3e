// Items in the format of the paper's released code (context, question, options, answer as the
// option's text, question_type): what each converts to, the positioned problems of the dataset
// check (one to convert, one where the answer is none of the options), the quick fixes that
// convert one line or all, and `bprof convert` writing nothing when a line does not convert.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import test from "node:test";
import { AUTHORS_QUESTION_TYPES, convertAuthorsItem } from "../../../src/core/diagnostic/authorsFormat";
import { checkDiagnosticDataset } from "../../../src/core/diagnostic/dataset";
import { PAPER_ABILITIES } from "../../../src/core/diagnostic/paperAbilities";
import { fixesFor } from "../../../src/core/language/fixes";
import { applied } from "../../support/textEdits";
import { bprof } from "../../support/cli";

const LOGIC = {
  context: "All cats purr. Tom is a cat.",
  question: "Does Tom purr?",
  options: ["A. yes", "B. no"],
  answer: "A. yes",
  question_type: "logic_puzzle",
};
const SUM = {
  context: "",
  question: "What is 2 + 2?",
  options: ["3", "4", "5"],
  answer: "4",
  question_type: "arithmetic_word_problem",
  difficulty: "easy",
};

test("every question type of the released code names one of the paper's abilities", () => {
  for (const ability of Object.values(AUTHORS_QUESTION_TYPES)) assert.ok((PAPER_ABILITIES as readonly string[]).includes(ability), ability);
  assert.equal(new Set(Object.values(AUTHORS_QUESTION_TYPES)).size, 10, "the ten abilities, each by one type or more");
});

test("an authors' item converts: its type's ability, options as choices (labels off), the answer's index, the rest under meta", () => {
  assert.deepEqual(convertAuthorsItem(LOGIC, 3), {
    item: {
      id: "logic_puzzle-3",
      ability: "Deductive Reasoning",
      context: LOGIC.context,
      question: LOGIC.question,
      choices: ["yes", "no"],
      answer: 0,
      meta: { question_type: "logic_puzzle" },
    },
  });
  const sum = convertAuthorsItem({ ...SUM, id: "q7" }, 1);
  assert.ok("item" in sum);
  assert.deepEqual(
    [sum.item.id, sum.item.ability, sum.item.answer, sum.item.meta],
    ["q7", "Quantitative Reasoning", 1, { question_type: "arithmetic_word_problem", difficulty: "easy" }],
  );
  // a letter for an answer, a folder's name for a type
  const byLetter = convertAuthorsItem({ ...SUM, answer: "(C)", question_type: "Long_Term_Knowledge" }, 1);
  assert.ok("item" in byLetter);
  assert.deepEqual([byLetter.item.answer, byLetter.item.ability], [2, "Long-term Knowledge"]);
  // options labelled only in part keep their text
  const partly = convertAuthorsItem({ ...SUM, options: ["A. 3", "4", "5"] }, 1);
  assert.ok("item" in partly);
  assert.deepEqual(partly.item.choices, ["A. 3", "4", "5"]);
});

test("what stops an item converting is said at its field", () => {
  const cases: [Record<string, unknown>, string, RegExp][] = [
    [{ ...SUM, answer: "6" }, "answer", /`answer` "6" is none of the options \(A\. 3; B\. 4; C\. 5\)/],
    [{ ...SUM, answer: "D" }, "answer", /none of the options/],
    [{ ...SUM, question_type: "guessing" }, "question_type", /"guessing" is none of the released code's types/],
    [{ ...SUM, options: undefined }, "options", /`options` must be the array of choice strings/],
    [{ ...SUM, options: ["4"], answer: "4" }, "options", /has 1; an item needs 2 to 26/],
  ];
  for (const [value, field, message] of cases) {
    const r = convertAuthorsItem(value, 1);
    assert.ok("error" in r, JSON.stringify(value));
    assert.deepEqual(r.error.path, [field]);
    assert.match(r.error.message, message);
  }
});

test("the dataset check names an authors' line and its answer's mismatch at the answer; the quick fixes convert one line or every one", () => {
  const lines = [JSON.stringify(LOGIC), JSON.stringify(SUM), JSON.stringify({ ...SUM, answer: "6" })];
  const text = lines.join("\n") + "\n";
  const { problems, items } = checkDiagnosticDataset("/d/authors.diag.jsonl", text);
  assert.equal(items.length, 0, "runs do not read them as they are");
  assert.deepEqual(
    problems.map((p) => [p.line, p.code]),
    [
      [1, "diag.authors-format"],
      [2, "diag.authors-format"],
      [3, "diag.answer-not-an-option"],
    ],
  );
  assert.match(problems[0]!.message, /convert it \(the quick fix, or `bprof convert`\) to ability "Deductive Reasoning"/);
  const answerAt = lines[2]!.indexOf('"6"');
  assert.deepEqual([problems[2]!.column, problems[2]!.endColumn], [answerAt + 1, answerAt + 4], "at the answer's value");

  const fixes = fixesFor(problems[0]!, text);
  assert.deepEqual(
    fixes.map((f) => [f.title, f.edits.length, f.preferred ?? false]),
    [
      ["Convert this item from the released code's format", 1, false],
      ["Convert the 2 items of the file in the released code's format", 2, true],
    ],
  );
  const fixed = applied(text, fixes[1]!.edits);
  const after = checkDiagnosticDataset("/d/authors.diag.jsonl", fixed);
  assert.equal(after.items.length, 2);
  assert.deepEqual(
    after.problems.filter((p) => p.severity === "error").map((p) => [p.line, p.code]),
    [[3, "diag.answer-not-an-option"]],
  );
  assert.deepEqual(fixesFor(problems[2]!, text), [], "an answer that is no option has no conversion to offer");
});

test("bprof convert writes the converted file; with a line that does not convert it writes nothing and says where", async (t) => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-convert-"));
  t.after(() => fs.rm(dir, { recursive: true, force: true }));
  const input = path.join(dir, "authors.jsonl");
  const out = path.join(dir, "deductive.diag.jsonl");
  await fs.writeFile(input, [JSON.stringify(LOGIC), JSON.stringify(SUM)].join("\n") + "\n");
  const ok = await bprof(["convert", input, "--out", out]);
  assert.equal(ok.exitCode, 0, ok.stderr);
  assert.match(ok.stderr, /^2 items converted -> .*deductive\.diag\.jsonl$/);
  const converted = checkDiagnosticDataset(out, await fs.readFile(out, "utf8"));
  assert.deepEqual(
    converted.items.map((i) => [i.id, i.ability, i.answer]),
    [
      ["logic_puzzle-1", "Deductive Reasoning", 0],
      ["arithmetic_word_problem-2", "Quantitative Reasoning", 1],
    ],
  );

  await fs.writeFile(input, [JSON.stringify(LOGIC), JSON.stringify({ ...SUM, answer: "6" })].join("\n") + "\n");
  await fs.rm(out);
  const bad = await bprof(["convert", input, "--out", out]);
  assert.equal(bad.exitCode, 2);
  assert.match(bad.stderr, /authors\.jsonl:2:\d+: error: .*`answer` "6" is none of the options.*\[diag\.answer-not-an-option\]/);
  assert.match(bad.stderr, /nothing written$/);
  assert.equal(await fs.stat(out).catch(() => undefined), undefined, "no file written");
});
