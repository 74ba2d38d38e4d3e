// `npm run bench`: the performance record. Every claim is a ratio of two figures measured side by
// side in this run on this machine; the table goes to stdout and every raw figure, with the
// machine, to bench-results.json (compared with the previous record first, when there is one).
//
//   node --import tsx scripts/bench/main.ts [--threads N] [--quick] [--out FILE] [--gpu-bench DIR]...
//                                           [--families | --families-only] [--baseline-runner PATH [--baseline-only]]
//
// --threads    compute threads of the runner and of the Python reference (default: every core)
// --quick      small sizes, a smoke test of the whole bench in a minute; writes no record unless --out
// --out        where the record goes (default bench-results.json at the repository root)
// --gpu-bench  a folder written by scripts/bench/gpu-host.sh on a GPU machine (bench.json, host.json):
//              its rows join this run's record instead of a GPU run here; repeat it for rows run
//              in separate calls there
// --families   rows 1-gemma2, 1-moe, 3a-*, 3c-*: rows 1 and 3 (scoring with the KV cache, its MFU,
//              the importance pass's) on a Gemma 2 and a Mixtral (8 experts, top 2, each of half the
//              intermediate size: the Llama's active MLP) of the Llama's size, the Llama run again
//              beside them, the three alternating round by round; each figure against the Llama's
//              of the same run, MFU with each family's own FLOPs (scripts/bench/families.ts)
// --families-only  the families' runs and nothing else: rows 1, 3a-3c from the Llama run beside
//              them (no profile, so no row 2), and the family rows; writes no record unless --out
// --baseline-runner  rows 1-build, 3a-build, 3c-build: rows 1 and 3 on the Llama by this build and
//              by another build of bprof-runner (the record's commit, say), alternating round by
//              round, so that "a change costs no speed" is a ratio measured side by side
// --baseline-only  those rows (and rows 1, 3a-3c from this build's rounds) and nothing else;
//              writes no record unless --out
//
// Rows 1-3: `bprof-runner bench` (native-runner/PROTOCOL.md, "bench"); on a GPU, rows 1g, 2g and
// 3d-3f: the same bench with scripts/bench/gpu-job.json (a ~1B-parameter Llama in bfloat16, MFU
// against the GPU's own matmul peak), run here when the runner sees a CUDA device. Row 4: the
// runner's `score` against scripts/bench/reference_llama.py on Debian's python3-torch (installed
// by `scripts/setup.sh --bench`). Row 5: the editor-side code of src/core, in this process (5d: the
// workspace model re-checking a dataset after an edit, as the editor does while a user types; 5e-5f:
// the results view's model and the negative-AIS cases of a data file, for a large run). Row 6: a
// profile in 2 local shards against 1 runner, the threads split evenly (the merge's cost).
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { benchAnalysis } from "./analysis";
import { benchDiagnostic, diagnosticBenchData } from "./diagnostic";
import {
  benchRecord,
  compareRows,
  mergeGpuBenches,
  renderTable,
  type BenchRecord,
  type FamilyBench,
  type GpuHost,
  type RawFigures,
  type RunnerBench,
} from "./format";
import { benchFamilies, FAMILY_MODELS, type FamilySizes } from "./families";
import { referenceComparison, runnerBench, runRunner, type ReferenceSizes } from "./runner";
import { benchShards, type ShardsSizes } from "./shards";
import { benchTasks } from "./tasks";
import { benchViews } from "./views";
import { benchRecheck } from "./workspace";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const RUNNER = process.env.BPROF_RUNNER ?? path.join(ROOT, "native-runner/build/bprof-runner");
// Debian's interpreter, the one python3-torch installs into (a pyenv or venv python3 on PATH has not got it).
const PYTHON = process.env.BPROF_BENCH_PYTHON ?? "/usr/bin/python3";
const REFERENCE_SCRIPT = path.join(ROOT, "scripts/bench/reference_llama.py");
// The GPU rows' job, one file for a GPU here and for scripts/bench/gpu-host.sh on a GPU machine.
const GPU_JOB = path.join(ROOT, "scripts/bench/gpu-job.json");

