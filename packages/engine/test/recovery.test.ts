// The recovery figures of faults, computed on sample series built here (the bundled-cluster runs in
// cluster-faults.test.ts and fault-sampling.test.ts check them on real faults).
import type { FaultEvent, Sample } from '@kbench/schema';
import { describe, expect, it } from 'vitest';
import { LatencyHistogram } from '../src/histogram.js';
import { faultRecoveries } from '../src/recovery.js';
import type { IntervalHistograms } from '../src/stored-latency.js';

/** Samples from [interval ms, acked records, errors?] in order; t is the running end in seconds. */
function series(spec: [number, number, number?][]): Sample[] {
  let ms = 0;
  return spec.map(([intervalMs, records, errors]) => {
    ms += intervalMs;
    return {
      t: ms / 1000,
      intervalMs,
      warmup: false,
      producedRecords: records,
      producedBytes: records * 100,
      consumedRecords: 0,
      consumedBytes: 0,
      errors: errors ?? 0,
      backlog: 0,
      publishP50Ms: null,
      publishP99Ms: null,
      publishMaxMs: null,
      e2eP50Ms: null,
      e2eP99Ms: null,
      e2eMaxMs: null,
    };
  });
}

/** `n` samples of `ms` each at `perSec` records/s. */
function steady(n: number, ms: number, perSec: number): [number, number][] {
  return Array.from({ length: n }, () => [ms, (perSec * ms) / 1000] as [number, number]);
}

function fault(t: number, action: FaultEvent['action'] = 'kill', error: string | null = null): FaultEvent {
  return { t, action, target: 1, node: 1, durationMs: null, error };
}

/** One publish histogram per sample, every record at `latencyMs` (ms). */
function latencies(samples: Sample[], latencyMs: (s: Sample) => number): IntervalHistograms[] {
  return samples.map((s) => {
    const h = new LatencyHistogram();
    if (s.producedRecords > 0) h.record(latencyMs(s) * 1000, s.producedRecords);
    return { t: s.t, warmup: false, publish: h.toBuckets(), e2e: null };
  });
}

