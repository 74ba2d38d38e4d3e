// The config's `gpu` end to end: `bprof validate` says each model's peak device memory and time on
// it, refuses a job that cannot fit at the `gpu` key with the figures, and without
// `ablation.batch_size` the compiled job's importance batch is the largest that fits.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { loadProfile } from "../../src/core/config/load";
import { formatProblem } from "../../src/core/base/problems";
import { compiledJob, devicePlanLines, jobProblems, modelTokenizer } from "../../src/core/plan/compile";
import type { ProfileJob } from "../../src/core/plan/job";
import { devicePlan, jobDeviceWork } from "../../src/core/plan/devicePlan";
import { readModelShapeSync } from "../../src/core/model/parameters";
import { bprof } from "../support/cli";
import { CONFIG_YAML, makeProfileProject } from "../support/profileProject";
import { withoutLowPower } from "../support/tinyProject";

const ON_CUDA = `${CONFIG_YAML}device: cuda\n`;

/** The 1-based line of the config's `gpu` key. */
function gpuLine(config: string): number {
  return config.split("\n").findIndex((l) => l.startsWith("gpu:")) + 1;
}

test("bprof validate prints the peak and the time on the config's GPU, and refuses a GPU the job cannot fit, at its key", async (t) => {
  const p = await makeProfileProject({ config: `${ON_CUDA}gpu: h100\n` });
  t.after(() => fs.rm(p.root, { recursive: true, force: true }));
  const ok = await bprof(["validate", p.configPath]);
  assert.equal(ok.exitCode, 0, ok.stderr);
  // the config's batch_size: 2 is kept; the tiny model's weights and sums are a few kB, so the reserve is the peak
  assert.match(
    ok.stdout,
    /^tiny-llama: on an H100 \(79\.6 GiB\): peak device memory about 1\.0 GiB \(weights 0\.0, importance sums 0\.0, activations 0\.0 at batch 2, reserve 1\.0\); about 0 s \(importance 0 s, scoring 0 s, ranking on the host 0 s\)$/m,
  );

  const small = `${ON_CUDA}gpu: {memory_gib: 0.5, bf16_tflops: 100}\n`;
  await fs.writeFile(p.configPath, small);
  const refused = await bprof(["validate", p.configPath]);
  assert.equal(refused.exitCode, 2, refused.stdout);
  assert.match(
    refused.stderr,
    new RegExp(
      `profile\\.bprof\\.yaml:${gpuLine(small)}:\\d+: error: model \`tiny-llama\` does not fit a GPU of 0\\.5 GiB: peak device memory about 1\\.0 GiB \\(weights 0\\.0, importance sums 0\\.0, activations 0\\.0 at batch 2, reserve 1\\.0\\)\\. Try the model's \`dtype: bfloat16\` .*, a GPU with more memory.* \\[config\\.device-memory\\]`,
    ),
  );
  assert.doesNotMatch(refused.stdout, /: ok$/m);
  // bprof run refuses it too, with the same error, before any runner starts (device: cuda, and no GPU here)
  const run = await bprof(["run", p.configPath]);
  assert.equal(run.exitCode, 2, run.stdout);
  assert.match(
    run.stderr,
    new RegExp(
      `profile\\.bprof\\.yaml:${gpuLine(small)}:\\d+: error: model \`tiny-llama\` does not fit a GPU of 0\\.5 GiB: .*\\[config\\.device-memory\\]`,
    ),
  );
  assert.doesNotMatch(run.stderr, /cuda|CUDA|runner/);

  // a batch_size too large for a GPU that a smaller one fits: the refusal names the largest that fits
  const { profile } = await loadProfile(p.configPath);
  const shape = readModelShapeSync(profile!.models[0]!.path)!;
  const job = compiledJob(profile!, profile!.models[0]!, await modelTokenizer(profile!.models[0]!), new Date()).job;
  const gib = devicePlan(shape, jobDeviceWork(job), { label: "", memoryBytes: 0, peakFlops: 1 }, 16).bytes.peak / 1024 ** 3;
  const large = `${ON_CUDA.replace("batch_size: 2", "batch_size: 64")}gpu: {memory_gib: ${gib}, bf16_tflops: 100}\n`;
  await fs.writeFile(p.configPath, large);
  const tooLarge = await bprof(["validate", p.configPath]);
  assert.equal(tooLarge.exitCode, 2, tooLarge.stdout);
  assert.match(
    tooLarge.stderr,
    new RegExp(
      `profile\\.bprof\\.yaml:${gpuLine(large)}:\\d+: error: model \`tiny-llama\` does not fit a GPU of [0-9.]+ GiB: .* at batch 64, .*Try \`ablation\\.batch_size: 16\` or less`,
    ),
  );
});

