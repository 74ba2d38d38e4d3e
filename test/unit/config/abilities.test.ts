// `abilities`, `ablation`, `seed` and `bootstrap` in *.bprof.yaml: each check with the bad input
// that triggers it, and where it points (line and column).
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { loadProfile } from "../../../src/core/config/load";
import { parseConfig } from "../../../src/core/config/parse";
import { formatProblem, type Problem } from "../../../src/core/base/problems";
import { BUILT_IN_FLUENCY_TEXT } from "../../../src/core/prompts/fluencyText";
import { candidateCount, llamaParameterCount, readParameterCount, selectedCount } from "../../../src/core/model/parameters";
import { writeRandomLlama } from "../../support/randomLlama";
import { makeTinyProject, type TinyProject } from "../../support/tinyProject";

const FILE = "/p/x.bprof.yaml";
const HEAD = "models:\n  - path: m\nbenchmarks:\n  - task: t\n";

/** The schema problems of a config: HEAD plus `tail`, formatted. */
function schemaLines(tail: string): string[] {
  return parseConfig(HEAD + tail, FILE).problems.map(formatProblem);
}

test("a valid ability section parses", () => {
  const parsed = parseConfig(
    HEAD +
      "abilities:\n  - name: Deductive Reasoning\n    data: d.diag.jsonl\n  - name: Mine\n    data: [a.diag.jsonl, b.diag.jsonl]\n    limit: 10\n" +
      "ablation:\n  k: [0.01, 0.001]\n  selections: [top, bottom, random]\n  method: signed\n  front_removal: 1\n  back_removal: 0\n  batch_size: 4\nseed: 7\nbootstrap:\n  resamples: 200\n  confidence: 0.9\n",
    FILE,
  );
  assert.deepEqual(parsed.problems, []);
  assert.deepEqual(parsed.config!.abilities![1], { name: "Mine", data: ["a.diag.jsonl", "b.diag.jsonl"], limit: 10 });
  assert.deepEqual(parsed.config!.ablation!.k, [0.01, 0.001]);
  assert.equal(parsed.config!.ablation!.method, "signed");
});

test("ablation.stability is true or false, said where it is written", () => {
  assert.deepEqual(schemaLines("ablation:\n  k: [0.01]\n  stability: yes-please\n"), [
    "/p/x.bprof.yaml:7:14: error: `ablation.stability` must be boolean (field ablation.stability) [config.invalid-value]",
  ]);
  assert.deepEqual(schemaLines("ablation:\n  k: [0.01]\n  stability: true\n"), []);
});

test("the importance method is paper or signed, said where it is written", () => {
  assert.deepEqual(schemaLines("ablation:\n  k: [0.01]\n  method: absolute\n"), [
    "/p/x.bprof.yaml:7:11: error: `ablation.method` must be one of: paper, signed (field ablation.method) [config.not-allowed]",
  ]);
  assert.deepEqual(schemaLines("ablation:\n  k: [0.01]\n  method: [paper, signed]\n"), [], "both rules side by side");
  assert.deepEqual(parseConfig(HEAD + "ablation:\n  k: [0.01]\n  method: [signed, paper]\n", FILE).config!.ablation!.method, [
    "signed",
    "paper",
  ]);
  assert.deepEqual(schemaLines("ablation:\n  k: [0.01]\n  method: [paper, absolute]\n"), [
    "/p/x.bprof.yaml:7:19: error: `ablation.method[1]` must be one of: paper, signed (field ablation.method[1]) [config.not-allowed]",
  ]);
  assert.equal(schemaLines("ablation:\n  k: [0.01]\n  method: [paper, paper]\n").length, 1, "a rule named twice");
  assert.equal(schemaLines("ablation:\n  k: [0.01]\n  method: []\n").length, 1, "no rule");
});

