// The GPU half of `npm run bench` (scripts/bench/gpu-job.json) cannot run here, so what can be
// checked without a GPU is: the model is the ~1B-parameter Llama the issue asks for, one model
// serves every row, and the runner accepts every field of the job and stops only at the device.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { execa } from "execa";
import { llamaParameterCount } from "../../src/core/model/parameters";
import { repoRoot, runnerPath } from "../support/cli";

const job = JSON.parse(fs.readFileSync(path.join(repoRoot, "scripts/bench/gpu-job.json"), "utf8")) as Record<
  string,
  Record<string, unknown>
>;

test("the GPU bench job: a 1.24B-parameter Llama in bfloat16 on cuda, one model for every row", () => {
  assert.equal(job.device, "cuda");
  assert.equal(job.dtype, "bfloat16");
  // the runner counted 1,235,814,400 when it made this model on a CPU (2026-11-24)
  assert.equal(llamaParameterCount(job.scoring_model!)?.total, 1_235_814_400);
  assert.deepEqual(job.profile_model, job.scoring_model);
});

test("the runner accepts every field of the GPU bench job and stops at the missing GPU", async () => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), "bprof-gpu-job-"));
  try {
    const r = await execa(runnerPath, ["bench", "--job", path.join(repoRoot, "scripts/bench/gpu-job.json"), "--out", out], {
      reject: false,
      timeout: 60_000,
      env: { CUDA_VISIBLE_DEVICES: "" }, // no GPU even where the runner was built with CUDA
    });
    const events = r.stdout
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { type: string; code?: string; message?: string });
    const error = events.find((e) => e.type === "error");
    assert.equal(error?.code, "resources", `expected the missing GPU, got ${JSON.stringify(error)}`);
    assert.match(error!.message!, /device 'cuda' is unavailable/);
    assert.equal(fs.existsSync(path.join(out, "bench.json")), false);
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
});
