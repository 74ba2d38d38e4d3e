// The runner against transformers itself (issue 33). test/support/transformersGolden.py makes one
// tiny random model per family the runner loads (llama, Llama 3.1's rope_scaling llama3, mistral,
// qwen2, qwen3, granite, olmo2, phi3, gemma2, gemma3_text, and the mixtures of experts mixtral and
// qwen3_moe) with transformers' own config classes and save_pretrained, loads each back with
// from_pretrained in float64, and writes what it computes there: every choice's log-likelihood (and
// each token's), and per ability r = -theta * g of every MLP weight (every expert's) by torch
// autograd over the runner's batches, and the scores with each rule's top n zeroed. Then the real
// bprof-runner runs `score` and `profile` on each folder (and `score` on a mixture's experts fused
// as transformers holds them in memory), and every number is checked against those.
//
// Tolerances: log-likelihoods to 1e-5 relative (of the value, or of 1 nat for a value under 1);
// importances by rank: the importance transformers gives the runner's i-th ranked weight is within
// 1e-5 of the largest importance of the i-th largest, for every ranked weight; the top-n sets at
// each k equal (a weight within that same 1e-5 of the n-th importance may change places with one
// on the other side of it: a tie at float32 precision; none does with these models); the lowering
// counts equal. Skips, saying why, where .venv-parity (scripts/parity-env.sh) is absent.
import assert from "node:assert/strict";
import { execa } from "execa";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, test, type TestContext } from "node:test";
import { candidateCount, llamaParameterCount } from "../../src/core/model/parameters";
import { repoRoot, runnerPath } from "../support/cli";
import { parityPython, paritySkip } from "../support/parityPython";

const GOLDEN_SCRIPT = path.join(repoRoot, "test", "support", "transformersGolden.py");
const FAMILIES = ["llama", "llama3", "mistral", "qwen2", "qwen3", "granite", "olmo2", "phi3", "gemma2", "gemma3", "mixtral", "qwen3_moe"];
const BOS = 256;
const EOS = 257;
const VOCAB = 300; // transformersGolden.py's vocab_size
const RELATIVE = 1e-5;
const K = [0.001, 0.01];
const METHODS = ["paper", "signed"] as const;
const BATCH_SIZE = 2;

const utf8 = (text: string) => [...Buffer.from(text, "utf8")];

interface Item {
  id: string;
  context: number[];
  choices: number[][];
}

// Contexts from 1 to 70 tokens: past mistral's window (8), qwen2's (6) and the llama3 model's
// original_max_position_embeddings (64); choices of one token (per-token log-likelihoods, the
// vocabulary's last id among them) and of up to 36.
const ITEMS: Item[] = [
  { id: "cat", context: [BOS, ...utf8("The cat sat on the mat and then")], choices: [" slept", " ran away quickly", " ate"].map(utf8) },
  { id: "sum", context: [BOS, ...utf8("Question: what is two plus two?\nAnswer:")], choices: [" 4", " four", " 5\n"].map(utf8) },
  { id: "one", context: [BOS], choices: [utf8("A"), utf8(" cdefghijklmnopqrstuvwxyz0123456789"), [EOS]] },
  {
    id: "next-token",
    context: [BOS, ...utf8("Once upon a time, in a land far away, there lived a king who had three daughters.")],
    choices: [[32], [97], [116], [EOS], [VOCAB - 1]],
  },
  {
    id: "story",
    context: [BOS, ...utf8("It was a dark and stormy night; the rain fell in torrents, except")],
    choices: [" at", " when it stopped"].map(utf8),
  },
];

// Greedy generation (generate_until items) from short and long contexts, past the windows and
// the llama3 model's original_max_position_embeddings as they go, stopping at EOS.
const GENERATE = [
  { id: "short", context: [BOS, ...utf8("Hello")], max_tokens: 12 },
  { id: "long", context: [BOS, ...utf8("Once upon a time, in a land far away, there lived a king who")], max_tokens: 10 },
];
// A step whose top two logits lie this close (in float64) is a tie at float32 precision: the
// runner may pick either, and what follows is no longer comparable.
const GREEDY_TIE = 1e-4;

const ABILITIES = [
  {
    id: "quant",
    sequences: ["1+1=2", "12*3=36, so 36/4=9.", "The sum of 7 and 8 is 15.", "If x=3 then 2x+1=7.", "Half of 50 is 25", "9-4=5"].map(
      (s) => [BOS, ...utf8(s)],
    ),
  },
  {
    id: "spatial",
    sequences: [
      "The box is left of the chair.",
      "Up is the opposite of down.",
      "North of the river lies the town, east of the hill.",
      "A is above B.",
    ].map((s) => [BOS, ...utf8(s)]),
  },
];

