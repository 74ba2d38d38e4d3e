// The table and record of `npm run bench` (scripts/bench/format.ts): figures in, rows out. No timing.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  benchRecord,
  buildRows,
  compareRows,
  digits,
  familyFigures,
  familyNote,
  familyRows,
  baselineRows,
  mergeGpuBenches,
  formatBytes,
  formatFlops,
  formatRatio,
  formatSeconds,
  renderTable,
  type FamilyBench,
  type RawFigures,
  type RunnerBench,
} from "../../../../scripts/bench/format";

const RUNNER: RunnerBench = {
  runner_version: "0.1.0",
  libtorch: "1.13.0",
  device: "cpu",
  dtype: "float32",
  threads: 2,
  matmul: { n: 2048, flops_per_second: 100e9, measurements: [90e9, 100e9] },
  scoring: {
    parameters: 20_200_000,
    items: 16,
    choices: 4,
    context_tokens: 100,
    continuation_tokens: 20,
    flops: 1e11,
    kv_cache: { seconds: 2, items_per_second: 8, flops_per_second: 40e9 },
    full_sequences: { seconds: 6, items_per_second: 8 / 3, flops_per_second: 13e9 },
    speedup: 3,
    max_logprob_difference: 2e-6,
  },
  importance: { sequences: 16, length: 128, seconds: 1, tokens_per_second: 2048, flops: 6e10, flops_per_second: 60e9 },
  profile: {
    parameters: 4_300_000,
    abilities: 10,
    k: [1e-5, 4e-5, 1.6e-4, 6.4e-4, 2.56e-3, 1.024e-2],
    variants: 66,
    items: 32,
    in_place: { seconds: 40, bytes_written: 0 },
    checkpoint_per_variant: { seconds: 100, bytes_written: 1.14e9 },
    speedup: 2.5,
  },
};

const RAW: RawFigures = {
  runner: RUNNER,
  reference: {
    parameters: 20_200_000,
    items: 48,
    choices: 192,
    threads: 2,
    torch: "1.13.0a0",
    runner_seconds: [4, 3],
    python_seconds: [12, 13],
    runner_process_seconds: [5, 4],
    python_process_seconds: [15, 16],
    max_logprob_difference: 7.6e-6,
    greedy_disagreements: 0,
  },
  editor: {
    diagnostic: { items: 20000, median_ms: 640, milliseconds: [700, 640, 600] },
    tasks: { documents: 10000, median_ms: 25000, milliseconds: [25000], tokens: 3e6 },
    analysis: {
      cells: 600,
      resamples: 1000,
      ais_median_ms: 500,
      ais_and_specificity_median_ms: 900,
      ais_and_specificity_milliseconds: [900],
    },
    recheck: { items: 20000, documents: 1000, first_ms: 600, median_ms: 120, milliseconds: [150, 120, 110] },
    views: {
      abilities: 10,
      benchmarks: 60,
      k: 6,
      documents: 10000,
      view_median_ms: 60,
      view_milliseconds: [60],
      cases_median_ms: 250,
      cases_milliseconds: [250],
      marked_lines: 900,
    },
  },
};

test("figures print with three significant digits and their units", () => {
  assert.equal(digits(1234.5), "1235");
  assert.equal(digits(12.34), "12.3");
  assert.equal(digits(1.234), "1.23");
  assert.equal(digits(0.01234), "0.0123");
  assert.equal(digits(0), "0");
  assert.equal(digits(7.63e-6), "7.63e-6");
  assert.equal(formatBytes(0), "0 B");
  assert.equal(formatBytes(512), "512 B");
  assert.equal(formatBytes(1.14e9), "1.14 GB");
  assert.equal(formatFlops(40e9), "40.0 GFLOP/s");
  assert.equal(formatFlops(1.2e12), "1.20 TFLOP/s");
  assert.equal(formatSeconds(0.64), "640 ms");
  assert.equal(formatSeconds(12.34), "12.3 s");
  assert.equal(formatRatio(3.04), "3.04x");
  assert.equal(formatRatio(1.998), "1.99x", "rounded down: a ratio that misses 2x never prints as 2.00x");
  assert.equal(formatRatio(2), "2.00x");
  assert.equal(formatRatio(12.36), "12.3x");
  assert.equal(formatRatio(0.4567, "%"), "45.6%");
  assert.equal(formatRatio(0.5, "%"), "50.0%");
  assert.equal(formatRatio(Infinity), "-");
});

