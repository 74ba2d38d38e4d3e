// Runs bprof-runner for the bench: a job file in, events (each stamped with its arrival time) out,
// and rows 1-4's measurements: the runner's own `bench` and the comparison with the Python reference.
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";
import type { ReferenceResult, RunnerBench } from "./format";

export interface StampedEvent {
  type: string;
  /** Milliseconds since the process was started, when the line arrived. */
  at: number;
  [key: string]: unknown;
}

export interface RunnerRun {
  events: StampedEvent[];
  /** Wall milliseconds from spawn to exit. */
  wallMs: number;
  out: string;
}

/** Runs a subprocess to its end; rejects with its stderr tail when it fails. */
function spawnAndWait(command: string, args: string[], onStdoutLine: (line: string, at: number) => void): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    const lines = createInterface({ input: child.stdout });
    lines.on("line", (line) => onStdoutLine(line, performance.now() - t0));
    child.on("error", reject);
    child.on("close", (code) => {
      const wallMs = performance.now() - t0;
      if (code === 0) resolve(wallMs);
      else reject(new Error(`${path.basename(command)} ${args.join(" ")} exited with ${code}\n${stderr.trim()}`));
    });
  });
}

/** `bprof-runner SUBCOMMAND --job DIR/job.json --out DIR/out --threads N`. */
export async function runRunner(
  runner: string,
  job: object,
  dir: string,
  threads: number,
  onEvent?: (e: StampedEvent) => void,
): Promise<RunnerRun> {
  fs.mkdirSync(dir, { recursive: true });
  const jobFile = path.join(dir, "job.json");
  const out = path.join(dir, "out");
  fs.writeFileSync(jobFile, JSON.stringify(job));
  const events: StampedEvent[] = [];
  const subcommand = (job as { subcommand: string }).subcommand;
  let wallMs: number;
  try {
    wallMs = await spawnAndWait(runner, [subcommand, "--job", jobFile, "--out", out, "--threads", String(threads)], (line, at) => {
      const event = { ...(JSON.parse(line) as { type: string }), at };
      events.push(event);
      onEvent?.(event);
    });
  } catch (e) {
    const error = events.find((ev) => ev.type === "error");
    throw new Error(
      `bprof-runner ${subcommand} failed${error ? `: ${String(error.code)}: ${String(error.message)}` : ""}\n${(e as Error).message}`,
    );
  }
  return { events, wallMs, out };
}

/** Rows 1-3 (and the profile of row 2): `bprof-runner bench` with the given job fields. */
export async function runnerBench(
  runner: string,
  fields: object,
  dir: string,
  threads: number,
  onEvent?: (e: StampedEvent) => void,
): Promise<RunnerBench> {
  const run = await runRunner(runner, { protocol: 1, subcommand: "bench", ...fields }, dir, threads, onEvent);
  return JSON.parse(fs.readFileSync(path.join(run.out, "bench.json"), "utf8")) as RunnerBench;
}

// ------------------------------------------------------------------------------------------------
// row 4: the runner's `score` against a plain PyTorch reference

/** The ~20M-parameter model of row 4: the runner bench's scoring model (a GQA Llama, 8k vocabulary). */
export const REFERENCE_MODEL = {
  model_type: "llama",
  vocab_size: 8192,
  hidden_size: 512,
  intermediate_size: 1408,
  num_hidden_layers: 4,
  num_attention_heads: 8,
  num_key_value_heads: 4,
  max_position_embeddings: 2048,
  tie_word_embeddings: false,
};

export interface ReferenceSizes {
  items: number;
  choices: number;
  /** Context and continuation lengths are drawn uniformly from these ranges, in tokens. */
  context: [number, number];
  continuation: [number, number];
  rounds: number;
}

interface JobItem {
  id: string;
  context: number[];
  choices: number[][];
}

/** Seeded items: random tokens are as good as text for throughput, and the same for both sides. */
export function referenceItems(sizes: ReferenceSizes, vocab: number, seed = 4): JobItem[] {
  let state = seed >>> 0;
  const next = () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 4294967296;
  };
  const between = ([lo, hi]: [number, number]) => lo + Math.floor(next() * (hi - lo + 1));
  const tokens = (n: number) => Array.from({ length: n }, () => Math.floor(next() * vocab));
  return Array.from({ length: sizes.items }, (_, i) => ({
    id: `r${i}`,
    context: tokens(between(sizes.context)),
    choices: Array.from({ length: sizes.choices }, () => tokens(between(sizes.continuation))),
  }));
}

