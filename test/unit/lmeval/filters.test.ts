// Filter classes of lm-eval task files (`function: !function utils.MultiChoiceRegexFilter`), run in
// Python with lm-eval's Filter API on every response at once: BIG-Bench Hard's zero-shot task
// files and helpers of ../shared/lm-eval-tasks over ../shared/benchmarks, read in place, unchanged.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { applyFiltersToAll } from "../../../src/core/lmeval/exactMatch";
import { loadTask, type Task } from "../../../src/core/lmeval/task";
import { errorsOf, type Problem } from "../../../src/core/base/problems";
import { pythonFilteredAnswers, type RunnerScores } from "../../../src/core/results/items";

const shared = path.resolve(import.meta.dirname, "..", "..", "..", "..", "shared");
const skip =
  existsSync(path.join(shared, "lm-eval-tasks")) && existsSync(path.join(shared, "benchmarks"))
    ? false
    : "../shared (lm-eval's task files and the benchmark files) is not here";
const zeroshot = (name: string) => path.join(shared, "lm-eval-tasks", "bbh", "zeroshot", `${name}.yaml`);
const bbhData = (name: string) => path.join(shared, "benchmarks", "bbh", `${name}.json`);
const messages = (problems: Problem[]) => errorsOf(problems).map((p) => `${path.basename(p.file)}:${p.line} ${p.code} ${p.message}`);

async function bbhTask(name: string, limit = 3): Promise<{ task?: Task; problems: Problem[] }> {
  return loadTask(zeroshot(name), { data: bbhData(name), limit });
}

test(
  "date_understanding's MultiChoiceRegexFilter: a letter as given, an option's text mapped to its letter, else the fallback",
  { skip },
  async () => {
    const { task, problems } = await bbhTask("date_understanding");
    assert.deepEqual(messages(problems), []);
    const [strict, flexible] = task!.filters;
    assert.equal(flexible!.name, "flexible-extract");
    const doc = task!.documents![0]!;
    // Document 0's options: (A) 12/11/1937 (B) 12/25/1937 ...; punctuation and case are ignored when matching them.
    const answers = await applyFiltersToAll(flexible!, [["So the answer is (B)."], ["I think 12/25/1937."], ["No idea."]], [doc, doc, doc]);
    assert.deepEqual(answers, ["(B)", "(B)", "[invalid]"]);
    assert.deepEqual(
      await applyFiltersToAll(strict!, [["So the answer is (B)."]], [doc]),
      ["So the answer is (B)."],
      "built-in steps run here too",
    );
  },
);

test(
  "sports_understanding's MapRegexFilter and word_sorting's WordSortFilter, built with the YAML's keyword arguments",
  { skip },
  async () => {
    const sports = await bbhTask("sports_understanding");
    assert.deepEqual(messages(sports.problems), []);
    const sportsDoc = sports.task!.documents![0]!;
    assert.deepEqual(
      await applyFiltersToAll(
        sports.task!.filters[1]!,
        [["That is not plausible."], ["Yes, plausible."], ["Hmm."]],
        [sportsDoc, sportsDoc, sportsDoc],
      ),
      ["no", "yes", "[invalid]"],
    );

    const words = await bbhTask("word_sorting");
    assert.deepEqual(messages(words.problems), []);
    const wordsDoc = words.task!.documents![0]!; // "List: syndrome therefrom"
    assert.deepEqual(await applyFiltersToAll(words.task!.filters[1]!, [["The sorted list is: syndrome, therefrom."]], [wordsDoc]), [
      "syndrome therefrom",
    ]);
  },
);

test("a run's responses go through the Python pipeline once for every source: each item's answers per pipeline", { skip }, async () => {
  const { task } = await bbhTask("date_understanding", 2);
  const benchmarks = [{ name: "date", task: task! }];
  const refs = [0, 1].map((index) => ({ id: `date/${index}`, benchmark: "date", index }));
  const texts = ["(B) is right.", "It is 12/02/1986", "Q: next question"];
  const decode = (ids: readonly number[]) => ids.map((id) => texts[id]!).join("");
  const baseline: RunnerScores = new Map([
    ["date/0", { generated: [0], stopped: true }],
    ["date/1", { generated: [1, 2], stopped: true }],
  ]);
  const variant: RunnerScores = new Map([
    ["date/0", { generated: [2], stopped: true }],
    ["date/1", { generated: [0], stopped: true }],
  ]);
  const answers = await pythonFilteredAnswers(
    refs,
    benchmarks,
    new Map([
      ["baseline.jsonl", baseline],
      ["variants/v.jsonl", variant],
    ]),
    decode,
  );
  // Responses are cut at `Q:` (an until string) before the filters; document 1's (A) is 12/02/1986.
  assert.deepEqual(answers?.get("baseline.jsonl")?.get("date/0"), ["(B) is right.", "(B)"]);
  assert.deepEqual(answers?.get("baseline.jsonl")?.get("date/1"), ["It is 12/02/1986", "(A)"]);
  assert.deepEqual(answers?.get("variants/v.jsonl")?.get("date/0"), ["", "[invalid]"]);
  assert.deepEqual(answers?.get("variants/v.jsonl")?.get("date/1"), ["(B) is right.", "(B)"]);
});

