// lm-eval tasks over the real benchmark files in ../shared/benchmarks, read in place, checked
// against examples read by hand from those files.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { applyFilters, exactMatch } from "../../../src/core/lmeval/exactMatch";
import { loadTask, type GenerationItem } from "../../../src/core/lmeval/task";

const tasks = path.join(import.meta.dirname, "..", "..", "fixtures", "tasks");
/** The fixtures' data files are ../shared/benchmarks, read in place: a clone without it skips these tests. */
const skipShared = existsSync(path.resolve(import.meta.dirname, "..", "..", "..", "..", "shared", "benchmarks"))
  ? false
  : "../shared/benchmarks (GSM8K and BIG-Bench Hard, read in place) is not here";

test("GSM8K: 1319 documents, lm-eval's prompt, the worked solution as target", { skip: skipShared }, async () => {
  const { task, problems } = await loadTask(path.join(tasks, "gsm8k.yaml"));
  assert.deepEqual(problems, []);
  assert.equal(task!.outputType, "generate_until");
  assert.equal(task!.items.length, 1319);
  assert.deepEqual(task!.generation, { until: ["Question:", "</s>", "<|im_end|>"], maxGenToks: 256 });
  assert.deepEqual(
    task!.filters.map((f) => f.name),
    ["strict-match", "flexible-extract"],
  );
  const second = task!.items[1] as GenerationItem;
  assert.equal(
    second.context,
    "Question: A robe takes 2 bolts of blue fiber and half that much white fiber.  How many bolts in total does it take?\nAnswer:",
  );
  assert.equal(
    second.target,
    "It takes 2/2=<<2/2=1>>1 bolt of white fiber\nSo the total amount of fabric is 2+1=<<2+1=3>>3 bolts of fabric\n#### 3",
  );
  assert.ok((task!.items[0] as GenerationItem).context.startsWith("Question: Janet\u2019s ducks lay 16 eggs per day."));
  assert.ok((task!.items[1318] as GenerationItem).target.endsWith("#### 14"));
});

test("GSM8K: the `#### N` extraction and exact_match rules of lm-eval's gsm8k task", { skip: skipShared }, async () => {
  const { task } = await loadTask(path.join(tasks, "gsm8k.yaml"));
  const [strict, flexible] = task!.filters;
  const target = (task!.items[0] as GenerationItem).target; // "... #### 18"
  const score = (pipeline: typeof strict, response: string) => exactMatch(applyFilters(pipeline!, [response]), target, task!.exactMatch);

  assert.equal(applyFilters(strict!, ["She sells 9 eggs at $2.\n#### 18"]), "18");
  assert.equal(score(strict, "She sells 9 eggs at $2.\n#### 18"), true);
  assert.equal(score(strict, "So she makes 18 dollars."), false, "strict needs the #### marker");
  assert.equal(applyFilters(strict!, ["So she makes 18 dollars."]), "[invalid]");
  // flexible-extract takes the last number-like span: "$18." -> "$18." then "$" and the final "." are ignored.
  assert.equal(applyFilters(flexible!, ["9 eggs, so she makes $18."]), "$18.");
  assert.equal(score(flexible, "9 eggs, so she makes $18."), true);
  assert.equal(score(flexible, "She makes 1,800 cents, i.e. 17"), false);
  assert.equal(exactMatch("1,234", "The answer.\n#### 1234", task!.exactMatch), true);
});

test("BIG-Bench Hard zero-shot: include, field: examples, lm-eval's Q/A prompt", { skip: skipShared }, async () => {
  const { task, problems } = await loadTask(path.join(tasks, "bbh_zeroshot_date_understanding.yaml"));
  assert.deepEqual(problems, []);
  assert.equal(task!.name, "bbh_zeroshot_date_understanding");
  assert.equal(task!.items.length, 250);
  assert.deepEqual(task!.generation, { until: ["</s>", "Q:", "<|im_end|>"], maxGenToks: 256 });
  const first = task!.items[0] as GenerationItem;
  assert.equal(
    first.context,
    "Q: Today is Christmas Eve of 1937. What is the date tomorrow in MM/DD/YYYY?\nOptions:\n(A) 12/11/1937\n(B) 12/25/1937\n(C) 01/04/1938\n(D) 12/04/1937\n(E) 12/25/2006\n(F) 07/25/1937\nA:",
  );
  assert.equal(first.target, "(B)");
  // The bbh metric ignores case, a final period, commas, backslashes, newlines and double quotes.
  assert.equal(exactMatch(applyFilters(task!.filters[0]!, ["(b)."]), first.target, task!.exactMatch), true);
  assert.equal(exactMatch("(C)", first.target, task!.exactMatch), false);
});

test("BIG-Bench Hard boolean_expressions: first and last documents", { skip: skipShared }, async () => {
  const { task } = await loadTask(path.join(tasks, "bbh_zeroshot_boolean_expressions.yaml"));
  const items = task!.items as GenerationItem[];
  assert.equal(items.length, 250);
  assert.deepEqual([items[0]!.context, items[0]!.target], ["Q: not ( True ) and ( True ) is\nA:", "False"]);
  assert.deepEqual([items[249]!.context, items[249]!.target], ["Q: ( not not not False or True ) is\nA:", "True"]);
});

test("GSM8K few-shot from the test split: lm-eval's seeded sampler, the document itself excluded", { skip: skipShared }, async () => {
  const { task, problems } = await loadTask(path.join(tasks, "gsm8k.yaml"), { numFewshot: 2, limit: 3 });
  assert.deepEqual(
    problems.map((d) => d.message),
    ["num_fewshot > 0 needs `fewshot_split` or `fewshot_config.samples`"],
  );
  assert.equal(task, undefined);
});