test("rows: every claim a ratio of two figures of the same run, with its target", () => {
  const rows = buildRows(RAW);
  assert.deepEqual(
    rows.map((r) => r.row),
    ["1", "2", "3a", "3b", "3c", "4", "5a", "5b", "5c", "5d", "5e", "5f"],
  );
  const byRow = new Map(rows.map((r) => [r.row, r]));

  assert.equal(byRow.get("1")!.ratio, 3);
  assert.equal(byRow.get("1")!.met, true);
  assert.equal(byRow.get("1")!.a, "8.00 items/s");

  assert.equal(byRow.get("2")!.ratio, 2.5);
  assert.equal(byRow.get("2")!.met, false, "2.5x is below the 10x target");
  assert.equal(byRow.get("2")!.a, "40.0 s, 0 B written");
  assert.equal(byRow.get("2")!.b, "100 s, 1.14 GB written");

  assert.equal(byRow.get("3a")!.ratio, 0.4);
  assert.equal(byRow.get("3a")!.met, false, "40% is below 50% of the matmul peak");
  assert.equal(byRow.get("3b")!.met, undefined, "full sequences have no target");
  assert.equal(byRow.get("3c")!.ratio, 0.6);

  // the best round of each side: 48 items in 3 s against 48 in 12 s
  assert.equal(byRow.get("4")!.ratio, 4);
  assert.equal(byRow.get("4")!.met, true);
  assert.match(byRow.get("4")!.what, /4 choices/);

  assert.equal(byRow.get("5a")!.met, true);
  assert.equal(byRow.get("5b")!.met, false);
  assert.equal(byRow.get("5b")!.a, "25.0 s");
  assert.equal(byRow.get("5c")!.a, "900 ms");
  assert.equal(byRow.get("5d")!.ratio, 5, "the first check against the median re-check");
  assert.equal(byRow.get("5d")!.met, false, "120 ms is above the 100 ms target");
  assert.match(byRow.get("5d")!.what, /median of 3 edits/);
  assert.equal(byRow.get("5e")!.met, true);
  assert.equal(byRow.get("5f")!.met, false, "250 ms is above the 200 ms target");
  assert.equal(byRow.get("5f")!.b, "900 lines marked");
});

test("a speed-up with scores that disagree is not a met target", () => {
  const rows = buildRows({ reference: { ...RAW.reference!, max_logprob_difference: 0.5 } });
  assert.equal(rows.length, 1);
  assert.equal(rows[0]!.met, false);
});

test("a profile that writes bytes in place misses its target whatever the speed-up", () => {
  const profile = { ...RUNNER.profile!, in_place: { seconds: 1, bytes_written: 10 } };
  const rows = buildRows({ runner: { ...RUNNER, profile } });
  assert.equal(rows.find((r) => r.row === "2")!.met, false);
});

test("row 2 gives each way's FLOP utilisation of the whole profile when the record has it", () => {
  const profile = {
    ...RUNNER.profile!,
    flops: 8e12,
    in_place: { seconds: 40, bytes_written: 0, flops_per_second: 2e11, mfu: 0.25 },
    checkpoint_per_variant: { seconds: 100, bytes_written: 1.14e9, flops_per_second: 8e10, mfu: 0.1 },
  };
  const row = buildRows({ ...RAW, runner: { ...RUNNER, profile } }).find((r) => r.row === "2")!;
  assert.equal(row.a, "40.0 s, 0 B written, MFU 25.0%");
  assert.equal(row.b, "100 s, 1.14 GB written, MFU 10.0%");
});

test("MFU from a runner that reports mfu but no FLOP/s; none without a matmul peak", () => {
  const scoring = {
    ...RUNNER.scoring!,
    kv_cache: { seconds: 2, items_per_second: 8, mfu: 0.55 },
    full_sequences: { seconds: 6, items_per_second: 8 / 3, mfu: 0.2 },
  };
  const rows = buildRows({ runner: { ...RUNNER, scoring, importance: undefined } });
  const a = rows.find((r) => r.row === "3a")!;
  assert.ok(Math.abs(a.ratio! - 0.55) < 1e-12);
  assert.equal(a.met, true);
  assert.equal(
    rows.find((r) => r.row === "3c"),
    undefined,
  );
  assert.equal(buildRows({ runner: { ...RUNNER, matmul: undefined } }).filter((r) => r.row.startsWith("3")).length, 0);
});

