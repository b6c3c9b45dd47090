// The live line on stderr during a run: a bar on a terminal, a line every few seconds otherwise.
import type { Progress } from '@kbench/engine';
import type { Sample } from '@kbench/schema';
import { fmtMs, fmtNumber } from './format.js';

const WIDTH = 24;

export class ProgressLine {
  private last: Sample | null = null;
  private lastPrinted = 0;
  private readonly tty: boolean;
  constructor(private readonly out: NodeJS.WriteStream = process.stderr) {
    this.tty = Boolean(out.isTTY);
  }

  sample(sample: Sample): void {
    this.last = sample;
  }

  update(p: Progress): void {
    const fraction =
      p.totalMs !== null
        ? Math.min(1, p.elapsedMs / p.totalMs)
        : p.targetRecords
          ? Math.min(1, p.producedRecords / p.targetRecords)
          : 0;
    const filled = Math.round(fraction * WIDTH);
    const bar = `[${'#'.repeat(filled)}${'-'.repeat(WIDTH - filled)}] ${String(Math.round(fraction * 100)).padStart(3)}%`;
    const s = this.last;
    const rate = s ? (s.producedRecords / Math.max(1, s.intervalMs)) * 1000 : 0;
    const figures = s
      ? `  ${fmtNumber(rate)} rec/s  publish p99 ${fmtMs(s.publishP99Ms)}  backlog ${fmtNumber(s.backlog)}`
      : '';
    const line = `${p.phase.padEnd(9)} ${bar} ${(p.elapsedMs / 1000).toFixed(0)}s${figures}`;
    if (this.tty) {
      this.out.write(`\r\x1b[2K${line}`);
    } else if (p.elapsedMs - this.lastPrinted >= 5000 || p.phase === 'done' || p.phase === 'setup') {
      this.lastPrinted = p.elapsedMs;
      this.out.write(`${line}\n`);
    }
  }

  /** A line of its own above the bar. */
  note(text: string): void {
    this.out.write(this.tty ? `\r\x1b[2K${text}\n` : `${text}\n`);
  }

  end(): void {
    if (this.tty) this.out.write('\n');
  }
}