test("`data` that is neither a file nor a list of files gets one message, on the value", () => {
  assert.deepEqual(schemaLines("abilities:\n  - name: A\n    data: 3\n"), [
    "/p/x.bprof.yaml:7:11: error: `abilities[0].data` is invalid: Diagnostic dataset (*.diag.jsonl) or a list of them, relative to this file or absolute. (field abilities[0].data) [config.invalid-value]",
  ]);
});

test("an empty file name in a `data` list points at that entry", () => {
  assert.deepEqual(schemaLines("abilities:\n  - name: A\n    data: [a.jsonl, '']\n"), [
    "/p/x.bprof.yaml:7:21: error: `abilities[0].data[1]` must NOT have fewer than 1 characters (field abilities[0].data[1]) [config.invalid-value]",
  ]);
});

test("an ability needs a name and data", () => {
  assert.deepEqual(schemaLines("abilities:\n  - data: a.jsonl\n"), [
    "/p/x.bprof.yaml:6:5: error: `abilities[0]` needs the field `name` (field abilities[0].name) [config.missing-field]",
  ]);
});

test("a repeated k is flagged on the repeat", () => {
  assert.deepEqual(schemaLines("abilities:\n  - name: A\n    data: a\nablation:\n  k: [0.01, 0.001, 0.01]\n"), [
    "/p/x.bprof.yaml:9:20: error: `ablation.k`: item 2 repeats item 0; every value must be different (field ablation.k[2]) [config.repeated-value]",
  ]);
});

test("k outside (0, 1) is flagged on the value", () => {
  assert.deepEqual(schemaLines("ablation:\n  k: [0, 1.5, 200]\n").sort(), [
    "/p/x.bprof.yaml:6:10: error: k = 1.5 is not a fraction of the parameters in (0, 1): did you mean 0.015 (1.5%)? (field ablation.k[1]) [config.k-out-of-range]",
    "/p/x.bprof.yaml:6:15: error: k = 200 is not a fraction of the parameters in (0, 1) (field ablation.k[2]) [config.k-out-of-range]",
    "/p/x.bprof.yaml:6:7: error: k = 0 is not a fraction of the parameters in (0, 1) (field ablation.k[0]) [config.k-out-of-range]",
  ]);
  const [percentage] = parseConfig(HEAD + "ablation:\n  k: [1.024]\n", FILE).problems;
  assert.equal(percentage!.data?.suggestion, "0.01024", "a k that looks like a percentage suggests k / 100");
});

test("k outside the paper's range (1e-5 to 0.01024, its sweep's ends) is a warning on the value, with the range", () => {
  assert.deepEqual(schemaLines("ablation:\n  k: [0.000001, 0.00001, 0.01024, 0.1]\n"), [
    "/p/x.bprof.yaml:6:7: warning: k = 0.000001 is outside the paper's range (0.00001 to 0.01024): so few parameters rarely change a score (field ablation.k[0]) [config.k-outside-paper]",
    "/p/x.bprof.yaml:6:35: warning: k = 0.1 is outside the paper's range (0.00001 to 0.01024): zeroing this many parameters tends to break the model on every benchmark alike (field ablation.k[3]) [config.k-outside-paper]",
  ]);
  const parsed = parseConfig(HEAD + "ablation:\n  k: [0.5]\n", FILE);
  assert.ok(parsed.config, "a warning leaves the config valid");
  assert.equal(parsed.problems[0]!.severity, "warning");
});

test("ablation needs k", () => {
  assert.deepEqual(schemaLines("ablation:\n  selections: [top]\n"), [
    "/p/x.bprof.yaml:6:3: error: `ablation` needs the field `k` (field ablation.k) [config.missing-field]",
  ]);
});