interface ExpectedChoice {
  logprob: number;
  token_logprobs: number[];
  greedy: boolean;
}
interface ExpectedItem {
  id: string;
  choices: ExpectedChoice[];
}
interface ExpectedGeneration {
  id: string;
  generated: number[];
  margins: number[];
}
interface ExpectedFamily {
  model: string;
  /** A mixture of experts' same weights with the experts fused as transformers holds them in memory. */
  fused_model: string | null;
  config: Record<string, unknown>;
  parameters: number;
  candidates: { name: string; numel: number }[];
  scores: ExpectedItem[];
  generations: ExpectedGeneration[];
  abilities: Record<string, { rise: string; ablated: Record<string, ExpectedItem[]> }>;
}
interface Expected {
  torch: string;
  transformers: string;
  families: Record<string, ExpectedFamily>;
}
interface RunnerItem {
  id: string;
  choices: { logprob: number; tokens: number; greedy: boolean }[];
}

let scratch: string | undefined;
let golden: Promise<Expected> | undefined;

/** transformersGolden.py once for the file: every family's model and expected values. */
function expected(): Promise<Expected> {
  golden ??= (async () => {
    scratch = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-transformers-"));
    const spec = path.join(scratch, "spec.json");
    await fs.writeFile(
      spec,
      JSON.stringify({
        items: ITEMS,
        abilities: ABILITIES,
        k: K,
        batch_size: BATCH_SIZE,
        methods: METHODS,
        generate: GENERATE,
        stop: [EOS],
      }),
    );
    const golden = path.join(scratch, "golden");
    const run = await execa(parityPython, [GOLDEN_SCRIPT, spec, golden], {
      reject: false,
      timeout: 480_000,
      env: { HF_HUB_OFFLINE: "1", TRANSFORMERS_VERBOSITY: "error", TQDM_DISABLE: "1" },
    });
    assert.equal(run.exitCode, 0, `transformersGolden.py failed:\n${run.stderr}`);
    return JSON.parse(await fs.readFile(path.join(golden, "expected.json"), "utf8")) as Expected;
  })();
  return golden;
}
after(async () => {
  if (scratch !== undefined) await fs.rm(scratch, { recursive: true, force: true });
});

/** `bprof-runner <subcommand>` on a job; throws with the runner's last event when it fails. */
async function runner(subcommand: "score" | "profile", job: object, out: string): Promise<void> {
  const jobFile = `${out}.job.json`;
  await fs.writeFile(jobFile, JSON.stringify({ protocol: 1, subcommand, device: "cpu", ...job }));
  const run = await execa(runnerPath, [subcommand, "--job", jobFile, "--out", out], { reject: false, timeout: 120_000 });
  assert.equal(run.exitCode, 0, `bprof-runner ${subcommand} failed:\n${run.stdout.trim().split("\n").at(-1)}\n${run.stderr}`);
}

async function readJsonl<T>(file: string): Promise<T[]> {
  return (await fs.readFile(file, "utf8"))
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as T);
}

/** Little-endian float64 / int64 files (the copy aligns the bytes). */
async function readF64(file: string): Promise<Float64Array> {
  const bytes = await fs.readFile(file);
  return new Float64Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
}
async function readRanking(file: string): Promise<number[]> {
  const bytes = await fs.readFile(file);
  return Array.from(new BigInt64Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length)), Number);
}

/** |a - b| relative to b, or to 1 where |b| < 1 (a log-likelihood near 0). */
const relative = (a: number, b: number) => Math.abs(a - b) / Math.max(Math.abs(b), 1);

/** The runner's scores against transformers': the largest relative difference; greedy and token counts equal. */
function compareScores(what: string, got: RunnerItem[], want: ExpectedItem[], items: Item[]): number {
  assert.equal(got.length, want.length, what);
  let worst = 0;
  got.forEach((item, i) => {
    assert.equal(item.id, want[i]!.id, what);
    assert.equal(item.choices.length, want[i]!.choices.length, `${what} ${item.id}`);
    item.choices.forEach((choice, c) => {
      const ref = want[i]!.choices[c]!;
      const difference = relative(choice.logprob, ref.logprob);
      worst = Math.max(worst, difference);
      assert.ok(difference <= RELATIVE, `${what} ${item.id} choice ${c}: runner ${choice.logprob}, transformers ${ref.logprob}`);
      assert.equal(choice.greedy, ref.greedy, `${what} ${item.id} choice ${c}: greedy`);
      assert.equal(choice.tokens, items[i]!.choices[c]!.length, `${what} ${item.id} choice ${c}: tokens`);
    });
  });
  return worst;
}