test("a GPU bench adds its own rows 1g, 2g and 3d-3f, named by the GPU, MFU against the GPU's bf16 peak", () => {
  const gpu: RunnerBench = {
    ...RUNNER,
    device: "cuda",
    device_name: "NVIDIA H100 80GB HBM3",
    dtype: "bfloat16",
    matmul: { n: 8192, flops_per_second: 700e12 },
    scoring: { ...RUNNER.scoring!, parameters: 1_235_814_400, kv_cache: { seconds: 1, items_per_second: 16, flops_per_second: 70e12 } },
    profile: {
      ...RUNNER.profile!,
      parameters: 1_235_814_400,
      in_place: { seconds: 20, bytes_written: 0 },
      checkpoint_per_variant: { seconds: 300, bytes_written: 6.7e10 },
    },
  };
  const rows = buildRows({ runner: RUNNER, runnerGpu: gpu });
  assert.deepEqual(
    rows.map((r) => r.row),
    ["1", "2", "3a", "3b", "3c", "1g", "2g", "3d", "3e", "3f"],
  );
  const byId = new Map(rows.map((r) => [r.row, r]));
  assert.match(byId.get("1g")!.what, /^MC scoring, 1\.24B-param Llama on cuda \(NVIDIA H100 80GB HBM3\), bfloat16,/);
  assert.equal(byId.get("1g")!.ratio, 16 / (8 / 3));
  assert.equal(byId.get("1g")!.met, true);
  assert.match(byId.get("2g")!.what, /^Whole profile, 1\.24B params on cuda \(NVIDIA H100 80GB HBM3\), bfloat16:/);
  assert.equal(byId.get("2g")!.ratio, 15);
  assert.equal(byId.get("2g")!.met, true);
  assert.equal(byId.get("2")!.met, false, "the CPU's row keeps its own figures");
  assert.equal(byId.get("3d")!.ratio, 0.1);
  assert.match(byId.get("3d")!.b, /bf16 matmul peak/);
  assert.match(byId.get("3d")!.what, /cuda, bfloat16/);
  // the CPU rows never mention a device
  assert.doesNotMatch(byId.get("1")!.what, / on /);
});

test("GPU benches of separate calls merge row by row; a row twice or a CPU bench is refused by file", () => {
  const gpu: RunnerBench = { ...RUNNER, device: "cuda", device_name: "NVIDIA H100 80GB HBM3", dtype: "bfloat16" };
  const first = { file: "a/bench.json", bench: { ...gpu, profile: undefined } };
  const second = { file: "b/bench.json", bench: { ...gpu, matmul: undefined, scoring: undefined, importance: undefined } };
  const merged = mergeGpuBenches([first, second]);
  assert.deepEqual(merged.matmul, RUNNER.matmul);
  assert.deepEqual(merged.scoring, RUNNER.scoring);
  assert.deepEqual(merged.profile, RUNNER.profile);
  assert.equal(merged.device_name, "NVIDIA H100 80GB HBM3");
  assert.deepEqual(
    buildRows({ runnerGpu: merged }).map((r) => r.row),
    ["1g", "2g", "3d", "3e", "3f"],
  );
  assert.throws(
    () => mergeGpuBenches([first, { file: "c/bench.json", bench: gpu }]),
    /^Error: c\/bench\.json: row 'matmul' is also in a\/bench\.json$/,
  );
  assert.throws(() => mergeGpuBenches([{ file: "d/bench.json", bench: RUNNER }]), /d\/bench\.json: a CPU bench/);
  assert.throws(() => mergeGpuBenches([]), /no GPU bench/);
});

test("the table is Markdown with aligned columns and escaped pipes", () => {
  const table = renderTable(buildRows(RAW));
  const lines = table.split("\n");
  assert.match(lines[0]!, /^\| row +\| what +\| figure A +\| figure B +\| ratio +\| target +\| met\? +\|$/);
  assert.match(lines[1]!, /^\|-+(\|-+){6}\|$/);
  assert.equal(lines.length, 2 + 12);
  assert.equal(new Set(lines.map((l) => l.length)).size, 1, "every line as wide as the header");
  assert.ok(lines.find((l) => l.startsWith("| 1 "))!.includes("max \\|dlogp\\| 2.00e-6 "), "a pipe inside a cell is escaped");
  assert.match(
    lines.find((l) => l.startsWith("| 2 "))!,
    /\| 2\.50x +\| >= 10x, 0 B written +\| NO +\|$/,
  );
  assert.match(
    lines.find((l) => l.startsWith("| 3b "))!,
    /\| - +\| - +\|$/,
  );
});

