// Progress for humans: a redrawn bar on a terminal, a plain line per step change in logs and CI.
import type { RunProgress } from "../core/run";

export interface ProgressView {
  update(progress: RunProgress): void;
  done(): void;
}

export function progressView(stream: NodeJS.WriteStream = process.stderr): ProgressView {
  return stream.isTTY ? new TerminalBar(stream) : new PlainLines(stream);
}

class TerminalBar implements ProgressView {
  private drawn = false;
  constructor(private readonly stream: NodeJS.WriteStream) {}
  update(p: RunProgress): void {
    const width = 30;
    const filled = p.total > 0 ? Math.round((p.done / p.total) * width) : 0;
    const bar = "#".repeat(filled) + "-".repeat(width - filled);
    this.stream.write(`\r${p.model} ${p.phase.padEnd(6)} [${bar}] ${p.done}/${p.total}\x1b[K`);
    this.drawn = true;
  }
  done(): void {
    if (this.drawn) this.stream.write("\n");
    this.drawn = false;
  }
}

class PlainLines implements ProgressView {
  private lastKey = "";
  private lastDecile = -1;
  constructor(private readonly stream: NodeJS.WriteStream) {}
  update(p: RunProgress): void {
    const key = `${p.model}/${p.phase}`;
    const decile = p.total > 0 ? Math.floor((p.done / p.total) * 10) : 0;
    if (key === this.lastKey && decile === this.lastDecile) return;
    [this.lastKey, this.lastDecile] = [key, decile];
    this.stream.write(`${p.model} ${p.phase} ${p.done}/${p.total}\n`);
  }
  done(): void {}
}
