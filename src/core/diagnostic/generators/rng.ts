// The random draws of the item generators, on the project's one seeded generator (random.ts), so
// `bprof generate --seed S` gives the same items on every platform and Node version.
import { randomInt, seededRandom } from "../../base/random";

export class Rng {
  private readonly next: () => number;

  constructor(seed: number) {
    this.next = seededRandom(seed);
  }

  /** An integer in [0, n). */
  below(n: number): number {
    return randomInt(this.next, n);
  }

  /** An integer in [min, max], both included. */
  int(min: number, max: number): number {
    return min + this.below(max - min + 1);
  }

  pick<T>(values: readonly T[]): T {
    if (values.length === 0) throw new RangeError("pick from an empty list");
    return values[this.below(values.length)]!;
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  /** A shuffled copy (Fisher-Yates). */
  shuffled<T>(values: readonly T[]): T[] {
    const out = [...values];
    for (let i = out.length - 1; i > 0; i--) {
      const j = this.below(i + 1);
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  }

  /** `count` distinct elements (by position), in random order. */
  sample<T>(values: readonly T[], count: number): T[] {
    if (count > values.length) throw new RangeError(`cannot draw ${count} of ${values.length} values`);
    return this.shuffled(values).slice(0, count);
  }

  /** `count` distinct values of `values` other than those in `not` (compared as given). */
  sampleExcept<T>(values: readonly T[], count: number, not: readonly T[]): T[] {
    return this.sample(
      values.filter((v) => !not.includes(v)),
      count,
    );
  }
}

/** 32-bit FNV-1a of a string: one independent stream per generator for the same user seed. */
export function streamSeed(seed: number, name: string): number {
  let h = 0x811c9dc5 ^ (seed >>> 0);
  h = Math.imul(h, 0x01000193);
  h ^= Math.floor(seed / 4294967296) >>> 0;
  for (let i = 0; i < name.length; i++) {
    h ^= name.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