test("without ablation.batch_size the job's importance batch is the largest that fits the GPU; with it, the config's", async (t) => {
  const config = `${ON_CUDA.replace("  batch_size: 2\n", "")}gpu: h200\n`;
  const p = await makeProfileProject({ config });
  t.after(() => fs.rm(p.root, { recursive: true, force: true }));
  const { profile, problems } = await loadProfile(p.configPath);
  assert.ok(profile, problems.map(formatProblem).join("\n"));
  const model = profile.models[0]!;
  const job = compiledJob(profile, model, await modelTokenizer(model), new Date()).job as ProfileJob;
  assert.equal(job.ablation.batch_size, 64);
  assert.match((await devicePlanLines(profile)).join("\n"), /at batch 64/);
  assert.deepEqual(await jobProblems(profile), []);

  // a GPU too small for any batch: the default stays in the job, and validation refuses it
  await fs.writeFile(p.configPath, config.replace("gpu: h200", "gpu: {memory_gib: 0.5, bf16_tflops: 100}"));
  const tiny = await loadProfile(p.configPath);
  assert.ok(tiny.profile);
  const kept = compiledJob(tiny.profile, model, await modelTokenizer(model), new Date()).job as ProfileJob;
  assert.equal(kept.ablation.batch_size, 8);
  assert.deepEqual(
    (await jobProblems(tiny.profile)).map((x) => [x.code, x.line, x.field]),
    [["config.device-memory", gpuLine(config), "gpu"]],
  );

  // without gpu nothing changes: the default batch, no line
  await fs.writeFile(p.configPath, ON_CUDA.replace("  batch_size: 2\n", ""));
  const plain = await loadProfile(p.configPath);
  assert.ok(plain.profile);
  assert.equal((compiledJob(plain.profile, model, await modelTokenizer(model), new Date()).job as ProfileJob).ablation.batch_size, 8);
  assert.deepEqual(await devicePlanLines(plain.profile), []);
});

test("`gpu` on the CPU has no effect, and a GPU name bprof does not know is refused with the names it knows", async (t) => {
  const cpu = `${CONFIG_YAML}gpu: h100\n`;
  const p = await makeProfileProject({ config: cpu });
  t.after(() => fs.rm(p.root, { recursive: true, force: true }));
  const onCpu = await loadProfile(p.configPath);
  assert.ok(onCpu.profile);
  assert.equal(onCpu.profile.gpu, undefined);
  assert.deepEqual(
    withoutLowPower(onCpu.problems)
      .filter((x) => x.code.startsWith("config."))
      .map((x) => [x.code, x.severity, x.line]),
    [["config.no-effect", "warning", gpuLine(cpu)]],
  );

  const unknown = `${ON_CUDA}gpu: h900\n`;
  await fs.writeFile(p.configPath, unknown);
  const refused = await loadProfile(p.configPath);
  assert.equal(refused.profile, undefined);
  const problem = refused.problems.find((x) => x.field === "gpu");
  assert.ok(problem, refused.problems.map(formatProblem).join("\n"));
  assert.equal(problem.line, gpuLine(unknown));
  assert.match(
    problem.message,
    /must be one of: h100, h200, a100-80gb, a100-40gb, l40s, rtx4090, or another GPU as `\{memory_gib, bf16_tflops\}`/,
  );
  assert.equal(path.basename(problem.file), "profile.bprof.yaml");
});
