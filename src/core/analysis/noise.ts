// How much a benchmark's profile is signal (docs/method.md, "Benchmark noise"), after Signal and
// Noise (Heineman et al., 2025), who rate a benchmark by how far apart it puts models (signal)
// against how much one model's score moves between checkpoints (noise). Here the "models" are the
// ablations: a benchmark whose AIS differs from ability to ability tells the abilities apart;
// one whose AIS moves as much between resamples of its documents, or between random draws of
// the same size, does not.
//
//     signal = sd over the abilities' top cells of AIS
//     noise  = sqrt( mean over those cells of their bootstrap variance  +  variance of the random draws' AIS )
//     snr    = signal / noise
//
// An snr below 1 says the abilities' differences on this benchmark are within its noise.

import { sampleSd } from "./randomNull";

export interface BenchmarkNoise {
  signal: number;
  noise: number;
  /** null when noise is 0 (every cell exact, no random spread). */
  snr: number | null;
}

/** `cells`: each ability's top AIS and its bootstrap sd on the benchmark; `draws`: the random draws' AIS. Null with fewer than two defined cells. */
export function benchmarkNoise(
  cells: readonly { ais: number | null; sd: number | null }[],
  draws: readonly (number | null)[],
): BenchmarkNoise | null {
  const defined = cells.filter((c): c is { ais: number; sd: number | null } => c.ais !== null);
  const signal = sampleSd(defined.map((c) => c.ais));
  if (signal === null) return null;
  const bootstrapVariance = defined.reduce((s, c) => s + (c.sd ?? 0) ** 2, 0) / defined.length;
  const drawSd = sampleSd(draws.filter((d): d is number => d !== null)) ?? 0;
  const noise = Math.sqrt(bootstrapVariance + drawSd ** 2);
  return { signal, noise, snr: noise === 0 ? null : signal / noise };
}
