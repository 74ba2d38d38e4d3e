// A profile job split into shards of whole abilities (docs/targets.md, "Shards"), balanced by the
// work they hold rather than by count: an ability with twice the diagnostic tokens, or twice the
// variants, weighs twice as much. Each shard job is the whole job with only its abilities and a
// `shard` key (PROTOCOL.md), so every file a shard writes has the name and the bytes the whole
// job would give it, and the merge only gathers files.
import { createHash } from "node:crypto";
import type { JobItem, ProfileJob } from "./job";

/** The `shard` key of a shard's job (PROTOCOL.md, "Shards"). */
export interface ShardKey {
  /** The whole job's fingerprint (jobFingerprint): a shard folder of another job is refused at the merge. */
  of: string;
  index: number;
  count: number;
  baseline: boolean;
  random: boolean;
}

export type ShardJob = ProfileJob & { shard: ShardKey };

/** One shard's share of the whole job. */
export interface ShardPlan {
  /** Ability ids, in the whole job's order. */
  abilities: string[];
  /** Whether this shard scores the baseline and runs the random control (one shard does both). */
  common: boolean;
  /** Estimated work, in forward-pass tokens (workOf). */
  work: number;
  /** Variants this shard scores. */
  variants: number;
}

/**
 * A backward pass costs about twice a forward pass, so an importance pass reads each diagnostic
 * token about three times over (PROTOCOL.md counts its FLOPs the same way).
 */
export const IMPORTANCE_PASSES = 3;

/** Tokens the runner reads to score one item once (job.h's packed_length, or the generation's row). */
export function itemTokens(item: JobItem): number {
  if ("generate" in item) return item.context.length + item.generate.max_tokens;
  return item.context.length + item.choices.reduce((n, c) => n + c.length - 1, 0);
}

/** The work of scoring every item once: the baseline's, and each variant's. */
export function scoringWork(job: ProfileJob): number {
  return job.items.reduce((n, item) => n + itemTokens(item), 0);
}

/** The job's candidate sets (`ablation.candidates`; absent: the MLP's alone), each with the rules that rank it. */
function candidateSetsOf(job: ProfileJob): { rules: number }[] {
  const { method, candidates } = job.ablation;
  const methods = Array.isArray(method) ? method.length : 1;
  if (!Array.isArray(candidates)) return [{ rules: methods }];
  // a set named with rules of its own ({set, method}) is ranked by those only
  return candidates.map((c) => ({ rules: typeof c === "string" ? methods : c.method.length }));
}

/** Variants per ability: every ranked selection (all but random) at every k, under every importance rule over every candidate set. */
export function variantsPerAbility(job: ProfileJob): number {
  const rules = candidateSetsOf(job).reduce((n, set) => n + set.rules, 0);
  return rules * job.ablation.selections.filter((s) => s !== "random").length * job.ablation.k.length;
}

/** The random control's variants, once per whole job: one per k, candidate set and draw (`ablation.random_draws`). */
export function randomVariants(job: ProfileJob): number {
  if (!job.ablation.selections.includes("random")) return 0;
  return job.ablation.k.length * candidateSetsOf(job).length * (job.ablation.random_draws ?? 1);
}

/** Per ability id, its work: its importance pass and its variants, in forward-pass tokens. */
export function abilityWork(job: ProfileJob): Map<string, number> {
  const perVariant = scoringWork(job);
  return new Map(
    job.abilities.map((a) => [
      a.id,
      IMPORTANCE_PASSES * a.sequences.reduce((n, s) => n + s.length, 0) + variantsPerAbility(job) * perVariant,
    ]),
  );
}

/** The work done once per whole job: the baseline and the random control's variants (every draw of it). */
export function commonWork(job: ProfileJob): number {
  return (1 + randomVariants(job)) * scoringWork(job);
}

/**
 * The job split into at most `count` shards by longest processing time first: the heaviest unit
 * of work (an ability, or the baseline with the random control) goes to the lightest shard, ties
 * to the earlier ability and the lower shard. Shards left empty are dropped, so there are never
 * more shards than units.
 */
export function splitJob(job: ProfileJob, count: number): ShardPlan[] {
  if (!Number.isInteger(count) || count < 1) throw new RangeError(`shard count ${count} is not a positive integer`);
  const work = abilityWork(job);
  const units = [
    ...job.abilities.map((a, order) => ({ ability: a.id as string | undefined, work: work.get(a.id)!, order })),
    { ability: undefined, work: commonWork(job), order: job.abilities.length },
  ].sort((a, b) => b.work - a.work || a.order - b.order);
  const bins = Array.from({ length: count }, () => ({ units: [] as typeof units, work: 0 }));
  for (const unit of units) {
    const lightest = bins.reduce((best, bin) => (bin.work < best.work ? bin : best));
    lightest.units.push(unit);
    lightest.work += unit.work;
  }
  const perAbility = variantsPerAbility(job);
  return bins
    .filter((bin) => bin.units.length > 0)
    .map((bin) => {
      const abilities = bin.units
        .filter((u) => u.ability !== undefined)
        .sort((a, b) => a.order - b.order)
        .map((u) => u.ability!);
      const common = bin.units.some((u) => u.ability === undefined);
      return {
        abilities,
        common,
        work: bin.work,
        variants: abilities.length * perAbility + (common ? randomVariants(job) : 0),
      };
    });
}

/** Identifies a whole job for its shards: SHA-256 of its job file's text, 16 hex digits. */
export function jobFingerprint(jobText: string): string {
  return createHash("sha256").update(jobText).digest("hex").slice(0, 16);
}

/** A shard's job: the whole job with the shard's abilities, on its device, and its `shard` key. */
export function shardJob(job: ProfileJob, plans: readonly ShardPlan[], index: number, of: string, device?: string): ShardJob {
  const plan = plans[index];
  if (!plan) throw new RangeError(`no shard ${index} of ${plans.length}`);
  const mine = new Set(plan.abilities);
  return {
    ...job,
    ...(device !== undefined ? { device } : {}),
    abilities: job.abilities.filter((a) => mine.has(a.id)),
    shard: { of, index, count: plans.length, baseline: plan.common, random: plan.common },
  };
}

/** "quantitative, spatial (41% of the work)": a shard in a line of validation. */
export function describeShard(plan: ShardPlan, total: number, names: ReadonlyMap<string, string>): string {
  const what = [...plan.abilities.map((id) => names.get(id) ?? id), ...(plan.common ? ["baseline + random control"] : [])];
  const share = total > 0 ? Math.round((100 * plan.work) / total) : 0;
  return `${what.join(", ")} (${share}% of the work)`;
}
