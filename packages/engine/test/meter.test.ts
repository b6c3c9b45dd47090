import { describe, expect, it } from 'vitest';
import {
  type ErrorCount,
  IntervalAccumulator,
  MAX_ERROR_MESSAGES,
  OTHER_ERRORS,
  tallyError,
} from '../src/interval.js';
import { Meter } from '../src/meter.js';

function interval(records: number, bytes: number, latencyMicros: number | null) {
  const acc = new IntervalAccumulator();
  acc.add(records, bytes, latencyMicros);
  return acc.take();
}

describe('Meter', () => {
  it('leaves warm-up samples out of the summary', () => {
    const meter = new Meter(1);
    meter.addProduced(interval(1000, 100_000, 5000));
    const warm = meter.cut(1, 1000, true);
    meter.addProduced(interval(500, 50_000, 2000));
    meter.addConsumed(interval(1, 100, 3000));
    const measured = meter.cut(2, 1000, false);
    expect(warm.warmup).toBe(true);
    expect(warm.producedRecords).toBe(1000);
    expect(measured.producedRecords).toBe(500);
    const summary = meter.summary();
    expect(summary.measuredSeconds).toBe(1);
    expect(summary.produced.records).toBe(500);
    expect(summary.produced.recordsPerSec).toBe(500);
    expect(summary.publishLatencyMs?.p50).toBeCloseTo(2, 2);
    expect(summary.publishLatencyMs?.count).toBe(500);
    expect(summary.consumed.records).toBe(1);
  });

  it('tracks the backlog per consumer group', () => {
    const meter = new Meter(2);
    meter.addProduced(interval(10, 1000, 1));
    meter.addConsumed(interval(10, 1000, null));
    expect(meter.backlog()).toBe(5);
  });

  it('has null latencies for an interval without acks', () => {
    const meter = new Meter(0);
    const sample = meter.cut(1, 1000, false);
    expect(sample.publishP99Ms).toBeNull();
    expect(sample.backlog).toBe(0);
  });

  it('counts errors from producers and consumers', () => {
    const meter = new Meter(1);
    const acc = new IntervalAccumulator();
    acc.error(7, 'The producer attempted to use a producer id which is not currently assigned');
    meter.addProduced(acc.take());
    expect(meter.cut(1, 1000, false).errors).toBe(7);
    expect(meter.summary().produced.errors).toBe(7);
  });

  it('keeps what the measured errors said, by role, most frequent first, and not the warm-up ones', () => {
    const meter = new Meter(1);
    const warm = new IntervalAccumulator();
    warm.error(5, 'warm-up error');
    meter.addProduced(warm.take());
    meter.cut(1, 1000, true);
    const producer = new IntervalAccumulator();
    producer.error(2, 'Connection error: connect ECONNREFUSED');
    producer.error(3, 'This server is not the leader for that topic-partition');
    meter.addProduced(producer.take());
    meter.addConsumed({
      ...new IntervalAccumulator().take(),
      errors: 1,
      errorMessages: [{ message: 'fetch: Kafka error code 6', count: 1 }],
    });
    meter.cut(2, 1000, false);
    const summary = meter.summary();
    expect(summary.produced.errors).toBe(6);
    expect(summary.clientErrors).toEqual([
      { role: 'producer', message: 'This server is not the leader for that topic-partition', count: 3 },
      { role: 'producer', message: 'Connection error: connect ECONNREFUSED', count: 2 },
      { role: 'consumer', message: 'fetch: Kafka error code 6', count: 1 },
    ]);
  });

  it('leaves clientErrors out of a summary without errors', () => {
    const meter = new Meter(0);
    meter.addProduced(interval(10, 1000, 100));
    meter.cut(1, 1000, false);
    expect(meter.summary().clientErrors).toBeUndefined();
  });

  it('bounds the messages it keeps, counting the rest together', () => {
    const tally: ErrorCount[] = [];
    for (let i = 0; i < 1000; i++) tallyError(tally, `error ${i}`, 1);
    tallyError(tally, 'x'.repeat(100_000), 1);
    expect(tally).toHaveLength(MAX_ERROR_MESSAGES + 1);
    expect(tally[0]).toEqual({ message: OTHER_ERRORS, count: 1001 - MAX_ERROR_MESSAGES });
    expect(tally.reduce((n, e) => n + e.count, 0)).toBe(1001);
  });
});
