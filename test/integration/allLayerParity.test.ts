// `ablation.candidates: all` against transformers itself: on a tiny Llama made with transformers'
// own config class (test/support/allLayerGolden.py), the runner's candidates are the attention's
// q, k, v, o and the MLP's gate, up, down weights of each layer in that order, and its `paper`
// ranking over them is torch autograd's: the importance transformers gives the runner's i-th ranked
// weight is within 1e-5 (of the largest) of the i-th largest, for every ranked weight, and the top
// n at k = 0.01 is transformers' own. The attention weights' gradients are the ones that take the
// runner's autograd path (importance.cpp); the MLP's come through its taps, as always.
import assert from "node:assert/strict";
import { execa } from "execa";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { repoRoot, runnerPath } from "../support/cli";
import { parityPython, paritySkip } from "../support/parityPython";

const GOLDEN_SCRIPT = path.join(repoRoot, "test", "support", "allLayerGolden.py");
const RELATIVE = 1e-5;
const K = 0.01;
const BATCH_SIZE = 2;
const utf8 = (text: string) => [256, ...Buffer.from(text, "utf8")];
const SEQUENCES = [
  "Ann has 3 apples and buys 4 more: 7.",
  "The lamp is left of the chair.",
  "Nine times eight is 72.",
  "Rain fell all day.",
].map(utf8);

test("candidates: all ranks as torch autograd on transformers' Llama ranks", { skip: paritySkip, timeout: 300_000 }, async (t) => {
  const scratch = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-all-layer-"));
  t.after(() => fs.rm(scratch, { recursive: true, force: true }));
  await fs.writeFile(path.join(scratch, "spec.json"), JSON.stringify({ sequences: SEQUENCES, batch_size: BATCH_SIZE }));
  const golden = path.join(scratch, "golden");
  const python = await execa(parityPython, [GOLDEN_SCRIPT, path.join(scratch, "spec.json"), golden], {
    reject: false,
    timeout: 240_000,
    env: { HF_HUB_OFFLINE: "1", TRANSFORMERS_VERBOSITY: "error" },
  });
  assert.equal(python.exitCode, 0, python.stderr);
  const want = JSON.parse(await fs.readFile(path.join(golden, "expected.json"), "utf8")) as {
    parameters: number;
    candidates: { name: string; numel: number }[];
  };
  const bytes = await fs.readFile(path.join(golden, "rise.f64"));
  const rise = new Float64Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));

  const out = path.join(scratch, "profile");
  const job = {
    protocol: 1,
    subcommand: "profile",
    device: "cpu",
    model: { path: path.join(golden, "model"), dtype: "float32" },
    items: [
      {
        id: "q/0",
        context: utf8("Is ice cold?"),
        choices: [
          [32, 121],
          [32, 110],
        ],
      },
    ],
    abilities: [{ id: "a", sequences: SEQUENCES }],
    ablation: { k: [K], selections: ["top"], method: "paper", batch_size: BATCH_SIZE, seed: 1, candidates: "all" },
  };
  await fs.writeFile(`${out}.job.json`, JSON.stringify(job));
  const run = await execa(runnerPath, ["profile", "--job", `${out}.job.json`, "--out", out], { reject: false, timeout: 120_000 });
  assert.equal(run.exitCode, 0, `${run.stdout.trim().split("\n").at(-1)}\n${run.stderr}`);

  const manifest = JSON.parse(await fs.readFile(path.join(out, "profile.json"), "utf8")) as {
    parameters: number;
    candidates: { tensors: { name: string; numel: number }[] };
  };
  assert.equal(manifest.parameters, want.parameters);
  assert.deepEqual(
    manifest.candidates.tensors.map((c) => [c.name, c.numel]),
    want.candidates.map((c) => [c.name, c.numel]),
  );
  const importance = rise.map(Math.abs);
  const order = Array.from(importance.keys()).sort((a, b) => importance[b]! - importance[a]! || a - b);
  const largest = importance.reduce((a, v) => Math.max(a, v), 0);
  const ranked = await fs.readFile(path.join(out, "rankings", "a.top.bin"));
  const runnerOrder = Array.from(new BigInt64Array(ranked.buffer.slice(ranked.byteOffset, ranked.byteOffset + ranked.length)), Number);
  const n = Math.floor(K * want.parameters);
  assert.equal(runnerOrder.length, n);
  let worst = 0;
  runnerOrder.forEach((index, i) => {
    const difference = Math.abs(importance[index]! - importance[order[i]!]!);
    worst = Math.max(worst, difference / largest);
    assert.ok(difference <= RELATIVE * largest, `rank ${i}: weight ${index} (${importance[index]}), transformers' ${order[i]}`);
  });
  const attentionEnd = want.candidates.slice(0, 4).reduce((a, c) => a + c.numel, 0);
  assert.ok(
    runnerOrder.some((index) => index < attentionEnd),
    "some attention weight of the first layer is among the top n",
  );
  assert.deepEqual(new Set(runnerOrder), new Set(order.slice(0, n)));
  t.diagnostic(`largest difference of an importance by rank (of the largest): ${worst.toExponential(2)}`);
});
