// Quick fixes: each is chosen by the problem's code and data, and applying it clears the problem.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { loadProfile } from "../../../src/core/config/load";
import { parseConfig } from "../../../src/core/config/parse";
import { checkDiagnosticDataset } from "../../../src/core/diagnostic/dataset";
import { fixesFor, type Fix } from "../../../src/core/language/fixes";
import { baselineAccuracies } from "../../../src/core/results/profile";
import type { Problem } from "../../../src/core/base/problems";
import { makeProfileProject, SPATIAL } from "../../support/profileProject";
import { applied } from "../../support/textEdits";

function only(problems: readonly Problem[], code: string): Problem {
  const found = problems.filter((p) => p.code === code);
  assert.equal(found.length, 1, `one ${code} among ${problems.map((p) => p.code).join(", ")}`);
  return found[0]!;
}

function preferred(fixes: readonly Fix[]): Fix {
  const fix = fixes.find((f) => f.preferred);
  assert.ok(fix, `a preferred fix among ${fixes.map((f) => f.title).join("; ")}`);
  return fix;
}

const FILE = "/p/x.bprof.yaml";
const HEAD = "models:\n  - path: m\nbenchmarks:\n  - task: t\n";

test("config: the nearest key, a k written as a percentage, the nearest ability name", () => {
  for (const [text, code, expected] of [
    [`${HEAD}ablaton:\n  k: [0.01]\n`, "config.unknown-key", `${HEAD}ablation:\n  k: [0.01]\n`],
    [
      `${HEAD}abilities:\n  - name: A\n    data: a\nablation:\n  k: [1.024]\n`,
      "config.k-out-of-range",
      `${HEAD}abilities:\n  - name: A\n    data: a\nablation:\n  k: [0.01024]\n`,
    ],
  ] as const) {
    const problem = only(parseConfig(text, FILE).problems, code);
    const fixed = applied(text, preferred(fixesFor(problem, text)).edits);
    assert.equal(fixed, expected);
    assert.deepEqual(parseConfig(fixed, FILE).problems, []);
  }
});

test("config: an ability one typo from the paper's, a label that names no ability, and a k larger than the MLP", async (t) => {
  const project = await makeProfileProject();
  t.after(() => fs.rm(project.root, { recursive: true, force: true }));
  const original = await fs.readFile(project.configPath, "utf8");
  const text = original
    .replace(`- name: ${SPATIAL}`, '- name: "Spatial Reasonin"')
    .replace("  - task: ./tasks/tiny_yes.yaml\n", "  - task: ./tasks/tiny_yes.yaml\n    ability: Quantitative Reasonin\n")
    .replace("k: [0.01, 0.001]", "k: [0.9, 0.001]");
  const { problems } = await loadProfile(project.configPath, { text });
  let fixed = text;
  for (const code of ["config.ability-near-miss", "config.unknown-label", "config.k-too-large"])
    fixed = applied(fixed, preferred(fixesFor(only(problems, code), text)).edits);
  assert.match(fixed, /- name: "Spatial Reasoning"\n/, "quoted as it was");
  assert.match(fixed, /ability: Quantitative Reasoning\n/);
  const after = await loadProfile(project.configPath, { text: fixed.replace('- name: "Spatial Reasoning"', `- name: ${SPATIAL}`) });
  assert.deepEqual(
    after.problems.filter((p) => p.severity === "error").map((p) => p.message),
    [],
  );
  assert.ok(after.profile!.ablation!.k[1]! < project.mlpParameters / project.parameters);
});

test("config: a missing dataset of a paper ability is created by its generator; of another ability, no fix", async (t) => {
  const project = await makeProfileProject();
  t.after(() => fs.rm(project.root, { recursive: true, force: true }));
  const text = (await fs.readFile(project.configPath, "utf8")).replace("./diag/spatial.diag.jsonl", "./diag/new.diag.jsonl");
  const problem = only((await loadProfile(project.configPath, { text })).problems, "config.dataset-not-found");
  assert.deepEqual(preferred(fixesFor(problem, text)).createDataset, {
    file: path.join(project.root, "diag", "new.diag.jsonl"),
    ability: SPATIAL,
  });
  assert.deepEqual(fixesFor({ ...problem, data: { ...problem.data, ability: "Moral Reasoning" } }, text), []);
});