interface ChoiceScore {
  logprob: number;
  tokens: number;
  greedy: boolean;
}

/**
 * Makes the model (`train` with 0 steps), then alternates the runner's `score` (KV cache, batched)
 * and the Python reference (one full sequence per choice) on the same items with the same threads,
 * `rounds` times each; scoring time excludes process start and model load on both sides.
 */
export async function referenceComparison(
  runner: string,
  python: string,
  script: string,
  sizes: ReferenceSizes,
  dir: string,
  threads: number,
  say: (line: string) => void,
): Promise<{ result: ReferenceResult; modelDir: string }> {
  const train = await runRunner(
    runner,
    {
      protocol: 1,
      subcommand: "train",
      config: REFERENCE_MODEL,
      device: "cpu",
      sequences: [[1, 2, 3]],
      train: { steps: 0, batch_size: 1, lr: 0.001, warmup_steps: 0, seed: 1 },
    },
    path.join(dir, "model"),
    threads,
  );
  const modelDir = train.out;
  const parameters = (JSON.parse(fs.readFileSync(path.join(modelDir, "train.json"), "utf8")) as { parameters: number }).parameters;
  const items = referenceItems(sizes, REFERENCE_MODEL.vocab_size);
  const job = { protocol: 1, subcommand: "score", model: { path: path.resolve(modelDir), dtype: "float32" }, device: "cpu", items };

  const runnerSeconds: number[] = [];
  const runnerProcess: number[] = [];
  const pythonSeconds: number[] = [];
  const pythonProcess: number[] = [];
  let runnerScores: { id: string; choices: ChoiceScore[] }[] = [];
  let pythonScores: { id: string; choices: ChoiceScore[] }[] = [];
  let torch = "";
  for (let round = 0; round < sizes.rounds; round++) {
    const run = await runRunner(runner, job, path.join(dir, `score-${round}`), threads);
    const start = run.events.find((e) => e.type === "progress" && e.phase === "score" && e.done === 0);
    const written = run.events.find((e) => e.type === "result");
    if (!start || !written) throw new Error("bprof-runner score: no start or result event");
    runnerSeconds.push((written.at - start.at) / 1000);
    runnerProcess.push(run.wallMs / 1000);
    runnerScores = fs
      .readFileSync(path.join(run.out, "scores.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    say(`  runner score, round ${round + 1}: ${runnerSeconds.at(-1)!.toFixed(2)} s scoring, ${runnerProcess.at(-1)!.toFixed(2)} s process`);

    const out = path.join(dir, `python-${round}.json`);
    const wallMs = await spawnAndWait(
      python,
      [script, "--model", modelDir, "--job", path.join(dir, `score-${round}`, "job.json"), "--out", out, "--threads", String(threads)],
      () => {},
    );
    const reference = JSON.parse(fs.readFileSync(out, "utf8")) as {
      seconds: number[];
      scores: typeof pythonScores;
      torch: string;
      threads: number;
    };
    if (reference.threads !== threads) throw new Error(`the Python reference ran with ${reference.threads} threads, not ${threads}`);
    pythonSeconds.push(reference.seconds[0]!);
    pythonProcess.push(wallMs / 1000);
    pythonScores = reference.scores;
    torch = reference.torch;
    say(
      `  Python reference, round ${round + 1}: ${pythonSeconds.at(-1)!.toFixed(2)} s scoring, ${pythonProcess.at(-1)!.toFixed(2)} s process`,
    );
  }

  let maxDifference = 0;
  let greedyDisagreements = 0;
  let choices = 0;
  runnerScores.forEach((item, i) => {
    const other = pythonScores[i]!;
    if (other.id !== item.id || other.choices.length !== item.choices.length)
      throw new Error(`item ${item.id}: the two sides scored different items`);
    item.choices.forEach((c, j) => {
      choices++;
      maxDifference = Math.max(maxDifference, Math.abs(c.logprob - other.choices[j]!.logprob));
      if (c.greedy !== other.choices[j]!.greedy) greedyDisagreements++;
    });
  });
  return {
    modelDir,
    result: {
      parameters,
      items: items.length,
      choices,
      threads,
      torch,
      runner_seconds: runnerSeconds,
      python_seconds: pythonSeconds,
      runner_process_seconds: runnerProcess,
      python_process_seconds: pythonProcess,
      max_logprob_difference: maxDifference,
      greedy_disagreements: greedyDisagreements,
    },
  };
}
