// Trains the demo model from scratch and writes it to media/demo/model (`npm run demo:train`):
//
// 1. the training mixture: TRAIN_ITEMS_PER_ABILITY items of each of the ten generators (seed
//    DEMO_SEEDS.training), leaving out every item of the committed diagnostic datasets and
//    benchmarks (media/demo), so the profile and the benchmarks only ever see held-out items;
// 2. each item rendered as the importance loss reads it (diagnosticText.ts) and tokenized with the
//    byte-level tokenizer the model ships with, with the length of its prompt (up to "Answer:");
// 3. a `train` job (native-runner/PROTOCOL.md) run by bprof-runner on the CPU with one thread,
//    so the same job gives the same bytes on any machine;
// 4. the model folder: the runner's config.json and model.safetensors (float32), tokenizer.json,
//    tokenizer_config.json and training.json (this recipe, the loss curve, the held-out
//    accuracies and the time it took);
// 5. the held-out accuracy of every demo benchmark, scored by bprof-runner `score`.
//
//   npm run demo:train [-- --out DIR]
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { parseArgs } from "node:util";
import { loadProfile } from "../src/core/config/load";
import { ALL_GENERATORS, itemKey } from "../src/core/diagnostic/generators/index";
import type { DiagnosticItemFields } from "../src/core/diagnostic/item";
import { DEMO_CONFIG } from "../src/core/demo/demoWorkspace";
import { DEMO_SEEDS, heldOutKeys, TRAIN_ITEMS_PER_ABILITY, trainingItems } from "./lib/demoAuthoring";
import { formatProblem } from "../src/core/base/problems";
import { runLocal } from "../src/core/launch/local";
import { BOS_TOKEN_ID, BYTE_VOCAB_SIZE, EOS_TOKEN_ID, byteLevelTokenizer } from "./lib/byteTokenizer";
import { compileScoreJob } from "../src/core/plan/job";
import { renderDiagnosticItem } from "../src/core/prompts/diagnosticText";
import { inputTokens, loadTokenizer } from "../src/core/prompts/tokenize";
import { baselineAccuracies } from "../src/core/results/profile";
import { readRunnerScores, scoredItems } from "../src/core/results/items";

const THREADS = 1;
const MAX_POSITIONS = 256;

/** A Hugging Face Llama config.json; the runner reads it as it reads any model's. */
const MODEL_CONFIG = {
  architectures: ["LlamaForCausalLM"],
  model_type: "llama",
  vocab_size: BYTE_VOCAB_SIZE,
  hidden_size: 96,
  intermediate_size: 768,
  num_hidden_layers: 3,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  head_dim: 24,
  hidden_act: "silu",
  rms_norm_eps: 1e-5,
  rope_theta: 10000,
  rope_scaling: null,
  attention_bias: false,
  mlp_bias: false,
  max_position_embeddings: MAX_POSITIONS,
  tie_word_embeddings: true,
  initializer_range: 0.02,
  bos_token_id: BOS_TOKEN_ID,
  eos_token_id: EOS_TOKEN_ID,
  use_cache: true,
};

// prompt_weight: the loss weight of the predictions of an item's passage and question (the answer's
// weigh 1). At 1 the answers, where the abilities are, are ~10% of the loss. 0.1 gave the higher
// held-out Temporal in all four runs paired with a weight-1 one (0.96-0.97 with both seeds of the
// fifth session) but left the items so far from the boundary that the AIS diagonal fell to 4 of 10
// (media/demo/README.md), so the committed model keeps 1, which gives the same bytes as a job
// without prompt lengths.
const TRAIN = { steps: 26000, batch_size: 8, lr: 0.004, min_lr: 0.0004, warmup_steps: 200, weight_decay: 0.1, seed: 1, prompt_weight: 1 };