test("the record keeps the rows as printed and every raw figure; earlier records compare by row", () => {
  const record = benchRecord(new Date("2026-11-23T12:00:00Z"), { cpu: "AMD EPYC", cores: 2 }, { threads: 2 }, RAW, 500);
  assert.equal(record.schema, 1);
  assert.equal(record.date, "2026-11-23T12:00:00.000Z");
  assert.equal(record.rows.length, 12);
  assert.deepEqual(JSON.parse(JSON.stringify(record)).raw.runner.profile.checkpoint_per_variant, RUNNER.profile!.checkpoint_per_variant);

  const faster = buildRows({
    ...RAW,
    runner: { ...RUNNER, scoring: { ...RUNNER.scoring!, kv_cache: { ...RUNNER.scoring!.kv_cache, items_per_second: 16 } } },
  });
  const lines = compareRows(record.rows, faster);
  assert.ok(lines.includes("1: 3.00x -> 6.00x"));
  assert.ok(!lines.some((l) => l.startsWith("5a")), "unchanged figures without a ratio are not listed");
  assert.deepEqual(compareRows([], faster), []);
});

test("row 6: a profile in local shards against one runner; the merge's own time is the claim", () => {
  const shards = {
    threads: 4,
    shards: 2,
    abilities: 4,
    items: 64,
    one_seconds: 12,
    sharded_seconds: 6,
    merge_seconds: 0.4,
    same_manifest: true,
  };
  const row = buildRows({ shards }).find((r) => r.row === "6")!;
  assert.equal(row.what, "A profile in 2 local shards (2 threads each) vs 1 runner (4), 4 abilities, 64 items; the merge 400 ms");
  assert.equal(row.ratio, 2);
  assert.equal(row.met, true);
  assert.equal(buildRows({ shards: { ...shards, merge_seconds: 1.5 } })[0]!.met, false);
  assert.match(buildRows({ shards: { ...shards, same_manifest: false } })[0]!.what, /profile\.json differs$/);
});

/** A bench of one round of rows 1 and 3: `speed` scales scoring and importance, `mfu` their utilisation. */
function round(parameters: number, speed: number, mfu: number): RunnerBench {
  return {
    ...RUNNER,
    profile: undefined,
    scoring: {
      ...RUNNER.scoring!,
      parameters,
      kv_cache: { seconds: 2 / speed, items_per_second: 8 * speed, flops_per_second: 100e9 * mfu },
      speedup: 3 * speed,
    },
    importance: { ...RUNNER.importance!, tokens_per_second: 2048 * speed, flops_per_second: 100e9 * mfu },
  };
}

test("--families: rows 1-, 3a- and 3c- of each family against the Llama of the same run, best round of each figure", () => {
  const llama: FamilyBench = {
    name: "llama",
    label: "Llama",
    config: { model_type: "llama", hidden_size: 512, num_hidden_layers: 4 },
    rounds: [round(20_200_000, 1, 0.4), round(20_200_000, 0.5, 0.2)],
  };
  const gemma: FamilyBench = {
    name: "gemma2",
    label: "Gemma 2",
    config: { model_type: "gemma2", hidden_size: 512, num_hidden_layers: 4, sliding_window: 4096, tie_word_embeddings: true },
    // its best scoring in the first round, its best importance MFU in the second
    rounds: [round(16_000_000, 0.9, 0.3), round(16_000_000, 0.5, 0.36)],
  };
  const moe: FamilyBench = {
    name: "moe",
    label: "Mixtral",
    config: {
      model_type: "mixtral",
      hidden_size: 512,
      intermediate_size: 704,
      num_hidden_layers: 4,
      num_local_experts: 8,
      num_experts_per_tok: 2,
    },
    rounds: [round(46_200_000, 1.2, 0.5)],
  };
  const figures = familyFigures(gemma)!;
  assert.equal(figures.itemsPerSecond, 7.2);
  assert.equal(figures.tokensPerSecond, 7.2 * (100 + 4 * 20), "tokens read: the context and every choice");
  assert.ok(Math.abs(figures.importanceMfu! - 0.36) < 1e-12, "each figure the best of its own rounds");
  assert.equal(familyFigures({ ...gemma, rounds: [] }), undefined);

  const rows = familyRows({ rounds: 2, families: [llama, gemma, moe] });
  assert.deepEqual(
    rows.map((r) => r.row),
    ["1-gemma2", "3a-gemma2", "3c-gemma2", "1-moe", "3a-moe", "3c-moe"],
  );
  const byRow = new Map(rows.map((r) => [r.row, r]));
  assert.ok(Math.abs(byRow.get("1-gemma2")!.ratio! - 0.9) < 1e-12, "items/s against the Llama's best round");
  assert.equal(byRow.get("1-gemma2")!.a, "7.20 items/s, 1296 tokens/s");
  assert.equal(byRow.get("1-gemma2")!.b, "8.00 items/s, 1440 tokens/s");
  assert.match(byRow.get("1-gemma2")!.what, /no key masked/);
  assert.match(byRow.get("1-gemma2")!.what, /2 rounds interleaved/);
  assert.ok(Math.abs(byRow.get("3a-gemma2")!.ratio! - 0.9) < 1e-12, "MFU 36% (its second round) against the Llama's 40%");
  assert.equal(byRow.get("3a-gemma2")!.a, "MFU 36.0%");
  assert.ok(Math.abs(byRow.get("3c-gemma2")!.ratio! - 0.9) < 1e-12, "importance MFU 36% against 40%");
  assert.equal(byRow.get("3c-moe")!.a, "2458 tokens/s, MFU 50.0%");
  assert.match(byRow.get("1-moe")!.what, /8 experts top-2 of intermediate 704, 20\.2M active/);
  assert.ok(
    rows.every((r) => r.met === undefined && r.target === ""),
    "the family rows inform; they have no target",
  );
  // in the table after the Llama's own rows
  assert.deepEqual(
    buildRows({ runner: RUNNER, families: { rounds: 2, families: [llama, moe] } }).map((r) => r.row),
    ["1", "2", "3a", "3b", "3c", "1-moe", "3a-moe", "3c-moe"],
  );
  // without the Llama beside them there is nothing to compare with
  assert.deepEqual(familyRows({ rounds: 1, families: [gemma, moe] }), []);
});

