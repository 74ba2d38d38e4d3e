// The whole run's progress and the time it has left, from the runner's progress events: one bar
// for the run, not one per phase. The work is what the jobs hold: per model, the benchmark items of
// the baseline, each ability's diagnostic sequences (the importance pass) and the variants, each of
// which scores every item again. Each kind of work goes at the pace measured for it so far; the
// variants, until one is timed, at the baseline's pace per item. Models after the current one are
// assumed to go at the current one's pace.
//
// The events come as `profile` sends them (native-runner/PROTOCOL.md): the baseline's `baseline`
// progress, `variants` 0/T, then per ability its `importance` and `rank`, and per variant the
// `score` progress of its items before its `variants` step. A resumed run reads back what an earlier
// run wrote, with no progress of its own: the baseline is settled by `variants` 0/T, an ability's
// importance by its first variant, and a variant that arrives with no `score` progress was read
// back. Work read back counts as done at its own pace, never at the pace of work computed: the
// first minutes of a resume, all reading back, promise nothing until computed work is timed.

/** What a run will do, per model in run order. */
export interface RunPlan {
  models: {
    name: string;
    items: number;
    abilities: { name: string; sequences: number }[];
    /** Every variant: the abilities' (in their order, as many each), then the random control's, then the pairs'. */
    variants: number;
    /** Of `variants`, the random control's (after the abilities'). */
    randomVariants?: number;
    /** Of `variants`, the pairs' (ablation.pairs, last). */
    pairVariants?: number;
  }[];
}

export interface RunOverall {
  /** Share of the run done, by the estimated time: elapsed / (elapsed + remaining); 0 until a pace is measured. */
  fraction: number;
  elapsedSeconds: number;
  /** Undefined until a pace is measured. */
  remainingSeconds?: number;
}

/** One runner progress event, as run/runProfile.ts passes them on. */
export interface ProgressEvent {
  model: string;
  phase: string;
  done: number;
  total: number;
  ability?: string;
}

type Kind = "score" | "importance" | "variants";

export class RunEstimate {
  private readonly started: number;
  private last: number;
  private model = 0;
  /** Per kind: work computed (items, sequences, variants) and the seconds it took. */
  private readonly pace = new Map<Kind, { work: number; seconds: number }>();
  /** Work read back from an earlier run's files, and the seconds that took: its own pace. */
  private readBack = { work: 0, seconds: 0 };
  /** Of the current model: share done of the baseline's items, of each ability's pass, and variants done. */
  private scoreShare = 0;
  private readonly abilityShare = new Map<string, number>();
  private variantsDone = 0;
  private variantsTotal: number | undefined;
  /** `variants` 0/T seen: the baseline is behind, and `score` progress is a variant's. */
  private variantsStarted = false;
  /** Of the variant being scored: the share its `score` progress counted so far, and whether there was any. */
  private variantShare = 0;
  private variantScored = false;

  constructor(
    private readonly plan: RunPlan,
    now = Date.now(),
  ) {
    this.started = now;
    this.last = now;
  }

  /** The run's progress after this event, which arrived at `now` (ms). */
  update(event: ProgressEvent, now = Date.now()): RunOverall {
    const index = this.plan.models.findIndex((m) => m.name === event.model);
    if (index > this.model) this.startModel(index);
    this.record(event, (now - this.last) / 1000);
    this.last = now;
    return this.overall(now);
  }

  /** Work read back from disk so far, and its pace (seconds per unit; undefined before any). */
  readBackPace(): { work: number; secondsPer?: number } {
    const { work, seconds } = this.readBack;
    return work > 0 ? { work, secondsPer: seconds / work } : { work };
  }

  private startModel(index: number): void {
    this.model = index;
    this.scoreShare = 0;
    this.abilityShare.clear();
    this.variantsDone = 0;
    this.variantsTotal = undefined;
    this.variantsStarted = false;
    this.variantShare = 0;
    this.variantScored = false;
  }

