// Times the paired bootstrap over a full profiling grid: 10 abilities x 10 benchmarks x 6 k
// values, 1000-item benchmarks, 1000 resamples per cell. Synthetic but realistic scores: the
// baseline is right on about 60% of the items and each ablation flips 5-20% of them, mostly
// right to wrong. Target: under one second in Node on a slow 2-core machine.
//
//     node --import tsx scripts/bench-analysis.ts
import { availableParallelism, cpus } from "node:os";
import { performance } from "node:perf_hooks";
import { bootstrapGrid, type GridBenchmark, type GridCell } from "../src/core/analysis/bootstrap";
import { seededRandom } from "../src/core/random";

const ABILITIES = 10;
const BENCHMARKS = 10;
const K_VALUES = 6;
const ITEMS = 1000;
const RESAMPLES = 1000;
const REPEATS = 5;

interface Grid {
  benchmarks: GridBenchmark[];
  cells: GridCell[];
}

/** `itemsOf(b)` items in benchmark b; every cell also carries a random control at its k. */
function syntheticGrid(itemsOf: (benchmark: number) => number, seed: number): Grid {
  const rand = seededRandom(seed);
  const benchmarks: GridBenchmark[] = [];
  const cells: GridCell[] = [];
  for (let b = 0; b < BENCHMARKS; b++) {
    const baseline = Uint8Array.from({ length: itemsOf(b) }, () => (rand() < 0.6 ? 1 : 0));
    benchmarks.push({ name: `benchmark-${b}`, baseline, chance: 0.25 });
    for (let a = 0; a < ABILITIES; a++) {
      for (let k = 0; k < K_VALUES; k++) {
        // Larger k flips more: 5% at the smallest k up to 20% at the largest.
        const flipRate = 0.05 + (0.15 * k) / (K_VALUES - 1);
        cells.push({ benchmark: `benchmark-${b}`, ablated: ablate(baseline, flipRate, rand), control: ablate(baseline, flipRate / 2, rand) });
      }
    }
  }
  return { benchmarks, cells };
}

/** The baseline with about `rate` of all items flipped, three right->wrong for each wrong->right. */
function ablate(baseline: Uint8Array, rate: number, rand: () => number): Uint8Array {
  const accuracy = baseline.reduce((sum, correct) => sum + correct, 0) / baseline.length;
  const loseChance = (0.75 * rate) / accuracy;
  const gainChance = (0.25 * rate) / (1 - accuracy);
  return baseline.map((correct) => (rand() < (correct === 1 ? loseChance : gainChance) ? 1 - correct : correct));
}

function withoutControls(cells: readonly GridCell[]): GridCell[] {
  return cells.map(({ benchmark, ablated }) => ({ benchmark, ablated }));
}

interface Timing {
  wallMs: number;
  cpuMs: number;
}

/** Wall and CPU milliseconds of each of REPEATS runs, the first one cold. CPU time is shown too because a busy machine stretches wall time. */
function timings(run: () => void): Timing[] {
  return Array.from({ length: REPEATS }, () => {
    const cpuStart = process.cpuUsage();
    const start = performance.now();
    run();
    const wallMs = performance.now() - start;
    const cpu = process.cpuUsage(cpuStart);
    return { wallMs, cpuMs: (cpu.user + cpu.system) / 1000 };
  });
}

function median(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function summary(label: string, runs: Timing[]): string {
  const ms = (value: number) => `${value.toFixed(0).padStart(5)} ms`;
  const wall = runs.map((run) => run.wallMs);
  const cpu = runs.map((run) => run.cpuMs);
  return `${label.padEnd(50)} first ${ms(wall[0]!)} (cpu ${ms(cpu[0]!)})   median ${ms(median(wall))} (cpu ${ms(median(cpu))})`;
}

function main(): void {
  const cpu = cpus()[0]?.model ?? "unknown CPU";
  console.log(`Node ${process.version}, ${availableParallelism()} cores (${cpu})`);
  console.log(`grid: ${ABILITIES} abilities x ${BENCHMARKS} benchmarks x ${K_VALUES} k = ${ABILITIES * BENCHMARKS * K_VALUES} cells, ${RESAMPLES} resamples`);

  const equalSizes = syntheticGrid(() => ITEMS, 1);
  // Sizes 995..1004: no two benchmarks share a resample matrix, the worst case for drawing.
  const distinctSizes = syntheticGrid((b) => ITEMS - 5 + b, 2);
  const options = { resamples: RESAMPLES, seed: 7 };

  const flipped = equalSizes.cells.reduce((sum, cell) => {
    const baseline = equalSizes.benchmarks.find((b) => b.name === cell.benchmark)!.baseline;
    return sum + cell.ablated.reduce((n, v, i) => n + (v !== baseline[i] ? 1 : 0), 0);
  }, 0);
  console.log(`mean flipped items per cell: ${(flipped / equalSizes.cells.length).toFixed(1)} of ${ITEMS}`);

  const results: string[] = [];
  results.push(summary("AIS, 1000-item benchmarks", timings(() => bootstrapGrid(equalSizes.benchmarks, withoutControls(equalSizes.cells), options))));
  results.push(summary("AIS, sizes 995..1004 (no shared resamples)", timings(() => bootstrapGrid(distinctSizes.benchmarks, withoutControls(distinctSizes.cells), options))));
  results.push(summary("AIS + specificity vs random control, 1000 items", timings(() => bootstrapGrid(equalSizes.benchmarks, equalSizes.cells, options))));
  for (const line of results) console.log(line);

  const check = bootstrapGrid(equalSizes.benchmarks, withoutControls(equalSizes.cells), options);
  const significant = check.filter((c) => c.ais.significant).length;
  console.log(`significant cells: ${significant} of ${check.length}`);
}

main();