test("selections: unknown names and repeats", () => {
  assert.deepEqual(schemaLines("ablation:\n  k: [0.01]\n  selections: [top, rnd]\n"), [
    "/p/x.bprof.yaml:7:21: error: `ablation.selections[1]` must be one of: top, top_chunked, bottom, random (field ablation.selections[1]) [config.not-allowed]",
  ]);
  assert.deepEqual(schemaLines("ablation:\n  k: [0.01]\n  selections: [top, random, top]\n"), [
    "/p/x.bprof.yaml:7:29: error: `ablation.selections`: item 2 repeats item 0; every value must be different (field ablation.selections[2]) [config.repeated-value]",
  ]);
});

test("batch_size, removals, seed and bootstrap ranges", () => {
  assert.deepEqual(
    schemaLines(
      "ablation:\n  k: [0.01]\n  batch_size: 0\n  front_removal: -1\nseed: -2\nbootstrap:\n  resamples: 0\n  confidence: 1\n",
    ).sort(),
    [
      "/p/x.bprof.yaml:11:14: error: `bootstrap.resamples` must be >= 1 (field bootstrap.resamples) [config.invalid-value]",
      "/p/x.bprof.yaml:12:15: error: `bootstrap.confidence` must be < 1 (field bootstrap.confidence) [config.invalid-value]",
      "/p/x.bprof.yaml:7:15: error: `ablation.batch_size` must be >= 1 (field ablation.batch_size) [config.invalid-value]",
      "/p/x.bprof.yaml:8:18: error: `ablation.front_removal` must be >= 0 (field ablation.front_removal) [config.invalid-value]",
      "/p/x.bprof.yaml:9:7: error: `seed` must be >= 0 (field seed) [config.invalid-value]",
    ],
  );
});

test("a misspelt ablation key gets the nearest key", () => {
  assert.deepEqual(schemaLines("ablation:\n  k: [0.01]\n  selection: [top]\n"), [
    "/p/x.bprof.yaml:7:3: error: unknown key `selection`; did you mean `selections`? (field ablation.selection) [config.unknown-key]",
  ]);
});

// ---------------------------------------------------------------------------------------------
// Checks against the files: a tiny project with diagnostic datasets.

let project: TinyProject;
/** Parameters of the tiny model, from the writer's own count. */
let tiny: { parameters: number; mlpParameters: number };

const QUANT = "Quantitative Reasoning";
const SPATIAL = "Spatial Reasoning";

function diagItem(id: string, ability: string, n: number): string {
  return JSON.stringify({
    id,
    ability,
    context: `Box ${n} holds ${n} apples.`,
    question: `How many apples are in box ${n}?`,
    choices: [String(n), String(n + 1), String(n + 2)],
    answer: 0,
  });
}

before(async () => {
  project = await makeTinyProject(await fs.mkdtemp(path.join(os.tmpdir(), "bprof-ability-config-")));
  const dir = path.join(project.root, "diag");
  await fs.mkdir(dir);
  await fs.writeFile(path.join(dir, "quant.diag.jsonl"), [1, 2, 3, 4].map((n) => diagItem(`q${n}`, QUANT, n)).join("\n") + "\n");
  await fs.writeFile(path.join(dir, "spatial.diag.jsonl"), [5, 6, 7].map((n) => diagItem(`s${n}`, SPATIAL, n)).join("\n") + "\n");
  await fs.writeFile(
    path.join(dir, "mixed.diag.jsonl"),
    [diagItem("m1", QUANT, 11), diagItem("m2", "Moral Reasoning", 12), diagItem("m3", SPATIAL, 13)].join("\n") + "\n",
  );
  await fs.writeFile(
    path.join(dir, "broken.diag.jsonl"),
    diagItem("b1", QUANT, 21) +
      "\n" +
      JSON.stringify({ id: "b2", ability: QUANT, context: "", question: "Two plus two?", choices: ["4", "5"], answer: 2 }) +
      "\n",
  );
  tiny = writeRandomLlama(path.join(project.root, "check-model"));
});
after(async () => fs.rm(project.root, { recursive: true, force: true }));