const ITEM = { id: "q-1", ability: "Quantitative Reasoning", context: "", question: "What is 2 + 2?", choices: ["3", "4", "5"], answer: 1 };
const line = (item: object) => JSON.stringify(item);

function datasetFix(text: string, code: string, choose: (fixes: Fix[]) => Fix = preferred): string {
  const problem = only(checkDiagnosticDataset("/p/d.diag.jsonl", text, { minItems: 1 }).problems, code);
  const fixed = applied(text, choose(fixesFor(problem, text)).edits);
  assert.equal(
    checkDiagnosticDataset("/p/d.diag.jsonl", fixed, { minItems: 1 }).problems.filter((p) => p.code === code).length,
    0,
    `${code} is fixed`,
  );
  return fixed;
}

test("dataset: an answer out of range gets one fix per choice; a string answer naming a choice is preferred", () => {
  const text = `${line({ ...ITEM, answer: 3 })}\n`;
  const problem = only(checkDiagnosticDataset("/p/d.diag.jsonl", text).problems, "diag.answer-out-of-range");
  assert.deepEqual(problem.data, { choices: 3 });
  assert.deepEqual(
    fixesFor(problem, text).map((f) => f.title),
    ['Set answer to 0 ("3")', 'Set answer to 1 ("4")', 'Set answer to 2 ("5")'],
  );
  assert.equal(
    datasetFix(text, "diag.answer-out-of-range", (fixes) => fixes[1]!),
    `${line(ITEM)}\n`,
  );
  assert.equal(datasetFix(`${line({ ...ITEM, answer: "4" })}\n`, "diag.answer-not-index"), `${line(ITEM)}\n`);
  assert.equal(datasetFix(`${line({ ...ITEM, answer: "b" })}\n`, "diag.answer-not-index"), `${line(ITEM)}\n`);
});

