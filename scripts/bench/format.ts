// The performance record's table and JSON: raw figures in (the runner's bench.json, the Python
// reference, the editor-side timings), one row per claim out, each a ratio of two figures
// measured side by side in the same run. Pure functions: tested in test/unit/scripts/bench/format.test.ts.

/** One line of the printed table. */
export interface Row {
  row: string;
  what: string;
  /** The figure the claim is about (ours), formatted. */
  a: string;
  /** What it is compared with, formatted; "" when nothing is. */
  b: string;
  /** a over b as the claim reads it (a speed-up, a utilisation); undefined when there is none. */
  ratio?: number;
  /** How `ratio` prints: "x" (3.2x) or "%" (43.1%). */
  ratioUnit?: "x" | "%";
  /** The issue's target in words; "" when the row only informs. */
  target: string;
  /** undefined when the row has no target. */
  met?: boolean;
}

// ------------------------------------------------------------------------------------------------
// raw figures

/** The parts of the runner's bench.json read here (native-runner/PROTOCOL.md, "bench"). */
export interface RunnerBench {
  runner_version: string;
  libtorch: string;
  device: string;
  dtype: string;
  /** The CUDA driver's name of the GPU, on a GPU (runners after 0.1.0's first record). */
  device_name?: string | null;
  threads: number;
  seconds?: number;
  matmul?: { n: number; flops_per_second: number; measurements?: number[] };
  scoring?: {
    parameters: number;
    items: number;
    choices: number;
    context_tokens: number;
    continuation_tokens: number;
    flops?: number;
    kv_cache: Way;
    full_sequences: Way;
    speedup: number;
    max_logprob_difference: number;
  };
  importance?: {
    sequences: number;
    length: number;
    seconds: number;
    tokens_per_second: number;
    flops?: number;
    flops_per_second?: number;
    mfu?: number;
  };
  profile?: {
    parameters: number;
    abilities: number;
    /** Diagnostic sequences per ability and their length in tokens (runners from 0.1.0 on, after the paper-proportions change). */
    diagnostic_sequences?: number;
    diagnostic_tokens?: number;
    benchmarks?: number;
    k: number[];
    variants: number;
    items: number;
    choices?: number;
    context_tokens?: number;
    continuation_tokens?: number;
    /** The FLOPs the method needs for the whole profile (runners from 0.2 on): importance passes and every variant's scoring. */
    flops?: number;
    in_place: ProfileWay;
    /** Absent where the job measured the runner's way alone (`profile.ways`, an 8B model's bench). */
    checkpoint_per_variant?: ProfileWay;
    speedup?: number;
    /** The same variant both ways: largest |difference| of a choice's log-likelihood, and how many variants zeroed different parameters. */
    max_logprob_difference?: number;
    greedy_disagreements?: number;
    selection_mismatches?: number;
  };
}

interface ProfileWay {
  seconds: number;
  bytes_written: number;
  /** Where the seconds went (importance, rank, score; checkpoint and load for the original's way). */
  seconds_by_part?: Record<string, number>;
  /** The profile's FLOPs over the way's seconds, and over the matmul peak (runners from 0.2 on). */
  flops_per_second?: number;
  mfu?: number;
}

interface Way {
  seconds: number;
  items_per_second: number;
  flops_per_second?: number;
  mfu?: number;
}

/** Where and when a GPU bench brought from elsewhere ran (host.json, written by gpu-host.sh). */
export interface GpuHost {
  date: string;
  hostname: string;
  /** nvidia-smi's name, memory and driver of each GPU. */
  gpus: string[];
  /** null where python3 could not import torch (the build then used BPROF_TORCH_PREFIX). */
  python_torch: string | null;
  cpu: string;
  cores: number;
}

/** Row 4: the runner's `score` and the Python reference on the same items and threads. */
export interface ReferenceResult {
  parameters: number;
  items: number;
  /** Choices of all items together. */
  choices: number;
  threads: number;
  torch: string;
  /** Scoring only (model loaded), seconds of each round; the best is the figure. */
  runner_seconds: number[];
  python_seconds: number[];
  /** Whole processes (start, load, score, write), seconds of each round. */
  runner_process_seconds: number[];
  python_process_seconds: number[];
  max_logprob_difference: number;
  greedy_disagreements: number;
}

