// The built bprof-runner's `score` on token ids a test spells out itself: what the path through
// config, templates, tokenizer and job must reproduce. The runner's numbers are checked elsewhere:
// against transformers itself (test/integration/transformersParity.test.ts) and against a float64
// reference of every family in ctest (native-runner/tests/test_families.cpp).
import assert from "node:assert/strict";
import { execa } from "execa";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { runnerPath } from "./cli";

export interface ChoiceScore {
  logprob: number;
  tokens: number;
  greedy: boolean;
}

/** Each item's choices scored by `bprof-runner score` on the model folder, float32 on the CPU. */
export async function runnerChoiceScores(modelDir: string, items: { context: number[]; choices: number[][] }[]): Promise<ChoiceScore[][]> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-score-"));
  try {
    const job = path.join(dir, "job.json");
    await fs.writeFile(
      job,
      JSON.stringify({
        protocol: 1,
        subcommand: "score",
        model: { path: path.resolve(modelDir), dtype: "float32" },
        device: "cpu",
        items: items.map((item, i) => ({ id: `i${i}`, ...item })),
      }),
    );
    const run = await execa(process.env.BPROF_RUNNER ?? runnerPath, ["score", "--job", job, "--out", path.join(dir, "out")], {
      reject: false,
      timeout: 120_000,
    });
    assert.equal(run.exitCode, 0, `bprof-runner score failed:\n${run.stdout}\n${run.stderr}`);
    return (await fs.readFile(path.join(dir, "out", "scores.jsonl"), "utf8"))
      .trim()
      .split("\n")
      .map((line) => (JSON.parse(line) as { choices: ChoiceScore[] }).choices);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

/** How far two float32 computations of one log-likelihood may differ (batched differently). */
export const float32Tolerance = (logprob: number) => 1e-5 + 1e-6 * Math.abs(logprob);