const CONFIG_HEAD = "models:\n  - path: ./model\n    name: tiny-llama\nbenchmarks:\n  - task: ./tasks/tiny_mc.yaml\n";

async function load(tail: string) {
  return loadProfile(project.configPath, { text: CONFIG_HEAD + tail });
}

function only(problems: Problem[], pattern: RegExp): Problem {
  const found = problems.filter((d) => pattern.test(d.message));
  assert.equal(found.length, 1, `expected one problem matching ${pattern}, got:\n${problems.map(formatProblem).join("\n")}`);
  return found[0]!;
}

function at(d: Problem): string {
  return `${path.basename(d.file)}:${d.line}:${d.column}:${d.severity}:${d.field ?? ""}`;
}

test("the parameter count of config.json equals the tensors the model writer wrote", async () => {
  const count = (await readParameterCount(path.join(project.root, "check-model")))!;
  assert.equal(count.total, tiny.parameters);
  assert.equal(candidateCount(count), tiny.mlpParameters);
  assert.equal(candidateCount(count, 1, 0), tiny.mlpParameters / 2);
  // candidates: all adds each layer's q, k, v, o weights: 32x32, 16x32, 16x32, 32x32
  assert.equal(candidateCount(count, 0, 0, "all"), tiny.mlpParameters + 2 * (32 * 32 + 2 * 16 * 32 + 32 * 32));
  // By hand: V=258, H=32, I=64, L=2, 4 heads of 8, 2 kv heads; lm_head untied.
  assert.equal(count.total, 258 * 32 * 2 + 2 * (32 * 32 + 2 * 32 * 16 + 32 * 32 + 3 * 32 * 64 + 2 * 32) + 32);
  const tied = writeRandomLlama(path.join(project.root, "tied-model"), { tieWordEmbeddings: true, numLayers: 3, numKvHeads: 4 });
  assert.equal(llamaParameterCount(tied.config as unknown as Record<string, unknown>)!.total, tied.parameters);
  assert.equal(llamaParameterCount({ hidden_size: 4 }), undefined);
  // Qwen2: q/k/v biases (never on o_proj); Qwen3: q_norm and k_norm over head_dim, head_dim apart from the hidden size
  const sizes = { vocab_size: 300, hidden_size: 64, intermediate_size: 128, num_hidden_layers: 2, num_attention_heads: 4 };
  const qwen2 = { ...sizes, model_type: "qwen2", num_key_value_heads: 2, tie_word_embeddings: true };
  const layer2 = 64 * 64 + 2 * 64 * 32 + 64 * 64 + (64 + 2 * 32) + 3 * 64 * 128 + 2 * 64;
  assert.equal(llamaParameterCount(qwen2)!.total, 300 * 64 + 2 * layer2 + 64);
  const qwen3 = { ...sizes, model_type: "qwen3", num_key_value_heads: 2, head_dim: 32 };
  const layer3 = 64 * 128 + 2 * 64 * 64 + 128 * 64 + 2 * 32 + 3 * 64 * 128 + 2 * 64;
  assert.equal(llamaParameterCount(qwen3)!.total, 2 * 300 * 64 + 2 * layer3 + 64);
  assert.equal(llamaParameterCount({ ...sizes, model_type: "gpt2" }), undefined);
  assert.equal(selectedCount(0.001, 35104), 35);
});