test("a filter class that needs a package Python does not have is an error at its line, found when the task loads", { skip }, async () => {
  const hasRegex = (() => {
    try {
      execFileSync("python3", ["-c", "import regex, word2number"], { stdio: "ignore" });
      return true;
    } catch {
      return false;
    }
  })();
  const { problems } = await bbhTask("object_counting");
  if (hasRegex) {
    assert.deepEqual(messages(problems), []);
    return;
  }
  const errors = messages(problems);
  assert.equal(errors.length, 1, errors.join("\n"));
  assert.match(
    errors[0]!,
    /^object_counting\.yaml:\d+ task\.python-function filter `!function utils\.NumberParseRegexFilter` of pipeline `flexible-extract`: ModuleNotFoundError: No module named '(regex|word2number)'$/,
  );
});

/** A generate_until task over `docs` with the given filter_list, in a fresh folder with the files `extra`. */
async function filterTask(
  filterList: string,
  docs: object[],
  extra: Record<string, string> = {},
): Promise<{ file: string; loaded: { task?: Task; problems: Problem[] } }> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-filters-"));
  await fs.writeFile(path.join(dir, "docs.jsonl"), docs.map((d) => JSON.stringify(d)).join("\n") + "\n");
  for (const [name, text] of Object.entries(extra)) await fs.writeFile(path.join(dir, name), text);
  const file = path.join(dir, "task.yaml");
  await fs.writeFile(
    file,
    "task: t\ndataset_path: json\ndataset_kwargs:\n  data_files:\n    test: docs.jsonl\noutput_type: generate_until\ntest_split: test\n" +
      'doc_to_text: "{{question}}"\ndoc_to_target: "{{answer}}"\nfilter_list:\n' +
      filterList,
  );
  return { file, loaded: await loadTask(file) };
}

test("lm-eval's multi_choice_regex: the pattern's match, else a choice's text read as its letter, else `:` and a bare letter, else the fallback", async () => {
  const doc = { question: "Capital of Italy?", choices: ["Paris", "Rome", "Berlin"], answer: "(B)" };
  const { loaded } = await filterTask(
    '  - name: mc\n    filter:\n      - function: multi_choice_regex\n        regex_pattern: "(\\\\([A-Z]\\\\))"\n        ignore_case: true\n        ignore_punctuation: true\n      - function: take_first\n',
    [doc],
  );
  assert.deepEqual(messages(loaded.problems), []);
  const [pipeline] = loaded.task!.filters;
  const docs = loaded.task!.documents!;
  const responses = ["The answer is (B).", "I'd say ROME!", "Answer: C", "Answer:C is my guess", "no idea", "(A) or (C)"];
  const answers = await applyFiltersToAll(
    pipeline!,
    responses.map((r) => [r]),
    responses.map(() => docs[0]!),
  );
  assert.deepEqual(answers, ["(B)", "(B)", "(C)", "(C)", "[invalid]", "(A)"]);
  // Without ignore_case the choice text must match in case: "ROME" is not "Rome".
  const exact = await filterTask(
    '  - name: mc\n    filter:\n      - function: multi_choice_regex\n        regex_pattern: "(\\\\([A-Z]\\\\))"\n        group_select: -1\n        fallback: none\n',
    [doc],
  );
  const exactAnswers = await applyFiltersToAll(
    exact.loaded.task!.filters[0]!,
    [["I'd say ROME!"], ["(A) or (C)"], ["Rome, surely"]],
    [doc, doc, doc],
  );
  assert.deepEqual(exactAnswers, ["none", "(C)", "(B)"]);
});

test("multi_choice_regex on documents without `choices` is an error at the filter when the task loads", async () => {
  const { loaded } = await filterTask("  - name: mc\n    filter:\n      - function: multi_choice_regex\n", [
    { question: "q", answer: "a" },
  ]);
  assert.deepEqual(messages(loaded.problems), [
    "task.yaml:13 task.invalid-value filter `multi_choice_regex` of pipeline `mc`: the multi_choice_regex filter reads the document's `choices`, a list, which this document lacks (document 0)",
  ]);
});

test("lm-eval's custom filter: filter_fn(resps, docs) runs in Python on every response at once; a missing function is an error at filter_fn", async () => {
  const helper = "def prefixed(resps, docs):\n    return [[doc['prompt'] + r for r in rs] for rs, doc in zip(resps, docs)]\n";
  const docs = [
    { question: "q1", prompt: "def f():", answer: "x" },
    { question: "q2", prompt: "def g():", answer: "y" },
  ];
  const { loaded } = await filterTask(
    "  - name: create_test\n    filter:\n      - function: custom\n        filter_fn: !function helpers.prefixed\n",
    docs,
    { "helpers.py": helper },
  );
  assert.deepEqual(messages(loaded.problems), []);
  const answers = await applyFiltersToAll(loaded.task!.filters[0]!, [["\n  return 1"], ["\n  return 2"]], loaded.task!.documents!);
  assert.deepEqual(answers, ["def f():\n  return 1", "def g():\n  return 2"]);

  const missing = await filterTask(
    "  - name: create_test\n    filter:\n      - function: custom\n        filter_fn: !function helpers.absent\n",
    docs,
    { "helpers.py": helper },
  );
  const errors = messages(missing.loaded.problems);
  assert.equal(errors.length, 1, errors.join("\n"));
  assert.match(
    errors[0]!,
    /^task\.yaml:14 task\.python-function filter `!function helpers\.absent` of pipeline `create_test`: LookupError: .*helpers\.py has no absent$/,
  );
});