const root = path.resolve(import.meta.dirname, "..");
const workspace = path.join(root, "media", "demo");

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { out: { type: "string" } } });
  const modelDir = path.resolve(values.out ?? path.join(workspace, "model"));
  const runnerPath = process.env.BPROF_RUNNER ?? path.join(root, "native-runner", "build", "bprof-runner");
  const started = Date.now();

  // 1. The mixture, never an item of the diagnostic datasets or the benchmarks.
  const held = await heldOutKeys(workspace);
  const items = ALL_GENERATORS.flatMap((g) => trainingItems(g, held));
  if (items.some((it) => held.has(itemKey(it)))) throw new Error("a held-out item slipped into the training mixture");
  const distinct = new Set(items.map(itemKey)).size;

  // 2. Tokens, through the tokenizer the model ships with.
  const staging = `${modelDir}.new`;
  await fs.rm(staging, { recursive: true, force: true });
  await fs.mkdir(staging, { recursive: true });
  const { tokenizerJson, tokenizerConfig } = byteLevelTokenizer({ modelMaxLength: MAX_POSITIONS });
  await writeJson(path.join(staging, "tokenizer.json"), tokenizerJson);
  await writeJson(path.join(staging, "tokenizer_config.json"), tokenizerConfig);
  const tokenizer = await loadTokenizer(staging);
  const texts = items.map((it) => renderDiagnosticItem(it));
  const sequences = texts.map((text) => inputTokens(tokenizer, text));
  const promptLengths = items.map((it, i) => promptLength(sequences[i]!, inputTokens(tokenizer, promptText(it, texts[i]!))));
  const longest = sequences.reduce((most, s) => Math.max(most, s.length), 0);
  if (longest > MAX_POSITIONS) throw new Error(`a training sequence has ${longest} tokens, more than ${MAX_POSITIONS}`);
  const tokens = sequences.reduce((n, s) => n + s.length, 0);
  console.log(`training mixture: ${items.length} items (${distinct} distinct, none held out), ${tokens} tokens, longest ${longest}`);

  // 3. The runner trains.
  const work = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-demo-train-"));
  try {
    const jobFile = path.join(work, "job.json");
    await fs.writeFile(
      jobFile,
      JSON.stringify({
        protocol: 1,
        subcommand: "train",
        config: MODEL_CONFIG,
        device: "cpu",
        sequences,
        prompt_lengths: promptLengths,
        train: TRAIN,
      }),
    );
    const out = path.join(work, "out");
    let lastPercent = -1;
    const trainStarted = Date.now();
    await runLocal({
      runnerPath,
      subcommand: "train",
      jobFile,
      outDir: out,
      threads: THREADS,
      onEvent: (e) => {
        if (e.type !== "progress" || e.total === 0) return;
        const percent = Math.floor((100 * e.done) / e.total / 5) * 5;
        if (percent === lastPercent) return;
        lastPercent = percent;
        const loss = (e as { loss?: number }).loss;
        const elapsed = ((Date.now() - trainStarted) / 1000).toFixed(0);
        console.log(`train ${e.done}/${e.total}${loss === undefined ? "" : ` loss ${loss.toFixed(3)}`} (${elapsed} s)`);
      },
    });
    const trainSeconds = (Date.now() - trainStarted) / 1000;

    // 4. The model folder.
    const trained = JSON.parse(await fs.readFile(path.join(out, "train.json"), "utf8")) as { parameters: number; loss: number[] };
    await fs.copyFile(path.join(out, "model.safetensors"), path.join(staging, "model.safetensors"));
    await fs.copyFile(path.join(out, "config.json"), path.join(staging, "config.json"));
    await fs.rm(modelDir, { recursive: true, force: true });
    await fs.rename(staging, modelDir);

    // 5. Held-out accuracy on the demo's benchmarks.
    const heldOut = await heldOutAccuracy(runnerPath, modelDir, work);
    for (const b of heldOut)
      console.log(`held out  ${b.name.padEnd(20)} acc ${b.acc.toFixed(3)}  chance ${b.chance.toFixed(3)}  (${b.items} items)`);

    const every = Math.max(1, Math.floor(trained.loss.length / 50));
    const record = {
      what: "The demo model of Benchmark Profiler, trained from scratch by scripts/demo-train.ts (npm run demo:train).",
      parameters: trained.parameters,
      config: MODEL_CONFIG,
      train: TRAIN,
      threads: THREADS,
      mixture: {
        items_per_ability: TRAIN_ITEMS_PER_ABILITY,
        seed: DEMO_SEEDS.training,
        items: items.length,
        distinct_items: distinct,
        tokens,
        held_out: "no item of media/demo/diagnostic or media/demo/benchmarks (by normalized context and question)",
      },
      loss_every: every,
      loss: trained.loss.filter((_, i) => i % every === every - 1).map((l) => Number(l.toFixed(4))),
      final_loss_mean_of_last_100: Number(
        (trained.loss.slice(-100).reduce((a, b) => a + b, 0) / Math.min(100, trained.loss.length)).toFixed(4),
      ),
      held_out_accuracy: Object.fromEntries(
        heldOut.map((b) => [b.name, { acc: Number(b.acc.toFixed(4)), chance: b.chance, items: b.items }]),
      ),
      train_seconds: Math.round(trainSeconds),
      machine: `${os.cpus().length} x ${os.cpus()[0]?.model ?? "cpu"}`,
    };
    await writeJson(path.join(modelDir, "training.json"), record);
    const size = (await fs.stat(path.join(modelDir, "model.safetensors"))).size;
    console.log(
      `${modelDir}: ${trained.parameters} parameters, ${(size / 1e6).toFixed(2)} MB; training ${Math.round(trainSeconds)} s, all ${Math.round((Date.now() - started) / 1000)} s`,
    );
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
}

/** Accuracy of the model on every benchmark of the demo config, by the runner's `score`. */
async function heldOutAccuracy(runnerPath: string, modelDir: string, work: string) {
  const { profile, problems } = await loadProfile(path.join(workspace, DEMO_CONFIG));
  if (!profile) throw new Error(`the demo config does not load:\n${problems.map(formatProblem).join("\n")}`);
  const model = { name: "demo", path: modelDir, dtype: "float32" as const };
  const { job, refs } = compileScoreJob(model, profile.benchmarks, await loadTokenizer(modelDir), "cpu");
  const jobFile = path.join(work, "score.json");
  const out = path.join(work, "score");
  await fs.writeFile(jobFile, JSON.stringify(job));
  await runLocal({ runnerPath, subcommand: "score", jobFile, outDir: out, threads: THREADS });
  const scored = scoredItems(refs, profile.benchmarks, await readRunnerScores(path.join(out, "scores.jsonl")), "scores.jsonl");
  return baselineAccuracies(scored, profile.benchmarks);
}

/** The item as a benchmark prompt reads it: its rendered text up to "Answer:", before " " + the answer. */
function promptText(item: DiagnosticItemFields, rendered: string): string {
  return rendered.slice(0, rendered.length - item.choices[item.answer]!.length - 1);
}

/** Tokens the item's sequence shares with its prompt's (the prompt's may end in special tokens). */
function promptLength(sequence: readonly number[], prompt: readonly number[]): number {
  let n = 0;
  while (n < prompt.length && n < sequence.length - 1 && sequence[n] === prompt[n]) n++;
  return n;
}

async function writeJson(file: string, value: unknown): Promise<void> {
  await fs.writeFile(file, JSON.stringify(value, null, 2) + "\n");
}

main().catch((e: unknown) => {
  console.error(`demo-train: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
