// Diagnostic items as text and tokens, runner ids of abilities, and the `profile` job.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { loadProfile } from "../../../src/core/config/load";
import type { DiagnosticItem } from "../../../src/core/diagnostic/item";
import { BOS_TOKEN_ID } from "../../../scripts/lib/byteTokenizer";
import { ABILITY_ID_PATTERN, abilityIds, compileProfileJob, compileScoreJob } from "../../../src/core/plan/job";
import { BUILT_IN_FLUENCY_TEXT, fluencyItems } from "../../../src/core/prompts/fluencyText";
import { diagnosticSequence, renderDiagnosticItem } from "../../../src/core/prompts/diagnosticText";
import { loadTokenizer, type ModelTokenizer } from "../../../src/core/prompts/tokenize";
import { makeTinyProject, type TinyProject } from "../../support/tinyProject";

const utf8 = (text: string) => [...Buffer.from(text, "utf8")];

function item(fields: Partial<DiagnosticItem> = {}): DiagnosticItem {
  return {
    id: "i1",
    ability: "Deductive Reasoning",
    context: "All cats purr. Tom is a cat.",
    question: "Does Tom purr?",
    choices: ["no", "yes"],
    answer: 1,
    line: 1,
    ...fields,
  };
}

test("an item renders as context, question and the correct answer, one a line", () => {
  assert.equal(renderDiagnosticItem(item()), "All cats purr. Tom is a cat.\nDoes Tom purr?\nAnswer: yes");
});

test("an empty or blank context is left out; other text is used as written", () => {
  assert.equal(renderDiagnosticItem(item({ context: "" })), "Does Tom purr?\nAnswer: yes");
  assert.equal(renderDiagnosticItem(item({ context: "  \n" })), "Does Tom purr?\nAnswer: yes");
  assert.equal(
    renderDiagnosticItem(item({ context: " spaced ", question: "Q? ", choices: [" a", "b "], answer: 0 })),
    " spaced \nQ? \nAnswer:  a",
  );
});

test("an answer outside the choices is refused", () => {
  assert.throws(() => renderDiagnosticItem(item({ answer: 2 })), /answer 2 is not an index into 2 choices/);
});

let project: TinyProject;
let tokenizer: ModelTokenizer;
before(async () => {
  project = await makeTinyProject(await fs.mkdtemp(path.join(os.tmpdir(), "bprof-profile-job-")));
  tokenizer = await loadTokenizer(project.modelDir);
});
after(async () => fs.rm(project.root, { recursive: true, force: true }));

test("a sequence is the rendered text with the tokenizer's BOS in front (byte tokenizer: ids are bytes)", () => {
  assert.deepEqual(diagnosticSequence(tokenizer, item()), [
    BOS_TOKEN_ID,
    ...utf8("All cats purr. Tom is a cat.\nDoes Tom purr?\nAnswer: yes"),
  ]);
  assert.deepEqual(diagnosticSequence(tokenizer, item({ context: "", question: "Ça va?", choices: ["oui", "non"], answer: 0 })), [
    BOS_TOKEN_ID,
    ...utf8("Ça va?\nAnswer: oui"),
  ]);
});

test("a sequence shorter than 2 tokens is refused", () => {
  const tiny: ModelTokenizer = {
    encode: () => [],
    specials: { before: [7], after: [], source: "tokenizer" },
    bosText: { loglikelihood: "<s>" },
    prefixTokenId: 0,
    decode: () => "",
  };
  assert.throws(() => diagnosticSequence(tiny, item()), /renders to 1 token\(s\); the importance loss needs at least 2/);
});

test("ability ids: slugs of the names, file-safe and unique, never `random`", () => {
  assert.deepEqual(abilityIds(["Quantitative Reasoning", "Commonsense & Causal Reasoning", "Long-term Knowledge"]), [
    "quantitative-reasoning",
    "commonsense-and-causal-reasoning",
    "long-term-knowledge",
  ]);
  assert.deepEqual(abilityIds(["Spatial Reasoning", "spatial reasoning!", "Spatial  Reasoning"]), [
    "spatial-reasoning",
    "spatial-reasoning-2",
    "spatial-reasoning-3",
  ]);
  assert.deepEqual(abilityIds(["Random", "random"]), ["random-2", "random-3"]);
  assert.deepEqual(abilityIds(["Raisonnement déductif", "推理", "..."]), ["raisonnement-deductif", "ability", "ability-2"]);
  assert.deepEqual(abilityIds(["x".repeat(100) + " y"]), ["x".repeat(64)]);
  for (const id of abilityIds(["A.B", "-lead", "é", "Q&A"])) assert.match(id, ABILITY_ID_PATTERN);
  assert.deepEqual(abilityIds(["A.B", "Q&A"]), ["a-b", "q-and-a"]);
});

const QUANT = "Quantitative Reasoning";
const SPATIAL = "Spatial Reasoning";

