// Decides when producers stop: at the end of the run's time, after a number of records, or when told.

export class LoadControl {
  private claimed = 0;
  private halted = false;
  constructor(
    private readonly endAtMs: number | null,
    private readonly recordLimit: number | null,
    private readonly now: () => number,
  ) {}

  get stopped(): boolean {
    return this.halted || (this.endAtMs !== null && this.now() >= this.endAtMs);
  }

  /** Claims up to `wanted` records to send; 0 means stop. */
  claim(wanted: number): number {
    if (this.stopped) return 0;
    if (this.recordLimit === null) return wanted;
    const granted = Math.max(0, Math.min(wanted, this.recordLimit - this.claimed));
    this.claimed += granted;
    if (this.claimed >= this.recordLimit) this.halted = true;
    return granted;
  }

  stop(): void {
    this.halted = true;
  }
}