export interface EditorResult {
  diagnostic: { items: number; median_ms: number; milliseconds: number[] };
  tasks: {
    documents: number;
    median_ms: number;
    milliseconds: number[];
    tokens: number;
    render_milliseconds?: number[];
    tokenize_milliseconds?: number[];
  };
  analysis: {
    cells: number;
    resamples: number;
    ais_median_ms: number;
    ais_and_specificity_median_ms: number;
    ais_and_specificity_milliseconds: number[];
  };
  /** The workspace model re-checking a dataset after one-line edits (records from before it lack it). */
  recheck?: { items: number; documents: number; first_ms: number; median_ms: number; milliseconds: number[] };
  /** The results view's model and the cases of a data file, for a large run (records from before them lack it). */
  views?: {
    abilities: number;
    benchmarks: number;
    k: number;
    documents: number;
    view_median_ms: number;
    view_milliseconds: number[];
    cases_median_ms: number;
    cases_milliseconds: number[];
    marked_lines: number;
  };
}

/** Row 6: one profile in local shards against one runner, the threads split evenly (scripts/bench/shards.ts). */
export interface ShardsResult {
  threads: number;
  shards: number;
  abilities: number;
  items: number;
  one_seconds: number;
  sharded_seconds: number;
  /** From the last shard's end to the merge's: gathering the files and the whole job reading them back. */
  merge_seconds: number;
  /** Whether both ways wrote the same profile.json. */
  same_manifest: boolean;
}

/** One model of `--families` (scripts/bench/families.ts): its config and its runner bench, round by round. */
export interface FamilyBench {
  /** "llama" (the baseline), "gemma2", "moe": the rows' suffix. */
  name: string;
  /** "Gemma 2": how the row names it. */
  label: string;
  /** The Hugging Face config the runner made the model from. */
  config: Record<string, unknown>;
  /** `--baseline-runner`: another build of bprof-runner that runs this model (else this checkout's). */
  runner?: string;
  rounds: RunnerBench[];
}

/** `--families`: the Llama of rows 1-3 and the other families of its size, side by side. */
export interface FamiliesResult {
  rounds: number;
  families: FamilyBench[];
}

export interface RawFigures {
  runner?: RunnerBench;
  /** `--families`: rows 1-*, 3a-* and 3c-* (records from before it lack it). */
  families?: FamiliesResult;
  /** `--baseline-runner`: the Llama of rows 1 and 3 by this build ("llama") and by the other ("baseline"). */
  builds?: FamiliesResult;
  /** The runner's bench on a GPU in bfloat16: run here when the runner sees one, or brought from a
   *  GPU host (scripts/bench/gpu-host.sh, then `--gpu-bench`), with that host's facts. */
  runnerGpu?: RunnerBench;
  gpuHost?: GpuHost;
  reference?: ReferenceResult;
  editor?: EditorResult;
  shards?: ShardsResult;
}

// ------------------------------------------------------------------------------------------------
// figures as text

const SI = [
  [1e12, "T"],
  [1e9, "G"],
  [1e6, "M"],
  [1e3, "k"],
] as const;

/** Three significant digits, at least the units digit: 2.00e-6, 0.0123, 1.23, 12.3, 123, 1234. */
export function digits(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  const abs = Math.abs(value);
  if (abs >= 100) return value.toFixed(0);
  if (abs >= 10) return value.toFixed(1);
  if (abs >= 1) return value.toFixed(2);
  if (abs === 0) return "0";
  if (abs < 1e-3) return value.toExponential(2);
  return value.toPrecision(3);
}

/** 1.23 GB (powers of 1000). */
export function formatBytes(bytes: number): string {
  if (bytes === 0) return "0 B";
  for (const [scale, prefix] of SI) if (Math.abs(bytes) >= scale) return `${digits(bytes / scale)} ${prefix}B`;
  return `${bytes} B`;
}

/** 12.3 GFLOP/s. */
export function formatFlops(perSecond: number): string {
  for (const [scale, prefix] of SI) if (Math.abs(perSecond) >= scale) return `${digits(perSecond / scale)} ${prefix}FLOP/s`;
  return `${digits(perSecond)} FLOP/s`;
}

/** 850 ms under a second, 12.3 s above. */
export function formatSeconds(seconds: number): string {
  return seconds < 1 ? `${digits(seconds * 1000)} ms` : `${digits(seconds)} s`;
}

/**
 * 2.67x, 43.1%: rounded down, so that a ratio shown as reaching its target has reached it
 * (1.998 prints as 1.99x, not as a 2.00x that misses ">= 2x").
 */
