// Decides when producers stop: at the end of the run's time, after a number of records, or when told.

export class LoadControl {
  private claimed = 0;
  private halted = false;
  /** Every record of the record limit has been claimed (claimed records are still sent). */
  private exhausted = false;
  constructor(
    private readonly endAtMs: number | null,
    private readonly recordLimit: number | null,
    private readonly now: () => number,
  ) {}

  /** No more records are to be claimed. */
  get stopped(): boolean {
    return this.exhausted || this.over;
  }

  /**
   * The run was told to stop or its time is up: a record claimed but not yet due is not sent. (A
   * record claimed under a record limit is sent: the limit counts it.)
   */
  get over(): boolean {
    return this.halted || (this.endAtMs !== null && this.now() >= this.endAtMs);
  }

  /** Claims up to `wanted` records to send; 0 means stop. */
  claim(wanted: number): number {
    if (this.stopped) return 0;
    if (this.recordLimit === null) return wanted;
    const granted = Math.max(0, Math.min(wanted, this.recordLimit - this.claimed));
    this.claimed += granted;
    if (this.claimed >= this.recordLimit) this.exhausted = true;
    return granted;
  }

  stop(): void {
    this.halted = true;
  }
}

/**
 * When each send of an open-loop producer is due: a send of `count` records is due when its first
 * record is, at start + (records scheduled before it) / rate, so a short last send is due after
 * the full ones before it (counting sends instead put it at a time that had long passed).
 */
export class RateSchedule {
  private scheduled = 0;
  constructor(
    private readonly startMicros: number,
    private readonly ratePerSec: number,
  ) {}

  /** The intended send time, in µs, of the next `count` records. */
  next(count: number): number {
    const due = this.startMicros + (this.scheduled * 1e6) / this.ratePerSec;
    this.scheduled += count;
    return due;
  }
}