test("ablation.fluency: a text of one's own and a threshold; an unreadable or empty text is an error at its line", async () => {
  const abilities = `abilities:\n  - name: ${QUANT}\n    data: ./diag/quant.diag.jsonl\n`;
  await fs.writeFile(path.join(project.root, "neutral.txt"), "A quiet morning.\n\nThe bread was warm.\n");
  await fs.writeFile(path.join(project.root, "blank.txt"), "\n  \n");
  const own = await load(abilities + "ablation:\n  k: [0.01]\n  fluency:\n    text: ./neutral.txt\n    max_perplexity_ratio: 1.5\n");
  assert.ok(own.profile, own.problems.map(formatProblem).join("\n"));
  assert.deepEqual(own.profile.ablation!.fluency, {
    source: path.join(project.root, "neutral.txt"),
    text: "A quiet morning.\n\nThe bread was warm.\n",
    maxPerplexityRatio: 1.5,
  });
  for (const [file, message] of [
    ["./missing.txt", /cannot read the fluency text .*missing\.txt/],
    ["./blank.txt", /the fluency text .*blank\.txt holds no text to score/],
  ] as const) {
    const { profile, problems } = await load(abilities + `ablation:\n  k: [0.01]\n  fluency:\n    text: ${file}\n`);
    assert.equal(profile, undefined);
    const problem = only(problems, message);
    assert.equal(problem.code, "config.invalid-value");
    assert.equal(problem.field, "ablation.fluency.text");
  }
  const low = await load(abilities + "ablation:\n  k: [0.01]\n  fluency:\n    max_perplexity_ratio: 1\n");
  assert.equal(low.profile, undefined, "a ratio of 1 marks every variant: refused by the schema");
});

test("a complete ability section resolves: k sorted, defaults, items of the named ability, limit", async () => {
  const { profile, problems } = await load(
    `abilities:\n  - name: ${QUANT}\n    data: [./diag/quant.diag.jsonl, ./diag/mixed.diag.jsonl]\n    limit: 5\n  - name: ${SPATIAL}\n    data: ./diag/spatial.diag.jsonl\n` +
      "ablation:\n  k: [0.01, 0.001]\n",
  );
  assert.ok(profile, problems.map(formatProblem).join("\n"));
  assert.deepEqual(
    profile.abilities.map((a) => [a.name, a.items.map((i) => i.id)]),
    [
      [QUANT, ["q1", "q2", "q3", "q4", "m1"]],
      [SPATIAL, ["s5", "s6", "s7"]],
    ],
  );
  assert.deepEqual(profile.ablation, {
    k: [0.001, 0.01],
    selections: ["top", "random"],
    methods: ["paper"],
    frontRemoval: 0,
    backRemoval: 0,
    batchSize: 8,
    stability: false,
    candidates: ["mlp"],
    fluency: { source: "built-in", text: BUILT_IN_FLUENCY_TEXT, maxPerplexityRatio: 2 },
  });
  assert.equal(profile.seed, 1);
  assert.deepEqual(profile.bootstrap, { resamples: 1000, confidence: 0.95 });
  // mixed.diag.jsonl holds an item of an ability the config does not declare: said once, on that entry.
  assert.equal(at(only(problems, /not declared in `abilities`/)), "tiny.bprof.yaml:8:37:warning:abilities[0].data[1]");
});

test("ablation.random_draws: a whole number from 1 to 100; more than 1 without `random` is a warning at the key", async () => {
  assert.deepEqual(schemaLines("ablation:\n  k: [0.01]\n  random_draws: 20\n"), []);
  assert.deepEqual(
    ["0", "101", "2.5"].map((draws) => schemaLines(`ablation:\n  k: [0.01]\n  random_draws: ${draws}\n`).length),
    [1, 1, 1],
  );
  assert.match(schemaLines("ablation:\n  k: [0.01]\n  random_draws: 101\n")[0]!, /7:17: error: `ablation.random_draws` must be <= 100/);
  const abilities = `abilities:\n  - name: ${QUANT}\n    data: ./diag/quant.diag.jsonl\n`;
  const drawn = await load(abilities + "ablation:\n  k: [0.01]\n  random_draws: 5\n");
  assert.ok(drawn.profile, drawn.problems.map(formatProblem).join("\n"));
  assert.equal(drawn.profile.ablation!.randomDraws, 5);
  assert.deepEqual(
    drawn.problems.filter((d) => /random_draws/.test(d.message)),
    [],
  );
  const one = await load(abilities + "ablation:\n  k: [0.01]\n  random_draws: 1\n");
  assert.equal("randomDraws" in one.profile!.ablation!, false, "one draw: the ablation of a config without the key");
  const none = await load(abilities + "ablation:\n  k: [0.01]\n  selections: [top, bottom]\n  random_draws: 5\n");
  assert.ok(none.profile, "a warning: the run draws nothing more");
  const d = only(none.problems, /`random_draws: 5` has no effect without `random`/);
  assert.equal(d.code, "config.no-effect");
  assert.equal(at(d), "tiny.bprof.yaml:12:3:warning:ablation.random_draws");
  assert.equal("randomDraws" in none.profile.ablation!, false);
});

