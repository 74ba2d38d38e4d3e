// The whole run's progress and the time it has left, from the runner's progress events: one bar
// for the run, not one per phase. The work is what the jobs hold: per model, the benchmark items of
// the baseline, each ability's diagnostic sequences (the importance pass) and the variants, each of
// which scores every item again. Each kind of work goes at the pace measured for it so far; the
// variants, until one is timed, at the baseline's pace per item. Models after the current one are
// assumed to go at the current one's pace.

/** What a run will do, per model in run order. */
export interface RunPlan {
  models: { name: string; items: number; abilities: { name: string; sequences: number }[]; variants: number }[];
}

export interface RunOverall {
  /** Share of the run done, by the estimated time: elapsed / (elapsed + remaining); 0 until a pace is measured. */
  fraction: number;
  elapsedSeconds: number;
  /** Undefined until a pace is measured. */
  remainingSeconds?: number;
}

/** One runner progress event, as run.ts passes them on. */
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
  /** Per kind: work done (items, sequences, variants) and the seconds it took. */
  private readonly pace = new Map<Kind, { work: number; seconds: number }>();
  /** Of the current model: share done of the baseline's items, of each ability's pass, and variants done. */
  private scoreShare = 0;
  private readonly abilityShare = new Map<string, number>();
  private variantsDone = 0;
  private variantsTotal: number | undefined;

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
    const kind = kindOf(event.phase);
    if (kind) this.record(kind, event, (now - this.last) / 1000);
    this.last = now;
    return this.overall(now);
  }

  private startModel(index: number): void {
    this.model = index;
    this.scoreShare = 0;
    this.abilityShare.clear();
    this.variantsDone = 0;
    this.variantsTotal = undefined;
  }

  /** The work this event says was done since the last one, and the time it took, to its kind's pace. */
  private record(kind: Kind, event: ProgressEvent, seconds: number): void {
    const current = this.plan.models[this.model];
    if (!current) return;
    const share = event.total > 0 ? Math.min(1, event.done / event.total) : 0;
    let work = 0;
    if (kind === "score") {
      work = Math.max(0, share - this.scoreShare) * current.items;
      this.scoreShare = Math.max(this.scoreShare, share);
    } else if (kind === "importance") {
      const ability = event.ability ?? "";
      const sequences = current.abilities.find((a) => a.name === ability)?.sequences ?? 0;
      work = Math.max(0, share - (this.abilityShare.get(ability) ?? 0)) * sequences;
      this.abilityShare.set(ability, Math.max(this.abilityShare.get(ability) ?? 0, share));
    } else {
      work = Math.max(0, event.done - this.variantsDone);
      this.variantsDone = Math.max(this.variantsDone, event.done);
      this.variantsTotal = event.total;
    }
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
        variants: current ? (this.variantsTotal ?? m.variants) - this.variantsDone : m.variants,
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

function kindOf(phase: string): Kind | undefined {
  return phase === "score" || phase === "importance" || phase === "variants" ? phase : undefined;
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