export function formatRatio(ratio: number, unit: "x" | "%" = "x"): string {
  if (!Number.isFinite(ratio)) return "-";
  const down = (value: number, decimals: number) => (Math.floor(value * 10 ** decimals + 1e-9) / 10 ** decimals).toFixed(decimals);
  if (unit === "%") return `${down(ratio * 100, 1)}%`;
  return `${ratio >= 100 ? down(ratio, 0) : ratio >= 10 ? down(ratio, 1) : down(ratio, 2)}x`;
}

export function formatMet(met: boolean | undefined): string {
  return met === undefined ? "-" : met ? "yes" : "NO";
}

/** The smallest of a list (the best time of several rounds). */
export function best(values: readonly number[]): number {
  return values.length === 0 ? NaN : Math.min(...values);
}

// ------------------------------------------------------------------------------------------------
// rows

/** FLOP/s of a way of the runner's bench: its own figure, or its MFU times the peak (older runners). */
function flopsPerSecond(way: { flops_per_second?: number; mfu?: number }, peak: number | undefined): number | undefined {
  if (way.flops_per_second !== undefined) return way.flops_per_second;
  if (way.mfu !== undefined && peak !== undefined) return way.mfu * peak;
  return undefined;
}

/** Row 3's lines of one runner bench: achieved FLOP/s over the measured matmul peak. */
function mfuRows(bench: RunnerBench, labels: { row: string; peak: string; target: number | undefined }[]): Row[] {
  const peak = bench.matmul?.flops_per_second;
  if (peak === undefined) return [];
  const rows: Row[] = [];
  const add = (row: string, what: string, achieved: number | undefined, target: number | undefined) => {
    if (achieved === undefined) return;
    const ratio = achieved / peak;
    rows.push({
      row,
      what,
      a: formatFlops(achieved),
      b: `${formatFlops(peak)} ${labels[0]!.peak}`,
      ratio,
      ratioUnit: "%",
      target: target === undefined ? "" : `>= ${(target * 100).toFixed(0)}% of peak`,
      ...(target === undefined ? {} : { met: ratio >= target }),
    });
  };
  const [scoring, full, importance] = labels;
  const where = `${bench.device}, ${bench.dtype}`;
  if (bench.scoring) {
    add(scoring!.row, `MFU, forward scoring with KV cache (${where})`, flopsPerSecond(bench.scoring.kv_cache, peak), scoring!.target);
    add(full!.row, `MFU, forward scoring as full sequences (${where})`, flopsPerSecond(bench.scoring.full_sequences, peak), full!.target);
  }
  if (bench.importance)
    add(importance!.row, `MFU, importance pass: forward + backward (${where})`, flopsPerSecond(bench.importance, peak), importance!.target);
  return rows;
}

/** Row 1 (or 1g on a GPU): multiple-choice scoring with the context shared vs as full sequences. */
function scoringRow(row: string, bench: RunnerBench): Row[] {
  const s = bench.scoring;
  if (!s) return [];
  const ratio = s.kv_cache.items_per_second / s.full_sequences.items_per_second;
  return [
    {
      row,
      what: `MC scoring, ${parameterCount(s.parameters)}-param Llama${onDevice(bench)}, ${s.items} items x ${s.choices} choices (ctx ${s.context_tokens}, cont ${s.continuation_tokens} tokens): KV cache vs full sequences; max |dlogp| ${digits(s.max_logprob_difference)}`,
      a: `${digits(s.kv_cache.items_per_second)} items/s`,
      b: `${digits(s.full_sequences.items_per_second)} items/s`,
      ratio,
      target: ">= 2x",
      met: ratio >= 2,
    },
  ];
}

