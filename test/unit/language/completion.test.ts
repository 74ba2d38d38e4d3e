// Completion in a config: where the cursor is in half-typed YAML, and what is offered there.
import assert from "node:assert/strict";
import { test } from "node:test";
import { PAPER_ABILITIES } from "../../../src/core/diagnostic/paperAbilities";
import { PAPER_K_SWEEP } from "../../../src/core/config/parse";
import { configCompletions, type CompletionContext } from "../../../src/core/language/completion";
import { yamlCursor } from "../../../src/core/language/yamlCursor";

/** The text with its `|` removed, and where the `|` was. */
function at(marked: string): { text: string; position: { line: number; character: number } } {
  const i = marked.indexOf("|");
  const before = marked.slice(0, i).split("\n");
  return {
    text: marked.slice(0, i) + marked.slice(i + 1),
    position: { line: before.length - 1, character: before[before.length - 1]!.length },
  };
}

const CONTEXT: CompletionContext = {
  configFile: "/w/p.bprof.yaml",
  abilityNames: ["Moral Reasoning", "Spatial Reasoning"],
  taskFiles: ["/w/tasks/arc.yaml", "/w/tasks/sub/gsm8k.yaml"],
  datasetFiles: ["/w/diag/moral.diag.jsonl"],
  modelFolders: ["/w/models/tiny"],
  modelParameters: [{ name: "tiny", total: 1_000_000 }],
};

function complete(marked: string) {
  const { text, position } = at(marked);
  return configCompletions(text, position, CONTEXT);
}

test("the cursor in half-typed YAML: the mapping of a key, the field of a value, list items block and flow", () => {
  const cases: [string, object][] = [
    [
      "models:\n  - path: ./m\nabilities:\n  - name: Quant\n    data: x\n  - name: Spa|",
      { path: ["abilities", 1, "name"], kind: "value", prefix: "Spa" },
    ],
    ["abilities:\n- name: A\n  data: x\n- name: B\n  da|", { path: ["abilities", 1], kind: "key", prefix: "da" }],
    ["ablation:\n  k: [0.001, 0.0|]", { path: ["ablation", "k", 1], kind: "value", prefix: "0.0" }],
    ["ablation:\n  selections:\n    - top\n    - |", { path: ["ablation", "selections", 1], kind: "value", prefix: "" }],
    ['models:\n  - path: ./m\n    dtype: "bf|"', { path: ["models", 0, "dtype"], kind: "value", prefix: "bf" }],
    ["mo|", { path: [], kind: "key", prefix: "mo" }],
    ["ablation:\n  k: [0.001]\n  |", { path: ["ablation"], kind: "key", prefix: "" }],
  ];
  for (const [marked, expected] of cases) {
    const { text, position } = at(marked);
    const { path, kind, prefix } = yamlCursor(text, position);
    assert.deepEqual({ path, kind, prefix }, expected, marked);
  }
});

test("ability names: the paper's ten and the workspace's, replacing the whole typed value", () => {
  const items = complete("abilities:\n  - name: Spa|tial\n    data: x.diag.jsonl\n");
  assert.deepEqual(items.map((i) => i.label).sort(), [...new Set([...PAPER_ABILITIES, "Moral Reasoning", "Spatial Reasoning"])].sort());
  const spatial = items.find((i) => i.label === "Spatial Reasoning")!;
  assert.deepEqual(spatial.range, { start: { line: 1, character: 10 }, end: { line: 1, character: 17 } });
  assert.equal(items.find((i) => i.label === "Moral Reasoning")!.detail, "ability");
});

test("a benchmark's ability label: the abilities this config declares", () => {
  const items = complete("benchmarks:\n  - task: a.yaml\n    ability: |\nabilities:\n  - name: Moral Reasoning\n    data: m.diag.jsonl\n");
  assert.ok(items.some((i) => i.label === "Moral Reasoning" && i.detail === "declared in this config's `abilities`"));
});

