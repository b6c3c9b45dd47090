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
  /** What the errors said: each distinct message with its count (bounded, see tallyError). */
  errorMessages?: ErrorCount[];
}

export interface ErrorCount {
  message: string;
  count: number;
}

/** The most distinct error messages a tally keeps; the rest are counted under OTHER_ERRORS. */
export const MAX_ERROR_MESSAGES = 16;
export const OTHER_ERRORS = '(other error messages)';
const MAX_ERROR_MESSAGE_CHARS = 300;

/**
 * Adds `count` errors saying `message` to a tally kept most frequent first, with at most
 * MAX_ERROR_MESSAGES distinct messages (the Rust engine's stats.rs keeps the same bound), so a
 * stream of unique messages cannot grow it.
 */
export function tallyError(tally: ErrorCount[], message: string, count: number): void {
  if (count <= 0) return;
  const text = message.slice(0, MAX_ERROR_MESSAGE_CHARS);
  let entry = tally.find((e) => e.message === text);
  if (!entry) {
    if (tally.length >= MAX_ERROR_MESSAGES && text !== OTHER_ERRORS) {
      tallyError(tally, OTHER_ERRORS, count);
      return;
    }
    entry = { message: text, count: 0 };
    tally.push(entry);
  }
  entry.count += count;
  tally.sort((a, b) => b.count - a.count || a.message.localeCompare(b.message));
}

/** Counts kept where the work happens, handed over and reset on each take(). */
export class IntervalAccumulator {
  private records = 0;
  private valueBytes = 0;
  private errors = 0;
  private errorMessages: ErrorCount[] = [];
  private latency = new LatencyHistogram();

  add(records: number, valueBytes: number, latencyMicros: number | null): void {
    this.records += records;
    this.valueBytes += valueBytes;
    if (latencyMicros !== null) this.latency.record(latencyMicros, records);
  }

  /** Records whose send failed, and what the failure said. */
  error(records: number, message: string): void {
    this.errors += records;
    tallyError(this.errorMessages, message, records);
  }

  take(): ClientInterval {
    const out = {
      records: this.records,
      valueBytes: this.valueBytes,
      errors: this.errors,
      errorMessages: this.errorMessages,
      latency: this.latency.toBuckets(),
      busy: null,
    };
    this.errorMessages = [];
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