test("dataset: a duplicate removed, a repeated or missing id replaced by a free one, a misspelt ability renamed in every item", () => {
  const other = { ...ITEM, id: "q-2", question: "What is 3 + 3?", choices: ["6", "7"], answer: 0 };
  assert.equal(
    datasetFix(`${line(ITEM)}\n${line(other)}\n${line({ ...ITEM, id: "q-3", question: "what is 2 + 2" })}\n`, "diag.duplicate"),
    `${line(ITEM)}\n${line(other)}\n`,
  );
  const repeated = datasetFix(`${line(ITEM)}\n${line({ ...other, id: "q-1" })}\n`, "diag.duplicate-id");
  assert.match(repeated.split("\n")[1]!, /^\{"id":"quantitative-2",/);
  const { id: _id, ...noId } = other;
  const added = datasetFix(`${line(ITEM)}\n${line(noId)}\n`, "diag.missing-field");
  assert.match(added.split("\n")[1]!, /^\{"id": "quantitative-2", "ability"/);
  const misspelt = { ability: "Quantitativ Reasoning" };
  const renamed = datasetFix(`${line({ ...ITEM, ...misspelt })}\n${line({ ...other, ...misspelt })}\n`, "diag.unknown-ability");
  assert.equal(renamed, `${line(ITEM)}\n${line(other)}\n`);
});

test("dataset: answer positions rebalanced by reordering the choices of the fewest items, the questions kept", () => {
  // 400 four-choice items whose answer is always A: shares are 100 per position, so 300 must move.
  const items = Array.from({ length: 400 }, (_, i) => ({
    ...ITEM,
    id: `q-${i}`,
    question: `What is ${i} + 1?`,
    choices: [`${i + 1}`, `${i}`, `${i + 2}`, `${i + 3}`],
    answer: 0,
  }));
  const text = items.map(line).join("\n") + "\n";
  const problem = only(checkDiagnosticDataset("/p/d.diag.jsonl", text).problems, "diag.answer-position-bias");
  const fix = preferred(fixesFor(problem, text));
  assert.equal(fix.title, "Rebalance answer positions: reorder the choices of 300 items");
  const fixed = applied(text, fix.edits);
  const after = checkDiagnosticDataset("/p/d.diag.jsonl", fixed);
  assert.equal(after.problems.filter((p) => p.code === "diag.answer-position-bias").length, 0);
  const counts = [0, 0, 0, 0];
  for (const item of after.items) {
    counts[item.answer]!++;
    assert.equal(
      item.choices[item.answer],
      `${Number(/What is (\d+)/.exec(item.question)![1]) + 1}`,
      "the right answer is still the right answer",
    );
  }
  assert.deepEqual(counts, [100, 100, 100, 100]);
});

test("config: expects names unknown abilities, in a list and as the keys of weights: each positioned, each with its did-you-mean fix", async (t) => {
  const project = await makeProfileProject();
  t.after(() => fs.rm(project.root, { recursive: true, force: true }));
  const original = await fs.readFile(project.configPath, "utf8");
  const listed = original.replace(
    "  - task: ./tasks/tiny_yes.yaml\n",
    `  - task: ./tasks/tiny_yes.yaml\n    expects: [${SPATIAL}, Quantitative Reasonin]\n`,
  );
  const listProblem = only((await loadProfile(project.configPath, { text: listed })).problems, "config.unknown-expected-ability");
  assert.equal(listProblem.severity, "error");
  assert.match(
    listProblem.message,
    /`Quantitative Reasonin` is not one of this config's abilities: did you mean `Quantitative Reasoning`\?/,
  );
  const line = listed.split("\n").findIndex((l) => l.includes("expects:"));
  // 1-based line and column of the misspelt name
  assert.deepEqual([listProblem.line, listProblem.column], [line + 1, listed.split("\n")[line]!.indexOf("Quantitative Reasonin") + 1]);
  const fixedList = applied(listed, preferred(fixesFor(listProblem, listed)).edits);
  assert.match(fixedList, /expects: \[Spatial Reasoning, Quantitative Reasoning\]\n/);
  assert.deepEqual(
    (await loadProfile(project.configPath, { text: fixedList })).problems.filter((p) => p.severity === "error"),
    [],
  );

  const weighted = original.replace(
    "  - task: ./tasks/tiny_yes.yaml\n",
    "  - task: ./tasks/tiny_yes.yaml\n    expects:\n      Spatial Reasonng: 0.7\n      Quantitative Reasoning: 0.3\n",
  );
  const keyProblem = only((await loadProfile(project.configPath, { text: weighted })).problems, "config.unknown-expected-ability");
  const keyLine = weighted.split("\n").findIndex((l) => l.includes("Spatial Reasonng"));
  assert.deepEqual(
    [keyProblem.line, keyProblem.column, keyProblem.field],
    [keyLine + 1, 7, "benchmarks[0].expects.Spatial Reasonng"],
    "the key is marked",
  );
  const fixedKeys = applied(weighted, preferred(fixesFor(keyProblem, weighted)).edits);
  assert.match(fixedKeys, /\n {6}Spatial Reasoning: 0\.7\n/);
  const loaded = await loadProfile(project.configPath, { text: fixedKeys });
  assert.deepEqual(
    loaded.problems.filter((p) => p.severity === "error"),
    [],
  );
  assert.deepEqual(loaded.profile!.benchmarks[0]!.expects, [
    { ability: SPATIAL, weight: 0.7 },
    { ability: "Quantitative Reasoning", weight: 0.3 },
  ]);

  // results.json records them with the benchmark's scores.
  const recorded = baselineAccuracies([], loaded.profile!.benchmarks);
  assert.deepEqual(recorded[0]!.expects, loaded.profile!.benchmarks[0]!.expects);

  // A weight must be positive: the schema says so where it is.
  const zero = weighted.replace("Spatial Reasonng: 0.7", "Spatial Reasoning: 0");
  const schema = (await loadProfile(project.configPath, { text: zero })).problems.filter((p) => p.severity === "error");
  assert.equal(schema.length, 1, JSON.stringify(schema));
  assert.match(schema[0]!.message, /expects/);
});