/** Candidate indices by importance, largest first, ties to the smaller index (PROTOCOL.md). */
function ranked(importance: Float64Array): number[] {
  return Array.from(importance.keys()).sort((a, b) => importance[b]! - importance[a]! || a - b);
}

test(
  "bprof-runner score on transformers' own models of every family: each choice's and each token's log-likelihood to 1e-5 relative",
  { skip: paritySkip, timeout: 600_000 },
  async (t: TestContext) => {
    const golden = await expected();
    for (const family of FAMILIES) {
      const want = golden.families[family]!;
      const out = path.join(scratch!, `score-${family}`);
      await runner("score", { model: { path: want.model, dtype: "float32" }, items: ITEMS }, out);
      const worst = compareScores(`${family} score`, await readJsonl<RunnerItem>(path.join(out, "scores.jsonl")), want.scores, ITEMS);
      // a one-token choice's log-likelihood is its token's: the next-token item's are transformers' per-token values
      want.scores.forEach((item) =>
        item.choices.forEach((c) => assert.ok(Math.abs(c.token_logprobs.reduce((a, v) => a + v, 0) - c.logprob) < 1e-9)),
      );
      t.diagnostic(
        `${family}: max relative difference of a log-likelihood ${worst.toExponential(2)} (transformers ${golden.transformers}, torch ${golden.torch})`,
      );
      if (want.fused_model) {
        const fused = path.join(scratch!, `score-${family}-fused`);
        await runner("score", { model: { path: want.fused_model, dtype: "float32" }, items: ITEMS }, fused);
        const worstFused = compareScores(
          `${family} fused experts`,
          await readJsonl<RunnerItem>(path.join(fused, "scores.jsonl")),
          want.scores,
          ITEMS,
        );
        t.diagnostic(`${family}, experts fused as [experts, 2 x intermediate, hidden]: ${worstFused.toExponential(2)}`);
      }
    }
  },
);

test(
  "bprof-runner score generates as transformers' greedy decoding on every family's model (up to a float32 tie of the top two logits)",
  { skip: paritySkip, timeout: 300_000 },
  async (t: TestContext) => {
    const golden = await expected();
    let steps = 0;
    let compared = 0;
    for (const family of FAMILIES) {
      const want = golden.families[family]!;
      const out = path.join(scratch!, `generate-${family}`);
      const items = GENERATE.map((g) => ({ id: g.id, context: g.context, generate: { max_tokens: g.max_tokens, stop: [[EOS]] } }));
      await runner("score", { model: { path: want.model, dtype: "float32" }, items }, out);
      const got = await readJsonl<{ id: string; generated: number[]; stopped: boolean }>(path.join(out, "scores.jsonl"));
      assert.equal(got.length, want.generations.length, family);
      got.forEach((line, i) => {
        const ref = want.generations[i]!;
        assert.equal(line.id, ref.id, family);
        const tie = ref.margins.findIndex((m) => m < GREEDY_TIE);
        const comparable = tie === -1 ? ref.generated.length : tie;
        steps += ref.generated.length;
        compared += comparable;
        // up to and including the first tie the runner must agree; a full agreement also ends (or stops) alike
        assert.deepEqual(line.generated.slice(0, comparable), ref.generated.slice(0, comparable), `${family} ${line.id}: generated tokens`);
        if (tie === -1) {
          assert.deepEqual(line.generated, ref.generated, `${family} ${line.id}: generated tokens`);
          assert.equal(line.stopped, ref.generated.at(-1) === EOS, `${family} ${line.id}: stopped`);
        }
      });
    }
    // the rule above must not excuse most of the comparison
    assert.ok(compared >= 0.9 * steps, `only ${compared} of ${steps} steps compared: too many float32 ties`);
    t.diagnostic(`${compared} of ${steps} greedy steps compared, all equal`);
  },
);