test("--baseline-runner: rows 1-build, 3a-build and 3c-build, met while no slower than the rounds' own spread", () => {
  const llama = { name: "llama", label: "Llama", config: { model_type: "llama" } };
  // this build's rounds differ by 10% (speed 1.0 and 0.9); the baseline's by 4%
  const current: FamilyBench = { ...llama, rounds: [round(20_200_000, 1, 0.4), round(20_200_000, 0.9, 0.36)] };
  const baseline = (speed: number): FamilyBench => ({
    ...llama,
    name: "baseline",
    label: "/builds/77b9259/bprof-runner",
    runner: "/builds/77b9259/bprof-runner",
    rounds: [round(20_200_000, speed, 0.4 * speed), round(20_200_000, 0.96 * speed, 0.384 * speed)],
  });
  const rows = baselineRows({ rounds: 2, families: [current, baseline(1.05)] });
  assert.deepEqual(
    rows.map((r) => r.row),
    ["1-build", "3a-build", "3c-build"],
  );
  const items = rows[0]!;
  assert.ok(Math.abs(items.ratio! - 1 / 1.05) < 1e-12, "best round against best round");
  assert.equal(items.a, "8.00 items/s");
  assert.equal(items.b, "8.40 items/s");
  assert.match(
    items.what,
    /this build vs \/builds\/77b9259\/bprof-runner, 2 rounds interleaved, best of each; the rounds of one build differ by up to 11\.1%/,
  );
  assert.equal(items.target, ">= 0.88x (no slower beyond that noise)");
  assert.ok(
    rows.every((r) => r.met === true),
    "5% slower is within 11% of noise",
  );
  // slower than either build's own rounds differ: not met
  assert.ok(baselineRows({ rounds: 2, families: [current, baseline(1.3)] }).every((r) => r.met === false));
  // after the run's own rows, in the table
  assert.deepEqual(
    buildRows({ runner: RUNNER, builds: { rounds: 2, families: [current, baseline(1)] } }).map((r) => r.row),
    ["1", "2", "3a", "3b", "3c", "1-build", "3a-build", "3c-build"],
  );
  assert.deepEqual(baselineRows({ rounds: 1, families: [current] }), [], "no baseline, nothing to compare");
});

test("--families: a sliding window shorter than the sequences is said to mask keys the FLOPs leave out", () => {
  const gemma: FamilyBench = { name: "gemma2", label: "Gemma 2", config: { model_type: "gemma2", sliding_window: 64 }, rounds: [] };
  assert.equal(
    familyNote(gemma, 16_000_000, 128),
    "16.0M params, sliding window 64 < 128-token sequences: FLOPs count only the keys inside it",
  );
  assert.equal(familyNote({ ...gemma, config: { model_type: "gemma2" } }, 16_000_000, 128), "16.0M params");
});
