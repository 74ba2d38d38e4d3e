// Times the paired bootstrap over a full profiling grid: 10 abilities x 10 benchmarks x 6 k
// values, 1000-item benchmarks, 1000 resamples per cell. Synthetic but realistic scores: the
// baseline is right on about 60% of the items and each ablation flips 5-20% of them, mostly
// right to wrong. Target: under one second in Node on a slow 2-core machine. Row 5 of
// `npm run bench`; on its own, with details:
//
//     node --import tsx scripts/bench/analysis.ts
import { availableParallelism, cpus } from "node:os";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { bootstrapGrid, type GridBenchmark, type GridCell } from "../../src/core/analysis/bootstrap";
import { seededRandom } from "../../src/core/base/random";
import { median } from "./text";

export const GRID = { abilities: 10, benchmarks: 10, kValues: 6, items: 1000, resamples: 1000 } as const;

export interface Grid {
  benchmarks: GridBenchmark[];
  cells: GridCell[];
}

/** `itemsOf(b)` items in benchmark b; every cell also carries a random control at its k. */
export function syntheticGrid(itemsOf: (benchmark: number) => number, seed: number): Grid {
  const rand = seededRandom(seed);
  const benchmarks: GridBenchmark[] = [];
  const cells: GridCell[] = [];
  for (let b = 0; b < GRID.benchmarks; b++) {
    const baseline = Uint8Array.from({ length: itemsOf(b) }, () => (rand() < 0.6 ? 1 : 0));
    benchmarks.push({ name: `benchmark-${b}`, baseline, chance: 0.25 });
    for (let a = 0; a < GRID.abilities; a++) {
      for (let k = 0; k < GRID.kValues; k++) {
        // Larger k flips more: 5% at the smallest k up to 20% at the largest.
        const flipRate = 0.05 + (0.15 * k) / (GRID.kValues - 1);
        cells.push({
          benchmark: `benchmark-${b}`,
          ablated: ablate(baseline, flipRate, rand),
          control: ablate(baseline, flipRate / 2, rand),
        });
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

export function withoutControls(cells: readonly GridCell[]): GridCell[] {
  return cells.map(({ benchmark, ablated }) => ({ benchmark, ablated }));
}

export interface Timing {
  wallMs: number;
  cpuMs: number;
}

/** Wall and CPU milliseconds of each of `repeats` runs, the first one cold. CPU time is kept too because a busy machine stretches wall time. */
export function timings(repeats: number, run: () => void): Timing[] {
  return Array.from({ length: repeats }, () => {
    const cpuStart = process.cpuUsage();
    const start = performance.now();
    run();
    const wallMs = performance.now() - start;
    const cpu = process.cpuUsage(cpuStart);
    return { wallMs, cpuMs: (cpu.user + cpu.system) / 1000 };
  });
}

export interface AnalysisBenchResult {
  cells: number;
  items: number;
  resamples: number;
  /** AIS alone, wall milliseconds per run (the first cold). */
  ais_milliseconds: number[];
  ais_median_ms: number;
  /** AIS and specificity against the random control, as a profile run computes them per metric. */
  ais_and_specificity_milliseconds: number[];
  ais_and_specificity_median_ms: number;
  significant_cells: number;
}

export function benchAnalysis(repeats: number): AnalysisBenchResult {
  const grid = syntheticGrid(() => GRID.items, 1);
  const options = { resamples: GRID.resamples, seed: 7 };
  const bare = withoutControls(grid.cells);
  const ais = timings(repeats, () => bootstrapGrid(grid.benchmarks, bare, options)).map((t) => t.wallMs);
  const both = timings(repeats, () => bootstrapGrid(grid.benchmarks, grid.cells, options)).map((t) => t.wallMs);
  const significant = bootstrapGrid(grid.benchmarks, bare, options).filter((c) => c.ais.significant).length;
  return {
    cells: grid.cells.length,
    items: GRID.items,
    resamples: GRID.resamples,
    ais_milliseconds: ais,
    ais_median_ms: median(ais),
    ais_and_specificity_milliseconds: both,
    ais_and_specificity_median_ms: median(both),
    significant_cells: significant,
  };
}

function summary(label: string, runs: Timing[]): string {
  const ms = (value: number) => `${value.toFixed(0).padStart(5)} ms`;
  const wall = runs.map((run) => run.wallMs);
  const cpu = runs.map((run) => run.cpuMs);
  return `${label.padEnd(50)} first ${ms(wall[0]!)} (cpu ${ms(cpu[0]!)})   median ${ms(median(wall))} (cpu ${ms(median(cpu))})`;
}

function main(): void {
  const repeats = 5;
  const cpu = cpus()[0]?.model ?? "unknown CPU";
  console.log(`Node ${process.version}, ${availableParallelism()} cores (${cpu})`);
  console.log(
    `grid: ${GRID.abilities} abilities x ${GRID.benchmarks} benchmarks x ${GRID.kValues} k = ${GRID.abilities * GRID.benchmarks * GRID.kValues} cells, ${GRID.resamples} resamples`,
  );

  const equalSizes = syntheticGrid(() => GRID.items, 1);
  // Sizes 995..1004: no two benchmarks share a resample matrix, the worst case for drawing.
  const distinctSizes = syntheticGrid((b) => GRID.items - 5 + b, 2);
  const options = { resamples: GRID.resamples, seed: 7 };

  const flipped = equalSizes.cells.reduce((sum, cell) => {
    const baseline = equalSizes.benchmarks.find((b) => b.name === cell.benchmark)!.baseline;
    let changed = 0;
    for (let i = 0; i < baseline.length; i++) if (cell.ablated[i] !== baseline[i]) changed++;
    return sum + changed;
  }, 0);
  console.log(`mean flipped items per cell: ${(flipped / equalSizes.cells.length).toFixed(1)} of ${GRID.items}`);

  console.log(
    summary(
      "AIS, 1000-item benchmarks",
      timings(repeats, () => bootstrapGrid(equalSizes.benchmarks, withoutControls(equalSizes.cells), options)),
    ),
  );
  console.log(
    summary(
      "AIS, sizes 995..1004 (no shared resamples)",
      timings(repeats, () => bootstrapGrid(distinctSizes.benchmarks, withoutControls(distinctSizes.cells), options)),
    ),
  );
  console.log(
    summary(
      "AIS + specificity vs random control, 1000 items",
      timings(repeats, () => bootstrapGrid(equalSizes.benchmarks, equalSizes.cells, options)),
    ),
  );

  const check = bootstrapGrid(equalSizes.benchmarks, withoutControls(equalSizes.cells), options);
  console.log(`significant cells: ${check.filter((c) => c.ais.significant).length} of ${check.length}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main();