/** Row 2 (or 2g on a GPU): a whole profile in place vs a checkpoint per variant. */
function profileRow(row: string, bench: RunnerBench): Row[] {
  const p = bench.profile;
  // a row compares the two ways: a bench of the runner's way alone has no row 2 to give
  if (!p?.checkpoint_per_variant) return [];
  const original = p.checkpoint_per_variant;
  const ratio = original.seconds / p.in_place.seconds;
  // the two ways must have computed the same variants (records from before the check have no figure)
  const agree = (p.max_logprob_difference === undefined || p.max_logprob_difference <= 1e-3) && !p.selection_mismatches;
  const diagnostic =
    p.diagnostic_sequences === undefined ? "" : ` x ${p.diagnostic_sequences} diagnostic seqs of ${p.diagnostic_tokens} tokens`;
  const items =
    p.benchmarks === undefined
      ? `${p.items} items`
      : `${p.benchmarks} benchmarks x ${p.items / p.benchmarks} items (${p.choices} choices, ctx ${p.context_tokens}, cont ${p.continuation_tokens})`;
  const check = p.max_logprob_difference === undefined ? "" : `; max |dlogp| ${digits(p.max_logprob_difference)}`;
  return [
    {
      row,
      what: `Whole profile, ${parameterCount(p.parameters)} params${onDevice(bench)}: ${p.abilities} abilities${diagnostic}, ${p.k.length} k, top + random (${p.variants} variants), ${items}: in place vs checkpoint per variant + lm-eval scoring, interleaved${check}`,
      a: `${formatSeconds(p.in_place.seconds)}, ${formatBytes(p.in_place.bytes_written)} written${utilisation(p.in_place)}`,
      b: `${formatSeconds(original.seconds)}, ${formatBytes(original.bytes_written)} written${utilisation(original)}`,
      ratio,
      // met also needs the two ways to agree (max |dlogp| <= 1e-3, the same parameters zeroed)
      target: ">= 10x, 0 B written",
      met: ratio >= 10 && p.in_place.bytes_written === 0 && agree,
    },
  ];
}

/** ", MFU 12.3%": a way's share of the matmul peak, when the record has it. */
function utilisation(way: ProfileWay): string {
  return way.mfu === undefined ? "" : `, MFU ${(way.mfu * 100).toFixed(1)}%`;
}

/** 20.2M, 1.24B. */
function parameterCount(n: number): string {
  return n >= 1e9 ? `${(n / 1e9).toFixed(2)}B` : `${(n / 1e6).toFixed(1)}M`;
}

/**
 * GPU benches of separate calls (scripts/bench/gpu-host.sh --rows) as one: each adds the rows it
 * ran. A CPU bench, or a row in two of them (which to keep would be a guess), is refused, naming
 * the file.
 */
export function mergeGpuBenches(benches: readonly { file: string; bench: RunnerBench }[]): RunnerBench {
  if (benches.length === 0) throw new Error("no GPU bench to merge");
  const rowKeys = ["matmul", "scoring", "importance", "profile"] as const;
  const merged: RunnerBench = { ...benches[0]!.bench, matmul: undefined, scoring: undefined, importance: undefined, profile: undefined };
  const from = new Map<string, string>();
  for (const { file, bench } of benches) {
    if (bench.device === "cpu") throw new Error(`${file}: a CPU bench (device cpu), not a GPU's`);
    for (const key of rowKeys) {
      if (bench[key] === undefined) continue;
      if (from.has(key)) throw new Error(`${file}: row '${key}' is also in ${from.get(key)!}`);
      from.set(key, file);
      Object.assign(merged, { [key]: bench[key] });
    }
  }
  return merged;
}

/** " on cuda (NVIDIA H100 80GB HBM3), bfloat16" for a GPU bench; nothing for the CPU's. */
function onDevice(bench: RunnerBench): string {
  if (bench.device === "cpu") return "";
  return ` on ${bench.device}${bench.device_name ? ` (${bench.device_name})` : ""}, ${bench.dtype}`;
}

