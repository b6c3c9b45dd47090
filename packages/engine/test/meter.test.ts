import { describe, expect, it } from 'vitest';
import { IntervalAccumulator } from '../src/interval.js';
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
    acc.error(7);
    meter.addProduced(acc.take());
    expect(meter.cut(1, 1000, false).errors).toBe(7);
    expect(meter.summary().produced.errors).toBe(7);
  });
});