  /** The work this event says was done since the last one, and the time it took, to its kind's pace. */
  private record(event: ProgressEvent, seconds: number): void {
    const current = this.plan.models[this.model];
    if (!current) return;
    const share = event.total > 0 ? Math.min(1, event.done / event.total) : 0;
    if (event.phase === "baseline" || (event.phase === "score" && !this.variantsStarted)) {
      const work = Math.max(0, share - this.scoreShare) * current.items;
      this.scoreShare = Math.max(this.scoreShare, share);
      this.timed("score", work, seconds);
    } else if (event.phase === "score") {
      // a variant's items: its share of one variant
      const work = Math.max(0, share - this.variantShare);
      this.variantShare = Math.max(this.variantShare, share);
      this.variantScored = true;
      this.timed("variants", work, seconds);
    } else if (event.phase === "importance") {
      const ability = event.ability ?? "";
      const sequences = current.abilities.find((a) => a.name === ability)?.sequences ?? 0;
      const work = Math.max(0, share - (this.abilityShare.get(ability) ?? 0)) * sequences;
      this.abilityShare.set(ability, Math.max(this.abilityShare.get(ability) ?? 0, share));
      this.timed("importance", work, seconds);
    } else if (event.phase === "rank" && event.ability !== undefined) {
      this.abilityShare.set(event.ability, 1);
    } else if (event.phase === "variants") {
      this.variants(event, current, seconds);
    }
  }

  private variants(event: ProgressEvent, current: RunPlan["models"][number], seconds: number): void {
    this.variantsTotal = event.total;
    // the baseline is behind, scored now or read back
    this.variantsStarted = true;
    this.scoreShare = 1;
    const steps = Math.max(0, event.done - this.variantsDone);
    if (steps > 0) {
      if (this.variantScored) this.timed("variants", Math.max(0, steps - this.variantShare), seconds);
      else this.readBack = { work: this.readBack.work + steps, seconds: this.readBack.seconds + seconds };
      this.variantsDone = event.done;
      // an ability's variants follow its importance: abilities with a variant done are behind
      const afterAbilities = (current.randomVariants ?? 0) + (current.pairVariants ?? 0);
      const each = current.abilities.length > 0 ? (current.variants - afterAbilities) / current.abilities.length : 0;
      if (each > 0) {
        const behind = Math.min(current.abilities.length, Math.ceil(this.variantsDone / each));
        for (const a of current.abilities.slice(0, behind)) this.abilityShare.set(a.name, 1);
      }
    }
    this.variantShare = 0;
    this.variantScored = false;
  }

  private timed(kind: Kind, work: number, seconds: number): void {
    // a phase's first event (done 0) marks its start: the time before it was another phase's
    if (work <= 0) return;
    const pace = this.pace.get(kind) ?? { work: 0, seconds: 0 };
    this.pace.set(kind, { work: pace.work + work, seconds: pace.seconds + seconds });
  }

  private overall(now: number): RunOverall {
    const elapsedSeconds = (now - this.started) / 1000;
    const remaining = this.remainingSeconds();
    if (remaining === undefined) return { fraction: 0, elapsedSeconds };
    const fraction = elapsedSeconds + remaining > 0 ? elapsedSeconds / (elapsedSeconds + remaining) : 1;
    return { fraction, elapsedSeconds, remainingSeconds: remaining };
  }

  /** Seconds per unit of each kind; the variants' from the baseline's per item until one is timed. */
  private secondsPer(kind: Kind, items: number): number | undefined {
    const pace = this.pace.get(kind);
    if (pace && pace.work > 0) return pace.seconds / pace.work;
    if (kind === "variants") {
      const score = this.pace.get("score");
      return score && score.work > 0 ? (score.seconds / score.work) * items : undefined;
    }
    return undefined;
  }

  private remainingSeconds(): number | undefined {
    let total = 0;
    for (const [i, m] of this.plan.models.entries()) {
      if (i < this.model) continue;
      const current = i === this.model;
      const work: Record<Kind, number> = {
        score: m.items * (current ? 1 - this.scoreShare : 1),
        importance: m.abilities.reduce((s, a) => s + a.sequences * (1 - (current ? (this.abilityShare.get(a.name) ?? 0) : 0)), 0),
        variants: current ? Math.max(0, (this.variantsTotal ?? m.variants) - this.variantsDone - this.variantShare) : m.variants,
      };
      for (const kind of ["score", "importance", "variants"] as const) {
        if (work[kind] <= 0) continue;
        const per = this.secondsPer(kind, m.items);
        if (per === undefined) return undefined;
        total += work[kind] * per;
      }
    }
    return total;
  }
}

/** "3 min 12 s", "1 h 04 min", "45 s": a duration for a progress line. */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, "0")} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, "0")} min`;
}

/** "elapsed 3 min 12 s, about 8 min 40 s left" (or "estimating" before a pace is measured). */
export function describeOverall(o: RunOverall): string {
  const left = o.remainingSeconds === undefined ? "estimating the time left" : `about ${formatDuration(o.remainingSeconds)} left`;
  return `elapsed ${formatDuration(o.elapsedSeconds)}, ${left}`;
}
