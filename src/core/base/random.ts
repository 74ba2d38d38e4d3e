// Seeded randomness for everything the analysis draws (bootstrap resamples, random controls):
// a result must be reproducible from its seed on any platform, which Math.random() is not.
// Only 32-bit integer arithmetic (Math.imul, >>>) is used, so every JS engine gives the same
// stream for the same seed.

/**
 * mulberry32: uniforms in [0, 1) with a period of 2^32, seeded by any number (its low 32 bits
 * are used, so seeds differing by a multiple of 2^32 give the same stream).
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * An integer in [0, n). Scaling a 32-bit uniform biases some values by at most n / 2^32
 * (under 3e-7 for n = 1000), far below bootstrap noise, and keeps one draw per integer.
 */
export function randomInt(rand: () => number, n: number): number {
  if (!Number.isInteger(n) || n <= 0 || n > 4294967296) throw new RangeError(`randomInt needs an integer n in [1, 2^32], got ${n}`);
  return Math.floor(rand() * n);
}
