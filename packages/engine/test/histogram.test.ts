import { describe, expect, it } from 'vitest';
import { LatencyHistogram, rankOf } from '../src/histogram.js';

describe('LatencyHistogram', () => {
  it('reports exact percentiles for small values', () => {
    const h = new LatencyHistogram();
    for (let v = 1; v <= 100; v++) h.record(v);
    expect(h.percentile(50)).toBe(50);
    expect(h.percentile(99)).toBe(99);
    expect(h.percentile(100)).toBe(100);
    expect(h.max()).toBe(100);
    expect(h.mean()).toBeCloseTo(50.5, 5);
  });

  it('takes rank 2997 for p99.9 of 3000 values, where a bare ceil of the double product took 2998', () => {
    // Values 1,1,1,2,2,2,...,1000,1000,1000: rank 2997 is 999, rank 2998 is 1000 (all exact below 1024).
    const h = new LatencyHistogram();
    for (let i = 0; i < 3000; i++) h.record(Math.floor(i / 3) + 1);
    expect((99.9 / 100) * 3000).not.toBe(2997);
    expect(rankOf((99.9 / 100) * 3000)).toBe(2997);
    expect(h.percentile(99.9)).toBe(999);
    expect(h.percentile(100)).toBe(1000);
    expect(rankOf(0.2)).toBe(1);
    expect(rankOf(2997.5)).toBe(2998);
  });

  it('keeps large values within 0.1% and never understates them', () => {
    const h = new LatencyHistogram();
    h.record(5_123_457);
    const p = h.percentile(50);
    expect(p).toBeGreaterThanOrEqual(5_123_457 * 0.999);
    expect(p).toBeLessThanOrEqual(5_123_457);
  });

  it('counts a batch ack once per record', () => {
    const h = new LatencyHistogram();
    h.record(1000, 99);
    h.record(900_000, 1);
    expect(h.count).toBe(100);
    expect(h.percentile(99)).toBe(1000);
    expect(h.percentile(99.9)).toBeGreaterThan(899_000);
  });

  it('averages the slowest tenth for worstMean', () => {
    const h = new LatencyHistogram();
    for (let v = 1; v <= 100; v++) h.record(v);
    expect(h.worstMean(0.1)).toBeCloseTo((91 + 100) / 2, 5);
  });

  it('merges histograms', () => {
    const a = new LatencyHistogram();
    const b = new LatencyHistogram();
    a.record(10);
    b.record(20_000);
    a.add(b);
    expect(a.count).toBe(2);
    expect(a.max()).toBe(20_000);
  });

  it('summarises in milliseconds', () => {
    const h = new LatencyHistogram();
    h.record(2500);
    const s = h.summaryMs();
    expect(s.p50).toBeCloseTo(2.5, 2);
    expect(s.count).toBe(1);
  });
});

describe('LatencyHistogram buckets', () => {
  it('survive a round trip through toBuckets and addBuckets', () => {
    const a = new LatencyHistogram();
    for (const v of [1, 50, 1023, 1024, 99_999, 5_123_457]) a.record(v, 3);
    const b = new LatencyHistogram();
    b.addBuckets(a.toBuckets());
    expect(b.count).toBe(a.count);
    expect(b.max()).toBe(a.max());
    expect(b.mean()).toBe(a.mean());
    for (const p of [10, 50, 90, 99, 100]) expect(b.percentile(p)).toBe(a.percentile(p));
  });
});
