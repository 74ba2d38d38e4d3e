// Python's `random.Random(seed).sample`, reproduced exactly: lm-eval draws few-shot examples with
// it (seed 1234), and the same examples are what make a few-shot score comparable with lm-eval's.

/** MT19937, the generator behind Python's `random` module. */
class MersenneTwister {
  private readonly state = new Uint32Array(624);
  private index = 624;

  constructor(key: readonly number[]) {
    this.initByArray(key);
  }

  private initGenrand(seed: number): void {
    const mt = this.state;
    mt[0] = seed >>> 0;
    for (let i = 1; i < 624; i++) {
      const prev = mt[i - 1]! ^ (mt[i - 1]! >>> 30);
      mt[i] = (Math.imul(1812433253, prev) + i) >>> 0;
    }
  }

  private initByArray(key: readonly number[]): void {
    const mt = this.state;
    this.initGenrand(19650218);
    let i = 1;
    let j = 0;
    for (let k = Math.max(624, key.length); k > 0; k--) {
      const prev = mt[i - 1]! ^ (mt[i - 1]! >>> 30);
      mt[i] = ((mt[i]! ^ Math.imul(prev, 1664525)) + key[j]! + j) >>> 0;
      i++;
      j++;
      if (i >= 624) {
        mt[0] = mt[623]!;
        i = 1;
      }
      if (j >= key.length) j = 0;
    }
    for (let k = 623; k > 0; k--) {
      const prev = mt[i - 1]! ^ (mt[i - 1]! >>> 30);
      mt[i] = ((mt[i]! ^ Math.imul(prev, 1566083941)) - i) >>> 0;
      i++;
      if (i >= 624) {
        mt[0] = mt[623]!;
        i = 1;
      }
    }
    mt[0] = 0x80000000;
  }

  private twist(): void {
    const mt = this.state;
    for (let i = 0; i < 624; i++) {
      const y = (mt[i]! & 0x80000000) | (mt[(i + 1) % 624]! & 0x7fffffff);
      mt[i] = mt[(i + 397) % 624]! ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0);
    }
    this.index = 0;
  }

  uint32(): number {
    if (this.index >= 624) this.twist();
    let y = this.state[this.index++]!;
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }
}

export class PythonRandom {
  private readonly mt: MersenneTwister;

  /** `random.Random(seed)` for a non-negative integer seed below 2^53. */
  constructor(seed: number) {
    const key: number[] = [];
    let rest = Math.abs(Math.trunc(seed));
    do {
      key.push(rest % 2 ** 32);
      rest = Math.floor(rest / 2 ** 32);
    } while (rest > 0);
    this.mt = new MersenneTwister(key);
  }

  /** `getrandbits(k)` for 0 < k <= 32. */
  private bits(k: number): number {
    return this.mt.uint32() >>> (32 - k);
  }

  /** `_randbelow(n)`: rejection sampling on n.bit_length() bits. */
  randbelow(n: number): number {
    const k = Math.floor(Math.log2(n)) + 1;
    let r = this.bits(k);
    while (r >= n) r = this.bits(k);
    return r;
  }

  /** `random()`: 53-bit float in [0, 1). */
  random(): number {
    const a = this.mt.uint32() >>> 5;
    const b = this.mt.uint32() >>> 6;
    return (a * 67108864 + b) / 9007199254740992;
  }

  /** `sample(population, k)`, with CPython's two strategies chosen the way CPython chooses them. */
  sample<T>(population: readonly T[], k: number): T[] {
    const n = population.length;
    if (k < 0 || k > n) throw new RangeError("sample larger than population or is negative");
    const result: T[] = new Array<T>(k);
    let setsize = 21;
    if (k > 5) setsize += 4 ** Math.ceil(Math.log(3 * k) / Math.log(4));
    if (n <= setsize) {
      const pool = [...population];
      for (let i = 0; i < k; i++) {
        const j = this.randbelow(n - i);
        result[i] = pool[j]!;
        pool[j] = pool[n - i - 1]!;
      }
    } else {
      const selected = new Set<number>();
      for (let i = 0; i < k; i++) {
        let j = this.randbelow(n);
        while (selected.has(j)) j = this.randbelow(n);
        selected.add(j);
        result[i] = population[j]!;
      }
    }
    return result;
  }
}
