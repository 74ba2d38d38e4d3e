// The random sample a label-accuracy estimate is made on (`bprof review sample --n 200`): stratified
// by ability with each ability's share of the items (largest remainders), drawn with a seed, so
// that the pooled accuracy of the sample estimates the dataset's, and each ability's its own.
import { randomInt, seededRandom } from "../../base/random";
import { streamSeed } from "../generators/rng";
import type { DiagnosticItem } from "../item";
import type { ReviewSample } from "./reviewFile";

/** `n` item ids (all when n is at least the item count), each ability's share of them, in file order. */
export function sampleForReview(items: readonly DiagnosticItem[], n: number, seed: number): ReviewSample {
  if (!(Number.isInteger(n) && n > 0)) throw new RangeError(`the sample size must be a whole number above 0, got ${n}`);
  const byAbility = new Map<string, DiagnosticItem[]>();
  for (const item of items) {
    const group = byAbility.get(item.ability);
    if (group) group.push(item);
    else byAbility.set(item.ability, [item]);
  }
  const quotas = stratumQuotas(
    [...byAbility.values()].map((g) => g.length),
    n,
  );
  const chosen = new Set<string>();
  [...byAbility].forEach(([ability, group], s) => {
    for (const item of shuffled(group, streamSeed(seed, ability)).slice(0, quotas[s])) chosen.add(item.id);
  });
  return { seed, n: chosen.size, ids: items.filter((i) => chosen.has(i.id)).map((i) => i.id) };
}

/** Hamilton's apportionment of `wanted` (at most all) among strata of these sizes: each its floor share, the rest by largest remainder (ties to the earlier stratum). */
export function stratumQuotas(sizes: readonly number[], wanted: number): number[] {
  const all = sizes.reduce((a, b) => a + b, 0);
  if (all === 0) return sizes.map(() => 0);
  const total = Math.min(wanted, all);
  const exact = sizes.map((s) => (s * total) / all);
  const quotas = exact.map(Math.floor);
  let left = total - quotas.reduce((a, b) => a + b, 0);
  const order = exact.map((e, i) => ({ i, r: e - Math.floor(e) })).sort((x, y) => y.r - x.r || x.i - y.i);
  for (const { i } of order) {
    if (left === 0) break;
    if (quotas[i]! < sizes[i]!) {
      quotas[i]!++;
      left--;
    }
  }
  return quotas;
}

/** A seeded Fisher-Yates shuffle (a copy). */
function shuffled<T>(values: readonly T[], seed: number): T[] {
  const out = [...values];
  const rand = seededRandom(seed);
  for (let i = out.length - 1; i > 0; i--) {
    const j = randomInt(rand, i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