test("abilities without ablation: an error on the `abilities` key", async () => {
  const { profile, problems } = await load(`abilities:\n  - name: ${QUANT}\n    data: ./diag/quant.diag.jsonl\n`);
  assert.equal(profile, undefined);
  const d = only(problems, /need `ablation`/);
  assert.equal(at(d), "tiny.bprof.yaml:6:1:error:abilities");
});

test("ablation and bootstrap without abilities: warnings, the run only scores", async () => {
  const { profile, problems } = await load("ablation:\n  k: [0.01]\nbootstrap:\n  resamples: 10\n");
  assert.ok(profile);
  assert.deepEqual(profile.abilities, []);
  assert.equal(profile.ablation, undefined);
  assert.equal(at(only(problems, /`ablation` has no effect/)), "tiny.bprof.yaml:6:1:warning:ablation");
  assert.equal(at(only(problems, /`bootstrap` has no effect/)), "tiny.bprof.yaml:8:1:warning:bootstrap");
});

test("an ability declared twice is an error on the second name", async () => {
  const { problems } = await load(
    `abilities:\n  - name: ${QUANT}\n    data: ./diag/quant.diag.jsonl\n  - name: ${QUANT}\n    data: ./diag/mixed.diag.jsonl\nablation:\n  k: [0.01]\n`,
  );
  assert.equal(at(only(problems, /declared twice/)), "tiny.bprof.yaml:9:11:error:abilities[1].name");
});

test("a near-miss of one of the paper's abilities is a warning on the name", async () => {
  const { profile, problems } = await load(
    "abilities:\n  - name: Quantitative Reasonig\n    data: ./diag/quant.diag.jsonl\nablation:\n  k: [0.01]\n",
  );
  const d = only(problems, /did you mean `Quantitative Reasoning`/);
  assert.equal(at(d), "tiny.bprof.yaml:7:11:warning:abilities[0].name");
  // Its items say "Quantitative Reasoning", so the misspelt ability has none: an error too.
  assert.equal(profile, undefined);
  assert.equal(at(only(problems, /no diagnostic item has/)), "tiny.bprof.yaml:8:11:error:abilities[0].data");
});

test("two declared names that are nearly the same: a warning on the second", async () => {
  await fs.writeFile(
    path.join(project.root, "diag", "moral.diag.jsonl"),
    [diagItem("x1", "Moral Reasoning", 31), diagItem("x2", "Moral reasoning!", 32)].join("\n") + "\n",
  );
  const { profile, problems } = await load(
    "abilities:\n  - name: Moral Reasoning\n    data: ./diag/moral.diag.jsonl\n  - name: Moral reasoning!\n    data: ./diag/moral.diag.jsonl\nablation:\n  k: [0.01]\n",
  );
  assert.ok(profile, problems.map(formatProblem).join("\n"));
  assert.equal(
    at(only(problems, /is almost the name of `Moral Reasoning`, declared above/)),
    "tiny.bprof.yaml:9:11:warning:abilities[1].name",
  );
});