interface Options {
  threads: number;
  quick: boolean;
  out: string | undefined;
  gpuBench: string[];
  /** Run the families' rows (--families), or only them (--families-only). */
  families: "no" | "also" | "only";
  /** Another build of bprof-runner to run rows 1 and 3 beside this one (--baseline-runner). */
  baselineRunner: string | undefined;
  /** Only the baseline's rows (--baseline-only). */
  baselineOnly: boolean;
}

function parseArgs(argv: string[]): Options {
  const options: Options = {
    threads: os.availableParallelism(),
    quick: false,
    out: path.join(ROOT, "bench-results.json"),
    gpuBench: [],
    families: "no",
    baselineRunner: undefined,
    baselineOnly: false,
  };
  let outGiven = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--quick") options.quick = true;
    else if (arg === "--threads") options.threads = Number(argv[++i]);
    else if (arg === "--out") {
      options.out = path.resolve(argv[++i] ?? "");
      outGiven = true;
    } else if (arg === "--gpu-bench") options.gpuBench.push(path.resolve(argv[++i] ?? ""));
    else if (arg === "--families") options.families = options.families === "only" ? "only" : "also";
    else if (arg === "--families-only") options.families = "only";
    else if (arg === "--baseline-runner") options.baselineRunner = path.resolve(argv[++i] ?? "");
    else if (arg === "--baseline-only") options.baselineOnly = true;
    else
      throw new Error(
        `unknown argument ${arg} (--threads N, --quick, --out FILE, --gpu-bench DIR, --families, --families-only, --baseline-runner PATH, --baseline-only)`,
      );
  }
  if (options.families === "only" && options.gpuBench.length > 0)
    throw new Error("--families-only runs no GPU rows: leave out --gpu-bench");
  if (options.baselineOnly && !options.baselineRunner) throw new Error("--baseline-only needs --baseline-runner PATH");
  if (options.baselineOnly && (options.gpuBench.length > 0 || options.families !== "no"))
    throw new Error("--baseline-only runs the baseline's rows alone: leave out --gpu-bench and --families");
  if (!Number.isInteger(options.threads) || options.threads < 1) throw new Error("--threads must be a positive integer");
  // a partial run must not replace the record unless asked to
  if ((options.quick || options.families === "only" || options.baselineOnly) && !outGiven) options.out = undefined;
  return options;
}

/** Sizes of every row. The full bench takes about ten minutes on a 2-core machine. */
function sizes(quick: boolean) {
  const runnerBenchJob = quick
    ? {
        matmul: { n: 512, repeats: 2 },
        scoring: { items: 4, repeats: 1 },
        importance: { sequences: 4, length: 64 },
        profile: { abilities: 2, sequences: 4, length: 32, k: [0.00016, 0.01024], benchmarks: 2, items: 4, context: 32 },
      }
    : {
        scoring: { items: 8, repeats: 3 },
        importance: { sequences: 8, length: 128 },
        // Row 2 at the runner's own sizes (native-runner/src/cmd_bench.cpp): the paper's proportions
        // scaled down 50 times, 40 diagnostic sequences of 48 tokens per ability (~2000 items) against
        // 4 benchmarks of 10 items (a few hundred each), 4 choices, 48 + 8 tokens.
      };
  const reference: ReferenceSizes = quick
    ? { items: 4, choices: 4, context: [16, 48], continuation: [2, 8], rounds: 1 }
    : { items: 32, choices: 4, context: [64, 160], continuation: [4, 24], rounds: 2 };
  const editor = quick
    ? { diagnosticItems: 2000, documents: 100, taskDocuments: 500, runs: 1, taskRuns: 1, edits: 2, viewBenchmarks: 6, caseDocuments: 1000 }
    : {
        diagnosticItems: 20000,
        documents: 1000,
        taskDocuments: 10000,
        runs: 3,
        taskRuns: 1,
        edits: 9,
        viewBenchmarks: 60,
        caseDocuments: 10000,
      };
  const gpuBenchJob: Record<string, unknown> = quick
    ? { ...runnerBenchJob, device: "cuda", dtype: "bfloat16" }
    : JSON.parse(fs.readFileSync(GPU_JOB, "utf8"));
  const shards: ShardsSizes = quick
    ? { hidden: 64, layers: 2, abilities: 2, sequences: 4, length: 32, items: 8, context: 32 }
    : { hidden: 256, layers: 4, abilities: 4, sequences: 32, length: 64, items: 64, context: 96 };
  return { runnerBenchJob, gpuBenchJob, reference, editor, shards };
}