describe('faultRecoveries', () => {
  it('a 1 s stall after 5 s at 1000 rec/s: 1 s without acks, back when acks resume, the stall in the latency', () => {
    // 5 s of 1 s samples, then 100 ms samples: 1 s empty (3 errors), a burst, then steady again.
    const samples = series([
      ...steady(5, 1000, 1000),
      ...Array.from({ length: 10 }, (_, i) => [100, 0, i === 0 ? 3 : 0] as [number, number, number]),
      [100, 1100],
      ...steady(30, 100, 1000),
    ]);
    // Records acknowledged right after the stall waited a second.
    const intervals = latencies(samples, (s) => (Math.abs(s.t - 6.1) < 1e-9 ? 1000 : 5));
    // The driver put 40 records back to be sent again in the stall's first sample, and 7 after it.
    const retries = samples.map((s) => (Math.abs(s.t - 5.1) < 1e-9 ? 40 : s.t > 7 ? 7 : 0));
    const [r] = faultRecoveries([fault(5)], { samples, intervals, retries, targetRate: null });
    expect(r).toMatchObject({
      noAckSec: 1,
      levelPerSec: 1000,
      recoverySec: 1,
      recoveryNote: null,
      errors: 3,
      retries: 40,
    });
    // The window takes in the first sample back, where the records that waited are acknowledged.
    expect(r?.windowEndT).toBe(6.1);
    expect(r?.publishMaxMs).toBeGreaterThanOrEqual(999);
    expect(r?.publishMaxMs).toBeLessThan(1010);
    expect(r?.publishP99Ms).toBeGreaterThanOrEqual(999);
  });

  it('counts no ms twice where stored sample times and lengths, each rounded, seem to overlap', () => {
    // As a real run stored them: fine samples 100 ms apart whose lengths were rounded up to 101 ms.
    const samples = series([
      ...steady(5, 1000, 1000),
      ...Array.from({ length: 10 }, () => [100, 0] as [number, number]),
      ...steady(30, 100, 1000),
    ]).map((s) => (s.producedRecords === 0 ? { ...s, intervalMs: 101 } : s));
    const intervals = latencies(samples, () => 5);
    const [r] = faultRecoveries([fault(5)], { samples, intervals, targetRate: null });
    // Summed as they are, the empty samples would span 1.009 s; acks were back after 1 s.
    expect(r?.noAckSec).toBe(1);
    expect(r?.recoverySec).toBe(1);
  });

  it('never recovers: the level is not reached again before load ends, and the note says so', () => {
    const samples = series([...steady(5, 1000, 1000), ...steady(20, 100, 0), ...steady(20, 100, 500)]);
    const [r] = faultRecoveries([fault(5)], { samples, intervals: [], targetRate: null });
    expect(r?.recoverySec).toBeNull();
    expect(r?.recoveryNote).toMatch(/not back to 90% of 1000 rec\/s .* before load ended/);
    expect(r?.noAckSec).toBe(2);
    expect(r?.windowEndT).toBe(9);
  });

  it('a fault at t=0 has no level before it, unless the run is open-loop at a set rate', () => {
    const samples = series([...steady(3, 100, 0), ...steady(20, 100, 1000)]);
    const [closed] = faultRecoveries([fault(0)], { samples, intervals: [], targetRate: null });
    expect(closed).toMatchObject({ levelPerSec: null, recoverySec: null, noAckSec: 0.3 });
    expect(closed?.recoveryNote).toMatch(/no level before it/);
    const [open] = faultRecoveries([fault(0)], { samples, intervals: [], targetRate: 1000 });
    expect(open).toMatchObject({ levelPerSec: 1000, recoverySec: 0.3, recoveryNote: null });
  });

  it('two overlapping faults: the first ends at the second, which inherits the level from before the first', () => {
    const samples = series([...steady(5, 1000, 2000), ...steady(10, 100, 0), ...steady(30, 100, 2000)]);
    const [first, second] = faultRecoveries([fault(5), fault(5.5, 'pause')], {
      samples,
      intervals: [],
      targetRate: null,
    });
    expect(first?.recoverySec).toBeNull();
    expect(first?.recoveryNote).toMatch(/before the next fault \(5\.5 s\)/);
    expect(first?.windowEndT).toBe(5.5);
    expect(first?.noAckSec).toBe(0.5);
    expect(second).toMatchObject({ levelPerSec: 2000, recoverySec: 0.5, noAckSec: 0.5, windowEndT: 6.1 });
  });

  it('a fault throughput never dipped for recovers at once; a failed node fault gets nothing and ends no window', () => {
    const samples = series(steady(40, 250, 800));
    const [failed, ok] = faultRecoveries([fault(3, 'kill', 'no such node'), fault(4, 'command')], {
      samples,
      intervals: [],
      targetRate: null,
    });
    expect(failed).toBeNull();
    expect(ok).toMatchObject({ recoverySec: 0, noAckSec: 0, levelPerSec: 800, windowEndT: 4.25 });
    // A command fault acted whatever its exit code: it has figures, and ends the window before it.
    const [before, exited] = faultRecoveries([fault(3), fault(5, 'command', 'exit code 4')], {
      samples,
      intervals: [],
      targetRate: null,
    });
    expect(exited).toMatchObject({ recoverySec: 0, levelPerSec: 800 });
    expect(before?.windowEndT).toBe(3.25);
  });

  it('without producers there is no time without acks to speak of', () => {
    const samples = series(steady(10, 1000, 0));
    const [r] = faultRecoveries([fault(5)], { samples, intervals: [], targetRate: null });
    expect(r?.noAckSec).toBeNull();
    expect(r?.recoverySec).toBeNull();
    // Nor retries, where the driver does not count them.
    expect(r?.retries).toBeNull();
  });
});
