// What one load client (a producer or a consumer, in any thread or in Rust) did since it was last asked.
import { type HistogramBuckets, LatencyHistogram } from './histogram.js';

export interface ClientInterval {
  records: number;
  valueBytes: number;
  errors: number;
  /** Publish latency for producers, end-to-end latency for consumers, in µs. */
  latency: HistogramBuckets;
  /** Busy fraction (0..1) of the busiest thread running these clients, when known. */
  busy: number | null;
  /** Bytes on the wire (record batches as sent, headers and compression included), when the driver knows. */
  wireBytes?: number;
  /** Records put back to be sent again (retried), when the driver counts them (the native producer). */
  retries?: number;
}

/** Counts kept where the work happens, handed over and reset on each take(). */
export class IntervalAccumulator {
  private records = 0;
  private valueBytes = 0;
  private errors = 0;
  private latency = new LatencyHistogram();

  add(records: number, valueBytes: number, latencyMicros: number | null): void {
    this.records += records;
    this.valueBytes += valueBytes;
    if (latencyMicros !== null) this.latency.record(latencyMicros, records);
  }

  error(records: number): void {
    this.errors += records;
  }

  take(): ClientInterval {
    const out = {
      records: this.records,
      valueBytes: this.valueBytes,
      errors: this.errors,
      latency: this.latency.toBuckets(),
      busy: null,
    };
    this.records = 0;
    this.valueBytes = 0;
    this.errors = 0;
    this.latency = new LatencyHistogram();
    return out;
  }
}

export function emptyInterval(): ClientInterval {
  return {
    records: 0,
    valueBytes: 0,
    errors: 0,
    latency: { buckets: [], counts: [], count: 0, sum: 0, max: 0 },
    busy: null,
  };
}