function say(line: string): void {
  process.stderr.write(`bench: ${line}\n`);
}

function git(args: string[]): string | undefined {
  try {
    return execFileSync("git", args, { cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return undefined;
  }
}

function machine(
  threads: number,
  runner: RunnerBench | undefined,
  torch: string | undefined,
  gpus: string[],
  loadAtStart: number[],
): Record<string, unknown> {
  const status = git(["status", "--porcelain", "--untracked-files=no"]);
  return {
    cpu: os.cpus()[0]?.model ?? "unknown",
    cores: os.availableParallelism(),
    memory_bytes: os.totalmem(),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    load_average_at_start: loadAtStart,
    load_average_at_end: os.loadavg(),
    threads,
    node: process.version,
    runner_version: runner?.runner_version ?? execFileSync(RUNNER, ["--version"], { encoding: "utf8" }).trim(),
    libtorch: runner?.libtorch,
    python_torch: torch,
    gpus,
    git_commit: git(["rev-parse", "HEAD"]),
    git_dirty: status === undefined ? undefined : status.length > 0,
  };
}

/** CUDA devices the runner sees, from `info` on a model folder (no weights are read). */
async function cudaDevices(modelDir: string, dir: string, threads: number): Promise<string[]> {
  const run = await runRunner(
    RUNNER,
    { protocol: 1, subcommand: "info", model: { path: path.resolve(modelDir), dtype: "bfloat16" }, device: "cuda" },
    dir,
    threads,
  );
  const info = JSON.parse(fs.readFileSync(path.join(run.out, "info.json"), "utf8")) as {
    devices: { type: string; name: string; description?: string | null }[];
  };
  return info.devices.filter((d) => d.type === "cuda").map((d) => `${d.name}${d.description ? ` (${d.description})` : ""}`);
}

function readJson<T>(file: string): T {
  try {
    return JSON.parse(fs.readFileSync(file, "utf8")) as T;
  } catch (e) {
    throw new Error(`${file}: ${(e as Error).message}`);
  }
}

/** The GPU bench of folders made by scripts/bench/gpu-host.sh, as one; host.json from the first. */
function gpuBenchFrom(dirs: string[]): { bench: RunnerBench; host: GpuHost | undefined } {
  const benches: { file: string; bench: RunnerBench }[] = [];
  let host: GpuHost | undefined;
  for (const dir of dirs) {
    const file = path.join(dir, "bench.json");
    if (!fs.existsSync(file)) throw new Error(`--gpu-bench ${dir}: no bench.json there (scripts/bench/gpu-host.sh writes it)`);
    benches.push({ file, bench: readJson<RunnerBench>(file) });
    const hostFile = path.join(dir, "host.json");
    host ??= fs.existsSync(hostFile) ? readJson<GpuHost>(hostFile) : undefined;
  }
  return { bench: mergeGpuBenches(benches), host };
}

async function main(): Promise<void> {
  const options = parseArgs(process.argv.slice(2));
  if (!fs.existsSync(RUNNER)) throw new Error(`${RUNNER} not found: run scripts/setup.sh first (npm run bench does)`);
  const partial = options.families === "only" || options.baselineOnly;
  if (options.baselineRunner && !fs.existsSync(options.baselineRunner))
    throw new Error(`--baseline-runner ${options.baselineRunner}: not found (build that commit's native-runner first)`);
  if (!partial && !fs.existsSync(PYTHON)) throw new Error(`${PYTHON} not found: run scripts/setup.sh --bench first (npm run bench does)`);
  // read before minutes of CPU rows, so that a wrong folder fails at once
  const brought = options.gpuBench.length > 0 ? gpuBenchFrom(options.gpuBench) : undefined;
  const size = sizes(options.quick);
  const t0 = performance.now();
  const started = new Date();
  const loadAtStart = os.loadavg();
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "bprof-bench-"));
  const elapsed = () => `${((performance.now() - t0) / 1000).toFixed(0)} s`;
  const raw: RawFigures = {};
  let gpus: string[] = [];
  try {
    if (loadAtStart[0]! > os.availableParallelism())
      say(
        `the machine is busy (load average ${loadAtStart[0]!.toFixed(1)} on ${os.availableParallelism()} cores): absolute figures will be low, ratios less so`,
      );

    // rows 1 and 3 again on several models, alternating round by round (scripts/bench/families.ts)
    const sideBySide = (what: string, folder: string, rounds: number, models?: readonly Omit<FamilyBench, "rounds">[]) => {
      say(`${what}, ${rounds} round(s) interleaved (${elapsed()})`);
      const { matmul, scoring, importance } = size.runnerBenchJob as FamilySizes;
      const sizes = { matmul, scoring, importance };
      return benchFamilies(RUNNER, sizes, path.join(scratch, folder), options.threads, rounds, say, models);
    };
    const families = async () => {
      const what = "rows 1-*, 3a-*, 3c-*: bprof-runner bench on llama, gemma2 and moe";
      raw.families = await sideBySide(what, "families", options.quick ? 1 : 3);
    };
    const builds = async (baselineRunner: string) => {
      const llama = FAMILY_MODELS.find((f) => f.name === "llama")!;
      const baseline = { ...llama, name: "baseline", label: baselineRunner, runner: baselineRunner };
      const what = `rows 1-build, 3a-build, 3c-build: the Llama by this build and by ${baselineRunner}`;
      raw.builds = await sideBySide(what, "builds", options.quick ? 1 : 5, [llama, baseline]);
    };
    if (partial) {
      if (options.families === "only") await families();
      if (options.baselineRunner) await builds(options.baselineRunner);
      // rows 1 and 3 from this build's Llama of those runs: its round whose scoring was fastest
      const llama = (raw.families ?? raw.builds)!.families.find((f) => f.name === "llama")!.rounds;
      raw.runner = llama.reduce((a, b) =>
        (b.scoring?.kv_cache.items_per_second ?? 0) > (a.scoring?.kv_cache.items_per_second ?? 0) ? b : a,
      );
    } else {
      say(`rows 1-3: bprof-runner bench (matmul, scoring, importance, profile), ${options.threads} threads`);
      raw.runner = await runnerBench(RUNNER, size.runnerBenchJob, path.join(scratch, "bench-cpu"), options.threads, (e) => {
        if (e.type === "progress") say(`  ${String(e.phase)} ${String(e.done)}/${String(e.total)} (${elapsed()})`);
      });
      if (options.families === "also") await families();
      if (options.baselineRunner) await builds(options.baselineRunner);

      say(`row 4: bprof-runner score vs the Python reference (${PYTHON}), ${options.threads} threads (${elapsed()})`);
      const reference = await referenceComparison(
        RUNNER,
        PYTHON,
        REFERENCE_SCRIPT,
        size.reference,
        path.join(scratch, "reference"),
        options.threads,
        say,
      );
      raw.reference = reference.result;

      if (brought) {
        raw.runnerGpu = brought.bench;
        if (brought.host) raw.gpuHost = brought.host;
        gpus = brought.host?.gpus.length ? brought.host.gpus : [brought.bench.device_name ?? brought.bench.device];
        say(`rows 1g, 2g, 3d-3f: brought from ${options.gpuBench.join(", ")} (${gpus.join(", ")})`);
      } else {
        gpus = await cudaDevices(reference.modelDir, path.join(scratch, "info"), options.threads).catch((e: unknown) => {
          say(`no GPU rows: bprof-runner info failed: ${(e as Error).message.split("\n")[0]}`);
          return [];
        });
        if (gpus.length > 0) {
          say(`rows 1g, 2g, 3d-3f on ${gpus[0]}: bprof-runner bench with ${path.relative(ROOT, GPU_JOB)} (${elapsed()})`);
          raw.runnerGpu = await runnerBench(RUNNER, size.gpuBenchJob, path.join(scratch, "bench-gpu"), options.threads);
        }
      }

      say(`row 6: a profile in 2 local shards vs 1 runner, ${options.threads} threads (${elapsed()})`);
      raw.shards = await benchShards(RUNNER, size.shards, path.join(scratch, "shards"), options.threads);

      say(`row 5: editor side (${elapsed()})`);
      const e = size.editor;
      const diagnostic = benchDiagnostic(diagnosticBenchData(e.diagnosticItems, e.documents), e.runs);
      const tasks = await benchTasks(e.taskDocuments, e.taskRuns);
      const analysis = benchAnalysis(options.quick ? 1 : 5);
      const recheck = await benchRecheck(e.diagnosticItems, e.documents, e.edits);
      const views = await benchViews(10, e.viewBenchmarks, e.caseDocuments, e.runs + 2);
      raw.editor = {
        diagnostic: { items: diagnostic.items, median_ms: diagnostic.median_ms, milliseconds: diagnostic.milliseconds },
        tasks,
        analysis,
        recheck,
        views,
      };
    }
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }

  const seconds = (performance.now() - t0) / 1000;
  const record = benchRecord(
    started,
    machine(options.threads, raw.runner, raw.reference?.torch, gpus, loadAtStart),
    { threads: options.threads, quick: options.quick, sizes: size },
    raw,
    seconds,
  );
  say(`done in ${seconds.toFixed(0)} s`);
  const m = record.machine;
  const load = loadAtStart[0]!.toFixed(1);
  const host = raw.gpuHost
    ? ` (GPU rows from ${raw.gpuHost.hostname}, ${raw.gpuHost.date}, libtorch ${raw.runnerGpu?.libtorch ?? "?"})`
    : "";
  console.log(
    `\n${String(m.cpu)}, ${String(m.cores)} cores (load average ${load} at the start), ${options.threads} threads; ${gpus.length > 0 ? gpus.join(", ") : "no GPU"}${host}; bprof-runner ${String(m.runner_version)}, libtorch ${String(m.libtorch)}, python3-torch ${String(m.python_torch ?? "not run")}; ${record.date}; ${seconds.toFixed(0)} s\n`,
  );
  console.log(renderTable(record.rows));
  if (options.quick) console.log("\n--quick: toy sizes and single rounds, a smoke test of the bench; these figures mean nothing");

  if (options.out) {
    if (fs.existsSync(options.out)) {
      try {
        const previous = JSON.parse(fs.readFileSync(options.out, "utf8")) as BenchRecord;
        const lines = compareRows(previous.rows ?? [], record.rows);
        const commit = (previous.machine?.git_commit as string | undefined)?.slice(0, 9) ?? "unknown commit";
        if (lines.length > 0)
          console.log(
            `\nagainst the previous record (${previous.date}, ${commit}, ${String(previous.machine?.cpu)}):\n  ${lines.join("\n  ")}`,
          );
      } catch {
        say(`${options.out} is not a bench record; overwriting it`);
      }
    }
    fs.writeFileSync(options.out, JSON.stringify(record, null, 2) + "\n");
    console.log(`\nrecord: ${path.relative(process.cwd(), options.out) || options.out}`);
  }
  const missed = record.rows.filter((r) => r.met === false).map((r) => r.row);
  if (missed.length > 0) console.log(`targets not met: ${missed.join(", ")}`);
}

main().catch((e: unknown) => {
  process.stderr.write(`bench: ${(e as Error).message}\n`);
  process.exitCode = 1;
});