test("keys: those of the mapping the cursor is in, without the ones it has", () => {
  const keys = complete("models:\n  - path: ./m\n    dtype: float32\n    |\nbenchmarks: []\n").map((i) => i.label);
  assert.ok(keys.includes("chat_template") && keys.includes("name") && keys.includes("max_length"), keys.join(","));
  assert.ok(!keys.includes("path") && !keys.includes("dtype"), "present keys are not offered again");
  const top = complete("models: []\nbenchmarks: []\nabl|").map((i) => i.label);
  assert.ok(top.includes("ablation") && top.includes("abilities") && !top.includes("models"));
});

test("files and folders relative to the config; k from the paper's sweep with the parameters each zeroes; enums", () => {
  assert.deepEqual(
    complete("benchmarks:\n  - task: |").map((i) => i.insertText),
    ["./tasks/arc.yaml", "./tasks/sub/gsm8k.yaml"],
  );
  assert.deepEqual(
    complete("abilities:\n  - name: M\n    data: |").map((i) => i.insertText),
    ["./diag/moral.diag.jsonl"],
  );
  // each file of a list, block or flow (`sets: separate` makes each a diagnostic set of its own)
  for (const marked of [
    "abilities:\n  - name: M\n    data: [./diag/a.diag.jsonl, |]\n    sets: separate",
    "abilities:\n  - name: M\n    data:\n      - ./diag/a.diag.jsonl\n      - |",
  ])
    assert.deepEqual(
      complete(marked).map((i) => i.insertText),
      ["./diag/moral.diag.jsonl"],
      marked,
    );
  assert.deepEqual(
    complete("abilities:\n  - name: M\n    data: m.diag.jsonl\n    sets: |").map((i) => i.label),
    ["merged", "separate"],
  );
  assert.deepEqual(
    complete("models:\n  - path: |").map((i) => i.insertText),
    ["./models/tiny"],
  );
  const k = complete("ablation:\n  k: [0.00064, |]");
  assert.deepEqual(
    k.map((i) => Number(i.label)),
    [...PAPER_K_SWEEP],
  );
  assert.match(k.at(-1)!.documentation!, /tiny: n = 10,240 of 1,000,000/);
  assert.deepEqual(
    complete("models:\n  - path: ./m\n    dtype: |").map((i) => i.label),
    ["float32", "bfloat16", "float16"],
  );
  assert.deepEqual(
    complete("ablation:\n  k: [0.01]\n  method: |").map((i) => i.label),
    ["paper", "signed"],
  );
  assert.deepEqual(
    complete("ablation:\n  selections:\n    - |").map((i) => i.label),
    ["top", "top_chunked", "bottom", "random"],
  );
});

test("a benchmark's expects: the declared abilities, as list items (block and flow) and as the keys of weights", () => {
  const declared = "abilities:\n  - name: Moral Reasoning\n    data: m.diag.jsonl\n  - name: Spatial Reasoning\n    data: s.diag.jsonl\n";
  for (const marked of [
    `benchmarks:\n  - task: a.yaml\n    expects:\n      - Mor|\n${declared}`,
    `benchmarks:\n  - task: a.yaml\n    expects: [Spatial Reasoning, Mo|]\n${declared}`,
  ]) {
    const items = complete(marked);
    assert.deepEqual(items.map((i) => i.label).sort(), ["Moral Reasoning", "Spatial Reasoning"], marked);
    assert.equal(items[0]!.insertText, items[0]!.label, "a list item is the name alone");
  }
  const pairs = complete(`${declared}ablation:\n  k: [0.01]\n  pairs: [[Spatial Reasoning, Mo|]]\n`);
  assert.deepEqual(pairs.map((i) => i.label).sort(), ["Moral Reasoning", "Spatial Reasoning"], "the abilities of ablation.pairs");
  const of = complete(`${declared}  - name: Moral Reasoning (set B)\n    of: Mo|\n    data: m2.diag.jsonl\n`);
  assert.ok(
    of.some((i) => i.label === "Moral Reasoning"),
    "a second set's `of`: the declared abilities",
  );
  const keys = complete(`benchmarks:\n  - task: a.yaml\n    expects:\n      Spatial Reasoning: 0.6\n      Mo|\n${declared}`);
  assert.ok(
    keys.some((i) => i.label === "Moral Reasoning" && i.insertText === "Moral Reasoning: "),
    JSON.stringify(keys),
  );
});