/** The table: rows 1-5 from whatever figures are there; a GPU's rows 1g, 2g and 3d-3f after the CPU's. */
export function buildRows(raw: RawFigures): Row[] {
  const rows: Row[] = [];
  if (raw.runner) {
    rows.push(...scoringRow("1", raw.runner), ...profileRow("2", raw.runner));
    rows.push(
      ...mfuRows(raw.runner, [
        { row: "3a", peak: "matmul peak", target: 0.5 },
        { row: "3b", peak: "matmul peak", target: undefined },
        { row: "3c", peak: "matmul peak", target: undefined },
      ]),
    );
  }
  if (raw.runnerGpu) {
    rows.push(...scoringRow("1g", raw.runnerGpu), ...profileRow("2g", raw.runnerGpu));
    rows.push(
      ...mfuRows(raw.runnerGpu, [
        { row: "3d", peak: "bf16 matmul peak", target: undefined },
        { row: "3e", peak: "bf16 matmul peak", target: undefined },
        { row: "3f", peak: "bf16 matmul peak", target: undefined },
      ]),
    );
  }
  if (raw.families) rows.push(...familyRows(raw.families));
  if (raw.builds) rows.push(...baselineRows(raw.builds));
  const r = raw.reference;
  if (r) {
    const ours = r.items / best(r.runner_seconds);
    const theirs = r.items / best(r.python_seconds);
    const agree = r.max_logprob_difference <= 1e-3;
    rows.push({
      row: "4",
      what: `MC scoring vs plain PyTorch ${r.torch} choice by choice, ${(r.parameters / 1e6).toFixed(1)}M params, ${r.items} items x ${r.choices / r.items} choices, ${r.threads} threads; max |dlogp| ${digits(r.max_logprob_difference)}`,
      a: `${digits(ours)} items/s`,
      b: `${digits(theirs)} items/s`,
      ratio: ours / theirs,
      target: ">= 2x, |dlogp| <= 1e-3",
      met: ours / theirs >= 2 && agree,
    });
  }
  const sh = raw.shards;
  if (sh) {
    const each = Math.max(1, Math.floor(sh.threads / sh.shards));
    rows.push({
      row: "6",
      what: `A profile in ${sh.shards} local shards (${each} thread${each === 1 ? "" : "s"} each) vs 1 runner (${sh.threads}), ${sh.abilities} abilities, ${sh.items} items; the merge ${formatSeconds(sh.merge_seconds)}${sh.same_manifest ? "" : "; profile.json differs"}`,
      a: formatSeconds(sh.sharded_seconds),
      b: formatSeconds(sh.one_seconds),
      ratio: sh.one_seconds / sh.sharded_seconds,
      // the merge is one runner start and reading files back, whatever the profile's size
      target: "merge < 1 s",
      met: sh.merge_seconds < 1,
    });
  }
  const e = raw.editor;
  if (e) {
    const underSecond = (row: string, what: string, ms: number, per: string) =>
      rows.push({ row, what, a: formatSeconds(ms / 1000), b: per, target: "< 1 s", met: ms < 1000 });
    underSecond(
      "5a",
      `Validate a ${e.diagnostic.items.toLocaleString("en-US")}-item diagnostic file (all checks, median)`,
      e.diagnostic.median_ms,
      `${digits(e.diagnostic.items / (e.diagnostic.median_ms / 1000))} items/s`,
    );
    underSecond(
      "5b",
      `Render + tokenize ${e.tasks.documents.toLocaleString("en-US")} benchmark items (lm-eval task code, median)`,
      e.tasks.median_ms,
      `${digits(e.tasks.documents / (e.tasks.median_ms / 1000))} items/s`,
    );
    underSecond(
      "5c",
      `AIS + specificity, ${e.analysis.resamples} bootstrap resamples, ${e.analysis.cells} cells of 1,000 items (median)`,
      e.analysis.ais_and_specificity_median_ms,
      `AIS alone ${formatSeconds(e.analysis.ais_median_ms / 1000)}`,
    );
    const r = e.recheck;
    if (r) {
      rows.push({
        row: "5d",
        what: `Re-check a ${r.items.toLocaleString("en-US")}-item dataset and its config after a one-line edit (editor's workspace model, ${r.documents.toLocaleString("en-US")} benchmark documents; median of ${r.milliseconds.length} edits) vs the first check`,
        a: formatSeconds(r.median_ms / 1000),
        b: formatSeconds(r.first_ms / 1000),
        ratio: r.first_ms / r.median_ms,
        target: "< 100 ms",
        met: r.median_ms < 100,
      });
    }
    const v = e.views;
    if (v) {
      const under200 = (row: string, what: string, ms: number, per: string) =>
        rows.push({ row, what, a: formatSeconds(ms / 1000), b: per, target: "< 200 ms", met: ms < 200 });
      under200(
        "5e",
        `Results view model: ${v.abilities} abilities x ${v.benchmarks} benchmarks x ${v.k} k, 1,000 resamples per cell (results.json read; median)`,
        v.view_median_ms,
        `${v.abilities * v.benchmarks} cells`,
      );
      under200(
        "5f",
        `Negative-AIS cases of a ${v.documents.toLocaleString("en-US")}-document data file (flips.jsonl and the data file read; median)`,
        v.cases_median_ms,
        `${v.marked_lines.toLocaleString("en-US")} lines marked`,
      );
    }
  }
  return rows;
}