test(
  "bprof-runner profile on transformers' own models of every family: baseline, importance (paper and signed) by rank, top-n sets, lowering counts and ablated scores as torch autograd on transformers' model gives them",
  { skip: paritySkip, timeout: 300_000 },
  async (t: TestContext) => {
    const golden = await expected();
    for (const family of FAMILIES) {
      const want = golden.families[family]!;
      const out = path.join(scratch!, `profile-${family}`);
      await runner(
        "profile",
        {
          model: { path: want.model, dtype: "float32" },
          items: ITEMS,
          abilities: ABILITIES,
          ablation: { k: K, selections: ["top"], method: METHODS, batch_size: BATCH_SIZE, seed: 1 },
        },
        out,
      );
      const manifest = JSON.parse(await fs.readFile(path.join(out, "profile.json"), "utf8"));
      assert.equal(manifest.parameters, want.parameters, `${family}: P as transformers counts it (tied embeddings once)`);
      // the editor's count from config.json alone (the config check of k, and run's "counts differ" warning) is the same P
      const counted = llamaParameterCount(want.config);
      assert.equal(counted?.total, want.parameters, `${family}: P from config.json (src/core/model/parameters.ts)`);
      assert.equal(
        candidateCount(counted!),
        want.candidates.reduce((a, c) => a + c.numel, 0),
        `${family}: the MLP candidates from config.json`,
      );
      assert.deepEqual(
        manifest.candidates.tensors.map((c: { name: string; numel: number }) => [c.name, c.numel]),
        want.candidates.map((c) => [c.name, c.numel]),
        `${family}: the candidates in order`,
      );
      let worstScore = compareScores(
        `${family} baseline`,
        await readJsonl<RunnerItem>(path.join(out, "baseline.jsonl")),
        want.scores,
        ITEMS,
      );
      let worstRank = 0;
      let exactSets = 0;
      let sets = 0;
      let ablatedCompared = 0;
      for (const ability of ABILITIES) {
        const rise = await readF64(want.abilities[ability.id]!.rise);
        for (const method of METHODS) {
          const what = `${family} ${ability.id} ${method}`;
          const importance = method === "paper" ? rise.map(Math.abs) : rise;
          const order = ranked(importance);
          const largest = importance.reduce((a, v) => Math.max(a, Math.abs(v)), 0);
          const tolerance = RELATIVE * largest;
          const runnerOrder = await readRanking(path.join(out, "rankings", `${ability.id}.${method}.top.bin`));
          assert.equal(runnerOrder.length, Math.floor(K.at(-1)! * want.parameters), `${what}: N`);
          // by rank: the runner's i-th weight is, by transformers' importance, as large as the i-th largest
          runnerOrder.forEach((index, i) => {
            const difference = Math.abs(importance[index]! - importance[order[i]!]!);
            worstRank = Math.max(worstRank, difference / largest);
            assert.ok(
              difference <= tolerance,
              `${what}: rank ${i} is weight ${index} (${importance[index]}), transformers' is ${order[i]} (${importance[order[i]!]})`,
            );
          });
          const lowering = JSON.parse(await fs.readFile(path.join(out, "rankings", `${ability.id}.${method}.lowering.json`), "utf8"));
          for (const [i, k] of K.entries()) {
            const n = Math.floor(k * want.parameters);
            const runnerSet = new Set(runnerOrder.slice(0, n));
            const boundary = importance[order[n - 1]!]!;
            // every weight clearly above the n-th importance is in the runner's set, none clearly below
            order.forEach((index) => {
              if (importance[index]! > boundary + tolerance)
                assert.ok(runnerSet.has(index), `${what} k=${k}: weight ${index} missing from the top ${n}`);
              if (importance[index]! < boundary - tolerance)
                assert.ok(!runnerSet.has(index), `${what} k=${k}: weight ${index} in the top ${n}`);
            });
            const exact = order.slice(0, n).every((index) => runnerSet.has(index));
            sets++;
            if (exact) exactSets++;
            // Two weights whose importances tie within float32's rounding may trade places at the
            // boundary (libtorch 2.x sums some gradients in another order than 1.13 does); any
            // other difference is a different set.
            if (k === 0.01 && !exact)
              assert.ok(
                Math.abs(importance[order[n]!]! - boundary) <= tolerance,
                `${what}: the top-n set at k = 0.01 differs from transformers' with no tie at its boundary`,
              );
            // of the runner's n, those whose zeroing lowers the loss (r < 0), by transformers' r
            const lowered = runnerOrder.slice(0, n).filter((index) => rise[index]! < 0).length;
            assert.equal(lowering.top[i], lowered, `${what} k=${k}: lowering`);
            // with the same set zeroed, the same scores
            if (i === K.length - 1 && exact) {
              ablatedCompared++;
              const variant = await readJsonl<RunnerItem>(path.join(out, "variants", `${ability.id}.${method}.top.k${i}.jsonl`));
              worstScore = Math.max(
                worstScore,
                compareScores(`${what} k=${k} variant`, variant, want.abilities[ability.id]!.ablated[method]!, ITEMS),
              );
            }
          }
        }
      }
      assert.ok(ablatedCompared > 0, `${family}: no top set at k = 0.01 equal to transformers', so no ablated scores were compared`);
      t.diagnostic(
        `${family}: max relative difference of a log-likelihood (baseline and ablated) ${worstScore.toExponential(2)}; ` +
          `of an importance by rank (of the largest) ${worstRank.toExponential(2)}; top-n sets equal ${exactSets} of ${sets}`,
      );
    }
  },
);
