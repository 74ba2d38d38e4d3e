// The thin path through every layer: config -> tasks -> tokens -> job -> real bprof-runner ->
// events -> results, checked against the runner's scores of token ids spelled out here (the
// runner's numbers themselves are checked against transformers in transformersParity.test.ts and
// against a float64 reference in ctest).
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { BOS_TOKEN_ID } from "../../scripts/lib/byteTokenizer";
import { bprof } from "../support/cli";
import { float32Tolerance, runnerChoiceScores } from "../support/runnerScores";
import { makeTinyProject, TINY_BENCHMARK_DOCS, type TinyProject } from "../support/tinyProject";

let project: TinyProject;

before(async () => {
  project = await makeTinyProject(await fs.mkdtemp(path.join(os.tmpdir(), "bprof-thin-")));
});
after(async () => fs.rm(project.root, { recursive: true, force: true }));

/** The byte-level tokenizer's ids are the UTF-8 bytes: an encoding independent of our tokenizer code. */
const utf8 = (text: string) => [...Buffer.from(text, "utf8")];

async function onlyRunDir(root: string): Promise<string> {
  const runs = await fs.readdir(path.join(root, ".bprof", "runs"));
  assert.equal(runs.length, 1, `expected one run, found ${runs.join(", ")}`);
  return path.join(root, ".bprof", "runs", runs[0]!);
}

test("bprof run scores every choice as the runner scores the expected tokens", async () => {
  const result = await bprof(["run", project.configPath]);
  assert.equal(result.exitCode, 0, `bprof run failed:\n${result.stderr}\n${result.stdout}`);
  assert.match(result.stdout, /tiny-llama\s+tiny_mc\s+acc/);

  const runDir = await onlyRunDir(project.root);
  const modelDir = path.join(runDir, "models", "tiny-llama");
  const items = (await fs.readFile(path.join(modelDir, "items.jsonl"), "utf8"))
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  assert.equal(items.length, TINY_BENCHMARK_DOCS.length);

  // The task renders "Question: {{question}}\nAnswer:" after the tokenizer's BOS (lm-eval 0.4.10+)
  // and scores " " + choice.
  const expectedScores = await runnerChoiceScores(
    project.modelDir,
    items.map((item) => {
      const doc = TINY_BENCHMARK_DOCS[item.index]!;
      return {
        context: [BOS_TOKEN_ID, ...utf8(`Question: ${doc.question}\nAnswer:`)],
        choices: doc.choices.map((choice) => utf8(` ${choice}`)),
      };
    }),
  );
  let checked = 0;
  for (const [i, item] of items.entries()) {
    const doc = TINY_BENCHMARK_DOCS[item.index]!;
    assert.equal(item.target, doc.answer);
    doc.choices.forEach((choice, c) => {
      const expected = expectedScores[i]![c]!;
      const got = item.choices[c];
      assert.ok(
        Math.abs(got.logprob - expected.logprob) < float32Tolerance(expected.logprob),
        `${item.benchmark}/${item.index} choice ${c}: bprof run ${got.logprob}, the expected tokens ${expected.logprob}`,
      );
      assert.equal(got.tokens, utf8(` ${choice}`).length);
      assert.equal(got.greedy, expected.greedy);
      checked++;
    });
  }
  assert.equal(checked, 10);

  const results = JSON.parse(await fs.readFile(path.join(runDir, "results.json"), "utf8"));
  assert.equal(results.schema_version, 1);
  const benchmark = results.models[0].benchmarks[0];
  const expectedAcc = items.filter((i: { prediction: number; target: number }) => i.prediction === i.target).length / items.length;
  assert.equal(benchmark.acc, expectedAcc);
  assert.ok(Math.abs(benchmark.chance - (1 / 3 + 1 / 4 + 1 / 3) / 3) < 1e-12);

  const events = (await fs.readFile(path.join(modelDir, "events.jsonl"), "utf8"))
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  assert.equal(events[0].type, "start");
  assert.ok(
    events.some((e) => e.type === "progress" && e.done === e.total && e.total === 3),
    "a final progress event 3/3",
  );
  assert.ok(events.some((e) => e.type === "result" && e.file === "scores.jsonl"));
  assert.equal(events.at(-1).type, "summary");
});
