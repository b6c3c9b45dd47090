// When the run cuts its samples: every sampleIntervalMs, and finer (faultSampleIntervalMs, 100 ms by
// default) while a fault is in progress, so a 1 s stall shows as a 1 s run of empty samples rather than
// a dip in two averaged seconds. Times are milliseconds since load began.
import { parseDurationMs, type Scenario } from '@kbench/schema';

/** How long after a fault's end (its `at` plus its `for`, or when it was carried out) samples stay fine. */
export const FAULT_MARGIN_MS = 5000;
/** The sample interval while a fault is in progress, unless the scenario sets faultSampleIntervalMs. */
export const FAULT_SAMPLE_MS = 100;
const SAMPLE_MS = 1000;

/** A span of fine sampling, [from, to) in ms since load began. */
export interface FineWindow {
  from: number;
  to: number;
}

/** Each fault of a timeline as a fine window: from its `at` to FAULT_MARGIN_MS after its `for` ends. */
export function faultWindows(faults: Scenario['faults'], marginMs = FAULT_MARGIN_MS): FineWindow[] {
  return faults.map((f) => {
    const at = parseDurationMs(f.at) ?? 0;
    const lasting = f.for === undefined ? 0 : (parseDurationMs(f.for) ?? 0);
    return { from: at, to: at + lasting + marginMs };
  });
}

export class SampleSchedule {
  private readonly windows: FineWindow[];

  /**
   * @param baseMs the scenario's interval (sampleIntervalMs)
   * @param fineMs the interval inside a window; at or above baseMs there is no fine sampling
   */
  constructor(
    readonly baseMs: number,
    readonly fineMs: number,
    windows: FineWindow[] = [],
  ) {
    this.windows = fineMs < baseMs ? windows.filter((w) => w.to > w.from) : [];
  }

  /** The schedule of a scenario: its interval, and fine sampling around each fault of its timeline. */
  static of(s: Scenario): SampleSchedule {
    return new SampleSchedule(
      s.sampleIntervalMs ?? SAMPLE_MS,
      s.faultSampleIntervalMs ?? FAULT_SAMPLE_MS,
      faultWindows(s.faults),
    );
  }

  /** The shortest interval this schedule may cut. */
  get finestMs(): number {
    return this.windows.length > 0 ? this.fineMs : this.baseMs;
  }

  /** Samples fine from `from` to `to` too (a fault that was carried out later or took longer than planned). */
  extend(from: number, to: number): void {
    if (this.fineMs < this.baseMs && to > from) this.windows.push({ from, to });
  }

  /**
   * The cut after the one at `prev`: `fineMs` later inside a window; else the next multiple of baseMs
   * at least fineMs away (so leaving a window rejoins the scenario's grid), or the start of a window
   * that comes first.
   */
  next(prev: number): number {
    if (this.windows.some((w) => w.from <= prev && prev < w.to)) return prev + this.fineMs;
    const step = Math.min(this.fineMs, this.baseMs);
    let due = Math.ceil((prev + step) / this.baseMs) * this.baseMs;
    for (const w of this.windows) if (w.from > prev && w.from < due) due = Math.max(w.from, prev + step);
    return due;
  }
}