test("a missing dataset file is an error on its entry", async () => {
  const { problems } = await load(
    `abilities:\n  - name: ${QUANT}\n    data: [./diag/quant.diag.jsonl, ./diag/nope.diag.jsonl]\nablation:\n  k: [0.01]\n`,
  );
  const d = only(problems, /diagnostic dataset not found/);
  assert.equal(at(d), "tiny.bprof.yaml:8:37:error:abilities[0].data[1]");
});

test("a dataset with errors: its own problems (file, line, column) and one on the config's entry", async () => {
  const { profile, problems } = await load(`abilities:\n  - name: ${QUANT}\n    data: ./diag/broken.diag.jsonl\nablation:\n  k: [0.01]\n`);
  assert.equal(profile, undefined);
  const inFile = only(problems, /`answer` 2 is out of range/);
  const line2 = JSON.stringify({ id: "b2", ability: QUANT, context: "", question: "Two plus two?", choices: ["4", "5"], answer: 2 });
  assert.equal(inFile.file, path.join(project.root, "diag", "broken.diag.jsonl"));
  assert.equal(`${inFile.line}:${inFile.column}`, `2:${line2.indexOf('"answer":2') + '"answer":'.length + 1}`);
  assert.equal(at(only(problems, /broken\.diag\.jsonl has errors/)), "tiny.bprof.yaml:8:11:error:abilities[0].data");
});

test("k too large for the model's MLP candidates is an error on that k, as written", async () => {
  const { profile, problems } = await load(
    `abilities:\n  - name: ${QUANT}\n    data: ./diag/quant.diag.jsonl\nablation:\n  k: [0.5, 0.01]\n`,
  );
  assert.equal(profile, undefined);
  const d = only(problems, /more than its/);
  assert.equal(at(d), "tiny.bprof.yaml:10:7:error:ablation.k[0]");
  const n = Math.floor(0.5 * tiny.parameters);
  assert.match(
    d.message,
    new RegExp(
      `selects floor\\(k x ${tiny.parameters}\\) = ${n} parameters of model \`tiny-llama\`, more than its ${tiny.mlpParameters} MLP candidates`,
    ),
  );
  // The largest k that fits passes.
  const share = tiny.mlpParameters / tiny.parameters;
  const ok = await load(`abilities:\n  - name: ${QUANT}\n    data: ./diag/quant.diag.jsonl\nablation:\n  k: [${share}]\n`);
  assert.ok(ok.profile, ok.problems.map(formatProblem).join("\n"));
});

test("candidates: [mlp, all]: k must fit each set, so the MLP's count holds it; a set named twice is refused", async () => {
  const abilities = `abilities:\n  - name: ${QUANT}\n    data: ./diag/quant.diag.jsonl\n`;
  // between the MLP's share and the attention and MLP weights' share: fits `all` alone, not the list
  const attention = 2 * (32 * 32 + 2 * 16 * 32 + 32 * 32);
  const k = (tiny.mlpParameters + attention / 2) / tiny.parameters;
  const alone = await load(`${abilities}ablation:\n  k: [${k}]\n  candidates: all\n`);
  assert.ok(alone.profile, alone.problems.map(formatProblem).join("\n"));
  const both = await load(`${abilities}ablation:\n  k: [${k}]\n  candidates: [mlp, all]\n`);
  assert.equal(both.profile, undefined);
  assert.match(only(both.problems, /more than its/).message, new RegExp(`more than its ${tiny.mlpParameters} MLP candidates`));
  const fits = await load(`${abilities}ablation:\n  k: [0.001]\n  candidates: [mlp, all]\n`);
  assert.deepEqual(fits.profile?.ablation?.candidates, ["mlp", "all"]);
  const one = await load(
    `${abilities}ablation:\n  k: [0.001]\n  method: [signed, paper]\n  candidates: [mlp, {set: all, method: paper}]\n`,
  );
  assert.deepEqual(one.profile?.ablation?.candidates, ["mlp", "all"]);
  assert.deepEqual(one.profile?.ablation?.candidateMethods, { all: ["paper"] });
  const foreign = await load(`${abilities}ablation:\n  k: [0.001]\n  method: paper\n  candidates: [mlp, {set: all, method: signed}]\n`);
  assert.equal(foreign.profile, undefined);
  assert.equal(
    at(only(foreign.problems, /is not a rule of `ablation.method`/)),
    "tiny.bprof.yaml:12:40:error:ablation.candidates[1].method",
  );
  const named = await load(`${abilities}ablation:\n  k: [0.001]\n  candidates: [all, {set: all, method: paper}]\n`);
  assert.match(only(named.problems, /named twice/).message, /`all` is named twice/);
  const twice = await load(`${abilities}ablation:\n  k: [0.001]\n  candidates: [all, all]\n`);
  assert.equal(twice.profile, undefined);
  assert.ok(
    twice.problems.some((d) => d.field?.startsWith("ablation.candidates")),
    twice.problems.map(formatProblem).join("\n"),
  );
});

