// Drafting diagnostic items with a model, both with real runs of the runner: `bprof-runner train`
// makes a tiny byte-level Llama that, given each of the drafting prompts, writes a new item in the
// prompt's form; `bprof generate --model` then drafts a set with it that passes the dataset checks
// (written unreviewed, with the model and the prompt under meta.draft). An untrained model of the
// same shape writes garbage: every draft is reported with its reason and no line is written.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { BYTE_VOCAB_SIZE, byteLevelTokenizer } from "../../scripts/lib/byteTokenizer";
import { checkDiagnosticDataset } from "../../src/core/diagnostic/dataset";
import { draftPrompts, promptHash, promptLine } from "../../src/core/diagnostic/draft/prompt";
import { findGenerator, generateItems, toJsonl } from "../../src/core/diagnostic/generators/index";
import { inputTokens, loadTokenizer } from "../../src/core/prompts/tokenize";
import { bprof, runnerPath } from "../support/cli";
import { runRunnerJob } from "../support/runnerJob";

const ABILITY = "Deductive Reasoning";
const DRAFTS = 3;
const SHOTS = 1;
const SEED = 1;
const MODEL = {
  model_type: "llama",
  vocab_size: BYTE_VOCAB_SIZE,
  hidden_size: 64,
  intermediate_size: 128,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  max_position_embeddings: 1024,
  rms_norm_eps: 1e-5,
  bos_token_id: 256,
  eos_token_id: 257,
  tie_word_embeddings: false,
};

let root: string;
let examplesFile: string;
/** The generator's items: the first 20 are the prompts' examples, the next ones what the model learns to write. */
let items: ReturnType<typeof generateItems>;

async function writeModel(dir: string, steps: number, sequences: number[][], promptLengths: number[]): Promise<void> {
  const train = {
    steps,
    batch_size: sequences.length,
    lr: 0.01,
    min_lr: 0.001,
    warmup_steps: Math.min(10, steps),
    seed: 3,
    prompt_weight: 0,
  };
  await runRunnerJob("train", { config: MODEL, sequences, prompt_lengths: promptLengths, train }, dir);
  const { tokenizerJson, tokenizerConfig } = byteLevelTokenizer({ modelMaxLength: MODEL.max_position_embeddings });
  await fs.writeFile(path.join(dir, "tokenizer.json"), JSON.stringify(tokenizerJson));
  await fs.writeFile(path.join(dir, "tokenizer_config.json"), JSON.stringify(tokenizerConfig));
}

before(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-draft-"));
  const found = findGenerator(ABILITY);
  if ("error" in found) throw new Error(found.error);
  items = generateItems(found.generator, { n: 20 + DRAFTS, seed: 1 });
  examplesFile = path.join(root, "examples.diag.jsonl");
  await fs.writeFile(examplesFile, toJsonl(items.slice(0, 20)));
  // the drafting prompts exactly as `generate --model` builds them, each followed by a new item
  const model = path.join(root, "writer");
  await fs.mkdir(model, { recursive: true });
  await writeModel(model, 0, [[256, 1]], [1]); // for its tokenizer only; trained below
  const tokenizer = await loadTokenizer(model);
  const prompts = draftPrompts(ABILITY, items.slice(0, 20), DRAFTS, SHOTS, SEED);
  const contexts = prompts.map((p) => inputTokens(tokenizer, p, "generation"));
  const sequences = contexts.map((c, i) => [...c, ...tokenizer.encode(promptLine(items[20 + i]!) + "\n")]);
  await writeModel(
    model,
    300,
    sequences,
    contexts.map((c) => c.length),
  );
  await writeModel(
    path.join(root, "garbage"),
    0,
    sequences,
    contexts.map((c) => c.length),
  );
});

after(() => fs.rm(root, { recursive: true, force: true }));

test("a model trained to write items in the prompt's form drafts a set that passes the checks", { timeout: 300_000 }, async () => {
  const out = path.join(root, "drafts.diag.jsonl");
  const args = ["--ability", ABILITY, "--n", String(DRAFTS), "--shots", String(SHOTS), "--seed", String(SEED), "--examples", examplesFile];
  const r = await bprof(
    ["generate", "--model", path.join(root, "writer"), ...args, "--max-tokens", "300", "--out", out, "--runner", runnerPath],
    {
      timeout: 240_000,
    },
  );
  assert.equal(r.exitCode, 0, r.stderr);
  assert.match(r.stderr, new RegExp(`${DRAFTS} of ${DRAFTS} drafts passed the checks -> .*drafts\\.diag\\.jsonl`));
  const check = checkDiagnosticDataset(out, await fs.readFile(out, "utf8"));
  assert.deepEqual(
    check.problems.filter((p) => p.severity === "error"),
    [],
  );
  assert.equal(check.items.length, DRAFTS);
  const prompts = draftPrompts(ABILITY, items.slice(0, 20), DRAFTS, SHOTS, SEED);
  check.items.forEach((item, i) => {
    const target = items[20 + i]!;
    assert.deepEqual([item.ability, item.question, item.choices, item.answer], [ABILITY, target.question, target.choices, target.answer]);
    assert.equal(item.id, `deductive-draft-${SEED}-${i + 1}`);
    const draft = (item.meta as { draft: Record<string, unknown> }).draft;
    assert.equal(draft.model, path.join(root, "writer"));
    assert.equal(draft.prompt, prompts[i]);
    assert.equal(draft.prompt_sha256, promptHash(prompts[i]!));
    assert.equal(draft.decoding, "greedy");
  });
});

test("a model that writes garbage: each draft's reason, and no line written", { timeout: 120_000 }, async () => {
  const out = path.join(root, "garbage.diag.jsonl");
  const r = await bprof(
    [
      "generate",
      "--model",
      path.join(root, "garbage"),
      "--ability",
      ABILITY,
      "--n",
      "3",
      "--shots",
      "1",
      "--examples",
      examplesFile,
      "--max-tokens",
      "24",
      "--out",
      out,
      "--runner",
      runnerPath,
    ],
    { timeout: 100_000 },
  );
  assert.equal(r.exitCode, 1, r.stderr);
  for (const i of [1, 2, 3])
    assert.match(r.stderr, new RegExp(`^draft ${i}: not written: (not a JSON object|the model wrote nothing)`, "m"));
  assert.match(r.stderr, /none of the 3 drafts passed; nothing written/);
  assert.equal(await fs.stat(out).catch(() => undefined), undefined);
});