test("the profile job is the score job plus abilities (one sequence per item) and the ablation, k ascending", async () => {
  const diag = (id: string, ability: string, n: number, context = "") =>
    JSON.stringify({ id, ability, context, question: `What is ${n} + ${n}?`, choices: [String(2 * n), String(2 * n + 1)], answer: 0 });
  await fs.writeFile(
    path.join(project.root, "d.diag.jsonl"),
    [diag("a", QUANT, 1, "Sums."), diag("b", QUANT, 2), diag("c", SPATIAL, 3)].join("\n") + "\n",
  );
  const text =
    "models:\n  - path: ./model\n    name: tiny-llama\nbenchmarks:\n  - task: ./tasks/tiny_mc.yaml\n" +
    `abilities:\n  - name: ${QUANT}\n    data: ./d.diag.jsonl\n  - name: ${SPATIAL}\n    data: ./d.diag.jsonl\n` +
    "ablation:\n  k: [0.01, 0.001]\n  selections: [top, top_chunked, bottom, random]\n  back_removal: 1\n  batch_size: 2\nseed: 42\n";
  const { profile, problems } = await loadProfile(project.configPath, { text });
  assert.ok(profile, JSON.stringify(problems));
  const model = profile.models[0]!;
  const { job, refs, abilities } = compileProfileJob(
    model,
    profile.benchmarks,
    { abilities: profile.abilities, ablation: profile.ablation!, seed: profile.seed },
    tokenizer,
    "cpu",
  );
  const score = compileScoreJob(model, profile.benchmarks, tokenizer, "cpu");

  assert.deepEqual(Object.keys(job), ["protocol", "subcommand", "model", "device", "items", "abilities", "ablation"]);
  assert.equal(job.subcommand, "profile");
  // the benchmarks' items, then the fluency text's paragraphs, scored in the same pass
  assert.deepEqual(job.items, [...score.job.items, ...fluencyItems(tokenizer, BUILT_IN_FLUENCY_TEXT, model.maxLength)]);
  assert.deepEqual(refs, score.refs);
  assert.deepEqual(job.abilities, [
    {
      id: "quantitative-reasoning",
      sequences: [
        [BOS_TOKEN_ID, ...utf8("Sums.\nWhat is 1 + 1?\nAnswer: 2")],
        [BOS_TOKEN_ID, ...utf8("What is 2 + 2?\nAnswer: 4")],
      ],
    },
    { id: "spatial-reasoning", sequences: [[BOS_TOKEN_ID, ...utf8("What is 3 + 3?\nAnswer: 6")]] },
  ]);
  assert.deepEqual(job.ablation, {
    k: [0.001, 0.01],
    selections: ["top", "top_chunked", "bottom", "random"],
    method: "paper",
    front_removal: 0,
    back_removal: 1,
    batch_size: 2,
    seed: 42,
  });
  assert.deepEqual(abilities, [
    { id: "quantitative-reasoning", name: QUANT, sequences: 2 },
    { id: "spatial-reasoning", name: SPATIAL, sequences: 1 },
  ]);
  // What goes to the runner is plain JSON: it survives a round trip unchanged.
  assert.deepEqual(JSON.parse(JSON.stringify(job)), job);

  // stability goes to the runner only when asked for, so a job without it has the bytes it had before
  const halves = await loadProfile(project.configPath, { text: text.replace("  batch_size: 2\n", "  batch_size: 2\n  stability: true\n") });
  assert.ok(halves.profile, JSON.stringify(halves.problems));
  const halvesJob = compileProfileJob(
    model,
    halves.profile.benchmarks,
    { abilities: halves.profile.abilities, ablation: halves.profile.ablation!, seed: 42 },
    tokenizer,
    "cpu",
  ).job;
  assert.equal(halvesJob.ablation.stability, true);
  assert.equal("stability" in job.ablation, false);

  // random_draws too: more than 1 goes to the runner after the seed; 1, or no `random` to draw, leaves the job as it was
  const drawsJob = async (draws: string, selections = "[top, top_chunked, bottom, random]") => {
    const loaded = await loadProfile(project.configPath, {
      text: text
        .replace("  batch_size: 2\n", `  batch_size: 2\n  random_draws: ${draws}\n`)
        .replace("[top, top_chunked, bottom, random]", selections),
    });
    assert.ok(loaded.profile, JSON.stringify(loaded.problems));
    const { ablation } = loaded.profile;
    return compileProfileJob(
      model,
      loaded.profile.benchmarks,
      { abilities: loaded.profile.abilities, ablation: ablation!, seed: 42 },
      tokenizer,
      "cpu",
    ).job;
  };
  const three = await drawsJob("3");
  assert.deepEqual(Object.keys(three.ablation), [
    "k",
    "selections",
    "method",
    "front_removal",
    "back_removal",
    "batch_size",
    "seed",
    "random_draws",
  ]);
  assert.equal(three.ablation.random_draws, 3);
  assert.equal(JSON.stringify(await drawsJob("1")), JSON.stringify(job), "one draw: the job's bytes as before the key");
  assert.equal("random_draws" in job.ablation, false);
  assert.equal("random_draws" in (await drawsJob("3", "[top]")).ablation, false, "no random control to draw again");
});

test("the compiler refuses what the runner would refuse", async () => {
  const { profile } = await loadProfile(project.configPath);
  const model = profile!.models[0]!;
  const ablation = {
    k: [0.01, 0.01],
    selections: ["top" as const],
    methods: ["paper" as const],
    frontRemoval: 0,
    backRemoval: 0,
    batchSize: 8,
    stability: false,
  };
  assert.throws(
    () => compileProfileJob(model, profile!.benchmarks, { abilities: [], ablation, seed: 1 }, tokenizer, "cpu"),
    /at least one ability/,
  );
  const abilities = [{ name: QUANT, files: [], items: [item()] }];
  assert.throws(
    () => compileProfileJob(model, profile!.benchmarks, { abilities, ablation, seed: 1 }, tokenizer, "cpu"),
    /k = 0.01 appears twice/,
  );
  assert.throws(
    () =>
      compileProfileJob(model, profile!.benchmarks, { abilities: [{ ...abilities[0]!, items: [] }], ablation, seed: 1 }, tokenizer, "cpu"),
    /has no diagnostic items/,
  );
});
