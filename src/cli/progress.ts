// Progress for humans: a redrawn bar on a terminal, a plain line per step change in logs and CI.
// The bar is the whole run's (its share by the estimated time, core/plan/estimate.ts), with the phase as
// its label, the time elapsed and the time left; logs get a line per tenth of the run as well.
import { describeOverall, formatDuration, type RunOverall } from "../core/plan/estimate";
import { finishedVariantLabel, progressStep, type RunProgress, type VariantDone } from "../core/plan/progressText";
import type { BuildProgress } from "../core/runner/build";
import { terminalText } from "../core/base/terminalText";
import { writeControls } from "./terminal";

export interface ProgressView {
  update(progress: RunProgress): void;
  /** A variant's scores are on disk. */
  variant(variant: VariantDone): void;
  /** The runner's build, before a run can start. */
  build(progress: BuildProgress): void;
  /** Something else is about to be written to the stream: end the bar's line first. */
  interrupt(): void;
  done(): void;
}

export function progressView(stream: NodeJS.WriteStream = process.stderr): ProgressView {
  return stream.isTTY ? new TerminalBar(stream) : new PlainLines(stream);
}

class TerminalBar implements ProgressView {
  private drawn = false;
  private shown = 0;
  constructor(private readonly stream: NodeJS.WriteStream) {}
  update(p: RunProgress): void {
    const width = 24;
    // the run's share only grows on screen, though its estimate may move back a little
    const share = p.overall ? (this.shown = Math.max(this.shown, p.overall.fraction)) : p.total > 0 ? p.done / p.total : 0;
    const filled = Math.round(share * width);
    const bar = "#".repeat(filled) + "-".repeat(width - filled);
    const time = p.overall ? `${Math.round(share * 100)}% ${timeLeft(p.overall)} · ` : "";
    const line = `[${bar}] ${time}${p.model} ${progressStep(p)}${count(p)}`;
    // one line that fits: the terminal would wrap a longer one and \r redraw only its last part
    const columns = this.stream.columns ?? 80;
    const shown = terminalText(line);
    writeControls(this.stream, `\r${shown.length < columns ? shown : shown.slice(0, columns - 1)}\x1b[K`);
    this.drawn = true;
  }
  variant(): void {
    // The bar of the `variants` phase already counts them.
  }
  build(p: BuildProgress): void {
    const width = 30;
    const filled = p.total > 0 ? Math.round((p.done / p.total) * width) : 0;
    const bar = "#".repeat(filled) + "-".repeat(width - filled);
    writeControls(this.stream, `\rbprof-runner ${terminalText(p.step.padEnd(9))} [${bar}] ${buildCount(p)}\x1b[K`);
    this.drawn = true;
  }
  interrupt(): void {
    this.done();
  }
  done(): void {
    if (this.drawn) this.stream.write("\n");
    this.drawn = false;
  }
}

class PlainLines implements ProgressView {
  private lastKey = "";
  private lastDecile = -1;
  private runTenth = 0;
  constructor(private readonly stream: NodeJS.WriteStream) {}
  update(p: RunProgress): void {
    const tenth = p.overall && p.overall.remainingSeconds !== undefined ? Math.floor(p.overall.fraction * 10) : 0;
    if (p.overall && tenth > this.runTenth) {
      this.runTenth = tenth;
      this.stream.write(`run ${tenth * 10}%: ${describeOverall(p.overall)}\n`);
    }
    const key = `${p.model}/${progressStep(p)}`;
    const decile = p.total > 0 ? Math.floor((p.done / p.total) * 10) : 0;
    if (key === this.lastKey && decile === this.lastDecile) return;
    [this.lastKey, this.lastDecile] = [key, decile];
    this.stream.write(`${p.model} ${progressStep(p)}${count(p)}\n`);
  }
  variant(v: VariantDone): void {
    this.stream.write(`${v.model} ${finishedVariantLabel(v)}\n`);
  }
  build(p: BuildProgress): void {
    const key = `build/${p.step}`;
    const quarter = p.total > 0 ? Math.floor((p.done / p.total) * 4) : 0;
    if (key === this.lastKey && quarter === this.lastDecile) return;
    [this.lastKey, this.lastDecile] = [key, quarter];
    this.stream.write(`bprof-runner ${p.step} ${buildCount(p)}\n`);
  }
  interrupt(): void {}
  done(): void {}
}

/** " 120/250", or nothing for a step without a count (the results read back). */
function count(p: RunProgress): string {
  return p.total > 0 ? ` ${p.done}/${p.total}` : "";
}

/** "about 2 min 10 s left (1 min 02 s elapsed)": the time first, for a line the terminal may cut. */
function timeLeft(o: RunOverall): string {
  const elapsed = `${formatDuration(o.elapsedSeconds)} elapsed`;
  return o.remainingSeconds === undefined ? `(${elapsed}, estimating)` : `about ${formatDuration(o.remainingSeconds)} left (${elapsed})`;
}

/** "12/26, 20 s in, about 40 s left": steps of the compile, the time it took, and the time left when measured. */
export function buildCount(p: BuildProgress): string {
  const steps = p.total > 0 ? `${p.done}/${p.total}, ` : "";
  const left = p.remainingSeconds === undefined ? "" : `, about ${formatDuration(p.remainingSeconds)} left`;
  return `${steps}${formatDuration(p.elapsedSeconds)} in${left}`;
}