// ------------------------------------------------------------------------------------------------
// --families: the same rows on other families, each against the Llama run beside it

/** A family's figures: the best of its rounds, each figure on its own (a busy moment spoils one round). */
export interface FamilyFigures {
  parameters: number;
  /** Scoring with the KV cache: items/s, tokens read per second, MFU; the KV cache's speed-up over full sequences. */
  itemsPerSecond: number;
  tokensPerSecond: number;
  scoringMfu: number | undefined;
  speedup: number;
  /** The importance pass. */
  importanceTokensPerSecond: number;
  importanceMfu: number | undefined;
}

/** A way's MFU: the runner's own, or its FLOP/s over the matmul peak its process measured. */
function mfuOf(way: { flops_per_second?: number; mfu?: number }, bench: RunnerBench): number | undefined {
  const peak = bench.matmul?.flops_per_second;
  return way.mfu ?? (way.flops_per_second !== undefined && peak !== undefined ? way.flops_per_second / peak : undefined);
}

/** The best of a family's rounds; undefined when no round has the scoring and importance rows. */
export function familyFigures(family: FamilyBench): FamilyFigures | undefined {
  const rounds = family.rounds.filter((b) => b.scoring && b.importance);
  if (rounds.length === 0) return undefined;
  const max = (values: (number | undefined)[]) => {
    const known = values.filter((v): v is number => v !== undefined && Number.isFinite(v));
    return known.length === 0 ? undefined : Math.max(...known);
  };
  const s = rounds[0]!.scoring!;
  const tokensPerItem = s.context_tokens + s.choices * s.continuation_tokens;
  const itemsPerSecond = max(rounds.map((b) => b.scoring!.kv_cache.items_per_second))!;
  return {
    parameters: s.parameters,
    itemsPerSecond,
    tokensPerSecond: itemsPerSecond * tokensPerItem,
    scoringMfu: max(rounds.map((b) => mfuOf(b.scoring!.kv_cache, b))),
    speedup: max(rounds.map((b) => b.scoring!.speedup))!,
    importanceTokensPerSecond: max(rounds.map((b) => b.importance!.tokens_per_second))!,
    importanceMfu: max(rounds.map((b) => mfuOf(b.importance!, b))),
  };
}

/**
 * What a family's model is and how its FLOPs are counted, from its config: a mixture of experts
 * counts its active experts and router only; a sliding window shorter than the sequences masks
 * keys, which the runner's FLOPs leave out.
 */
export function familyNote(family: FamilyBench, parameters: number, longest: number): string {
  const c = family.config;
  const count = (key: string) => (typeof c[key] === "number" ? (c[key] as number) : undefined);
  const experts = count("num_local_experts") ?? count("num_experts");
  const parts = [`${parameterCount(parameters)} params`];
  if (experts !== undefined) {
    const top = count("num_experts_per_tok") ?? 0;
    const intermediate = count("moe_intermediate_size") ?? count("intermediate_size") ?? 0;
    const hidden = count("hidden_size") ?? 0;
    const idle = (experts - top) * 3 * hidden * intermediate * (count("num_hidden_layers") ?? 0);
    parts.push(
      `${experts} experts top-${top} of intermediate ${intermediate}, ${parameterCount(parameters - idle)} active; FLOPs of the active experts and the router`,
    );
  }
  if (c.tie_word_embeddings === true) parts.push("tied embeddings");
  const window = count("sliding_window");
  if (window !== undefined && window > 0)
    parts.push(
      window >= longest
        ? `sliding window ${window} >= every sequence (${longest} tokens): no key masked`
        : `sliding window ${window} < ${longest}-token sequences: FLOPs count only the keys inside it`,
    );
  return parts.join(", ");
}

/** a / b, undefined when either is unknown. */
function ratio(a: number | undefined, b: number | undefined): number | undefined {
  return a !== undefined && b !== undefined ? a / b : undefined;
}

/** "12.3%", "?" when unknown. */
function percentText(share: number | undefined): string {
  return share === undefined ? "?" : `${(share * 100).toFixed(1)}%`;
}

/** ", MFU 12.3%" when there is one. */
function mfuText(mfu: number | undefined): string {
  return mfu === undefined ? "" : `, MFU ${(mfu * 100).toFixed(1)}%`;
}