test("layer removal shrinks the candidates; removing every layer is an error", async () => {
  const half = await load(`abilities:\n  - name: ${QUANT}\n    data: ./diag/quant.diag.jsonl\nablation:\n  k: [0.3]\n  front_removal: 1\n`);
  assert.match(only(half.problems, /more than its/).message, new RegExp(`${tiny.mlpParameters / 2} MLP candidates of layers 1..1`));
  const none = await load(
    `abilities:\n  - name: ${QUANT}\n    data: ./diag/quant.diag.jsonl\nablation:\n  k: [0.01]\n  front_removal: 1\n  back_removal: 1\n`,
  );
  assert.equal(at(only(none.problems, /excludes every layer/)), "tiny.bprof.yaml:11:18:error:ablation.front_removal");
});

test("a k that selects no parameter is a warning", async () => {
  const { profile, problems } = await load(
    `abilities:\n  - name: ${QUANT}\n    data: ./diag/quant.diag.jsonl\nablation:\n  k: [0.01, 0.00001]\n`,
  );
  assert.ok(profile);
  assert.equal(at(only(problems, /= 0 parameters/)), "tiny.bprof.yaml:10:13:warning:ablation.k[1]");
});

test("a benchmark's `ability` label: kept on the benchmark; a typo gets the nearest ability; an unknown one lists them", async () => {
  const head = "models:\n  - path: ./model\n    name: tiny-llama\nbenchmarks:\n  - task: ./tasks/tiny_mc.yaml\n    ability: ";
  const tail = `\nabilities:\n  - name: ${QUANT}\n    data: ./diag/quant.diag.jsonl\n  - name: ${SPATIAL}\n    data: ./diag/spatial.diag.jsonl\nablation:\n  k: [0.01]\n`;
  const labelled = await loadProfile(project.configPath, { text: head + SPATIAL + tail });
  assert.ok(labelled.profile, labelled.problems.map(formatProblem).join("\n"));
  assert.equal(labelled.profile.benchmarks[0]!.ability, SPATIAL);

  const typo = await loadProfile(project.configPath, { text: head + "Spatial Reasonin" + tail });
  assert.equal(typo.profile, undefined);
  assert.equal(
    at(only(typo.problems, /is not one of this config's abilities: did you mean `Spatial Reasoning`\?/)),
    "tiny.bprof.yaml:6:14:error:benchmarks[0].ability",
  );

  const unknown = await loadProfile(project.configPath, { text: head + "Moral Reasoning" + tail });
  assert.match(
    only(unknown.problems, /is not one of this config's abilities/).message,
    /\(`Quantitative Reasoning`, `Spatial Reasoning`\)/,
  );

  const unprofiled = await loadProfile(project.configPath, { text: head + SPATIAL + "\n" });
  assert.ok(unprofiled.profile);
  assert.equal(
    at(only(unprofiled.problems, /labels have no effect without `abilities`/)),
    "tiny.bprof.yaml:6:14:warning:benchmarks[0].ability",
  );
});
