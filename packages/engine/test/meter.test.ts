import { describe, expect, it } from 'vitest';
import { Meter } from '../src/meter.js';

describe('Meter', () => {
  it('leaves warm-up samples out of the summary', () => {
    const meter = new Meter(1);
    meter.produced(1000, 100_000, 5000);
    const warm = meter.cut(1, 1000, true);
    meter.produced(500, 50_000, 2000);
    meter.consumed(100, 3000);
    const measured = meter.cut(2, 1000, false);
    expect(warm.warmup).toBe(true);
    expect(warm.producedRecords).toBe(1000);
    expect(measured.producedRecords).toBe(500);
    const summary = meter.summary();
    expect(summary.measuredSeconds).toBe(1);
    expect(summary.produced.records).toBe(500);
    expect(summary.produced.recordsPerSec).toBe(500);
    expect(summary.publishLatencyMs?.p50).toBeCloseTo(2, 2);
    expect(summary.consumed.records).toBe(1);
  });

  it('tracks the backlog per consumer group', () => {
    const meter = new Meter(2);
    meter.produced(10, 1000, 1);
    for (let i = 0; i < 10; i++) meter.consumed(100, null);
    expect(meter.backlog()).toBe(5);
  });

  it('has null latencies for an interval without acks', () => {
    const meter = new Meter(0);
    const sample = meter.cut(1, 1000, false);
    expect(sample.publishP99Ms).toBeNull();
    expect(sample.backlog).toBe(0);
  });
});