/**
 * Rows 1-NAME, 3a-NAME and 3c-NAME of each family but the Llama: scoring with the KV cache (items/s,
 * tokens/s) and its MFU, the importance pass's tokens/s and MFU, each against the Llama's of the
 * same run; no target (the claim is that the other families run, at about the Llama's speed).
 */
export function familyRows(result: FamiliesResult): Row[] {
  const baseline = result.families.find((f) => f.name === "llama");
  const llama = baseline && familyFigures(baseline);
  if (!baseline || !llama) return [];
  const s = baseline.rounds.find((b) => b.scoring)!.scoring!;
  const i = baseline.rounds.find((b) => b.importance)!.importance!;
  const longest = Math.max(s.context_tokens + s.continuation_tokens, i.length);
  const sideBySide = `vs the Llama (${parameterCount(llama.parameters)}) in the same run, ${result.rounds} round${result.rounds === 1 ? "" : "s"} interleaved, best of each`;
  const rows: Row[] = [];
  for (const family of result.families) {
    if (family === baseline) continue;
    const f = familyFigures(family);
    if (!f) continue;
    const what = `${family.label} (${familyNote(family, f.parameters, longest)})`;
    const row = (name: string, text: string, a: string, b: string, r: number | undefined): Row => ({
      row: `${name}-${family.name}`,
      what: text,
      a,
      b,
      ...(r === undefined ? {} : { ratio: r }),
      target: "",
    });
    rows.push(
      row(
        "1",
        `MC scoring with KV cache, ${what}, ${s.items} items x ${s.choices} choices (ctx ${s.context_tokens}, cont ${s.continuation_tokens}), ${sideBySide}; KV vs full sequences ${formatRatio(f.speedup)} (Llama ${formatRatio(llama.speedup)})`,
        `${digits(f.itemsPerSecond)} items/s, ${digits(f.tokensPerSecond)} tokens/s`,
        `${digits(llama.itemsPerSecond)} items/s, ${digits(llama.tokensPerSecond)} tokens/s`,
        f.itemsPerSecond / llama.itemsPerSecond,
      ),
      row(
        "3a",
        `MFU, forward scoring with KV cache, ${family.label} ${sideBySide} (each MFU over its own process's matmul peak)`,
        `MFU ${percentText(f.scoringMfu)}`,
        `Llama MFU ${percentText(llama.scoringMfu)}`,
        ratio(f.scoringMfu, llama.scoringMfu),
      ),
      row(
        "3c",
        `MFU, importance pass (forward + backward, ${i.sequences} seqs of ${i.length} tokens), ${family.label} ${sideBySide}`,
        `${digits(f.importanceTokensPerSecond)} tokens/s${mfuText(f.importanceMfu)}`,
        `${digits(llama.importanceTokensPerSecond)} tokens/s${mfuText(llama.importanceMfu)}`,
        ratio(f.importanceMfu, llama.importanceMfu),
      ),
    );
  }
  return rows;
}

// ------------------------------------------------------------------------------------------------
// --baseline-runner: this build against another build of the runner, on the same Llama

/** How far apart one build's own rounds of a figure are: the largest over the smallest, less 1. */
export function roundSpread(bench: FamilyBench, figure: (b: RunnerBench) => number | undefined): number {
  const values = bench.rounds.map(figure).filter((v): v is number => v !== undefined && Number.isFinite(v) && v > 0);
  return values.length < 2 ? 0 : Math.max(...values) / Math.min(...values) - 1;
}

/**
 * Rows 1-build, 3a-build and 3c-build: scoring with the KV cache (items/s) and its MFU, the
 * importance pass's MFU, by this build against the baseline build of the same run, best of each's
 * rounds. The claim is "no slower": met while this build's figure is short of the other's by no
 * more than the rounds of either build differ among themselves (the machine's noise, measured here).
 */
export function baselineRows(result: FamiliesResult): Row[] {
  const current = result.families.find((f) => f.name === "llama");
  const baseline = result.families.find((f) => f.name === "baseline");
  const a = current && familyFigures(current);
  const b = baseline && familyFigures(baseline);
  if (!current || !baseline || !a || !b) return [];
  const s = current.rounds.find((r) => r.scoring)!.scoring!;
  const i = current.rounds.find((r) => r.importance)!.importance!;
  const sideBySide = `this build vs ${baseline.label}, ${result.rounds} round${result.rounds === 1 ? "" : "s"} interleaved, best of each`;
  const row = (
    name: string,
    what: string,
    figure: (r: RunnerBench) => number | undefined,
    ours: string,
    theirs: string,
    ratio: number | undefined,
  ): Row => {
    const noise = Math.max(roundSpread(current, figure), roundSpread(baseline, figure));
    const floor = 1 - noise;
    return {
      row: `${name}-build`,
      what: `${what}, ${sideBySide}; the rounds of one build differ by up to ${formatRatio(noise, "%")}`,
      a: ours,
      b: theirs,
      ...(ratio === undefined ? {} : { ratio }),
      target: `>= ${formatRatio(floor)} (no slower beyond that noise)`,
      ...(ratio === undefined ? {} : { met: ratio >= floor - 1e-9 }),
    };
  };
  return [
    row(
      "1",
      `MC scoring with KV cache, ${parameterCount(a.parameters)}-param Llama, ${s.items} items x ${s.choices} choices (ctx ${s.context_tokens}, cont ${s.continuation_tokens})`,
      (r) => r.scoring?.kv_cache.items_per_second,
      `${digits(a.itemsPerSecond)} items/s`,
      `${digits(b.itemsPerSecond)} items/s`,
      a.itemsPerSecond / b.itemsPerSecond,
    ),
    row(
      "3a",
      "MFU, forward scoring with KV cache (each over its own process's matmul peak)",
      (r) => r.scoring && mfuOf(r.scoring.kv_cache, r),
      `MFU ${percentText(a.scoringMfu)}`,
      `MFU ${percentText(b.scoringMfu)}`,
      ratio(a.scoringMfu, b.scoringMfu),
    ),
    row(
      "3c",
      `MFU, importance pass (forward + backward, ${i.sequences} seqs of ${i.length} tokens)`,
      (r) => r.importance && mfuOf(r.importance, r),
      `${digits(a.importanceTokensPerSecond)} tokens/s${mfuText(a.importanceMfu)}`,
      `${digits(b.importanceTokensPerSecond)} tokens/s${mfuText(b.importanceMfu)}`,
      ratio(a.importanceMfu, b.importanceMfu),
    ),
  ];
}

// ------------------------------------------------------------------------------------------------
// printing

export const COLUMNS = ["row", "what", "figure A", "figure B", "ratio", "target", "met?"] as const;

function cells(row: Row): string[] {
  return [
    row.row,
    row.what,
    row.a,
    row.b,
    row.ratio === undefined ? "-" : formatRatio(row.ratio, row.ratioUnit),
    row.target || "-",
    formatMet(row.met),
  ];
}

/** A Markdown table, columns padded to line up in a terminal (and pasteable into docs/performance.md). */
export function renderTable(rows: readonly Row[]): string {
  const body = rows.map(cells).map((r) => r.map((c) => c.replace(/\|/g, "\\|")));
  const widths = COLUMNS.map((title, i) => Math.max(title.length, ...body.map((r) => r[i]!.length)));
  const line = (r: readonly string[]) => `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  const rule = `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`;
  return [line(COLUMNS), rule, ...body.map(line)].join("\n");
}

/** Lines comparing this run's ratios with an earlier record's (bench-results.json before it is overwritten). */
export function compareRows(previous: readonly Row[], current: readonly Row[]): string[] {
  const before = new Map(previous.map((r) => [r.row, r]));
  const lines: string[] = [];
  for (const row of current) {
    const old = before.get(row.row);
    if (!old) continue;
    if (row.ratio !== undefined && old.ratio !== undefined) {
      lines.push(`${row.row}: ${formatRatio(old.ratio, old.ratioUnit)} -> ${formatRatio(row.ratio, row.ratioUnit)}`);
    } else if (row.a !== old.a) {
      lines.push(`${row.row}: ${old.a} -> ${row.a}`);
    }
  }
  return lines;
}

/** bench-results.json: where and when, the table as printed, and every raw figure behind it. */
export interface BenchRecord {
  schema: 1;
  date: string;
  machine: Record<string, unknown>;
  options: Record<string, unknown>;
  rows: Row[];
  raw: RawFigures;
  seconds: number;
}

export function benchRecord(
  date: Date,
  machine: Record<string, unknown>,
  options: Record<string, unknown>,
  raw: RawFigures,
  seconds: number,
): BenchRecord {
  return { schema: 1, date: date.toISOString(), machine, options, rows: buildRows(raw), raw, seconds };
}
