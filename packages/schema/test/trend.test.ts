import { describe, expect, it } from 'vitest';
import { buildTrend, type RunListItem, type RunSummary } from '../src/index.js';

function summary(rate: number, p99: number, busy: number | null = 0.3): RunSummary {
  const latency = {
    count: 10,
    p50: p99 / 2,
    p75: p99,
    p95: p99,
    p99,
    p999: p99,
    p9999: p99,
    max: p99,
    mean: p99 / 2,
    worst10Mean: p99,
  };
  return {
    measuredSeconds: 5,
    produced: {
      records: rate * 5,
      recordsPerSec: rate,
      mbPerSec: rate / 10_000,
      wireMbPerSec: null,
      errors: 0,
    },
    consumed: { records: 0, recordsPerSec: 0, mbPerSec: 0 },
    publishLatencyMs: latency,
    endToEndLatencyMs: null,
    client: { cpuCores: 1, includesBroker: true, producerBusy: busy, consumerBusy: null },
  };
}

function run(i: number, s: RunSummary, extra: Partial<RunListItem> = {}): RunListItem {
  return {
    id: `run-${i}`,
    status: 'completed',
    source: null,
    summary: s,
    error: null,
    startedAt: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString(),
    finishedAt: null,
    tags: [],
    notes: '',
    name: 'steady',
    target: 'bundled',
    driver: 'native',
    ...extra,
  };
}

describe('the best run of a trend', () => {
  const runs = [
    run(0, summary(1000, 4)),
    run(1, summary(1200, 2.5)),
    run(2, summary(900, 3)),
    run(3, summary(1200, 2.5)),
  ];
  const best = (metric: string) =>
    buildTrend('steady', 'bundled', runs).series.find((s) => s.metric === metric)?.best;

  it('is the lowest value for a latency', () => {
    expect(best('publishLatencyMs.p99')).toEqual({ runId: 'run-1', value: 2.5 });
    expect(best('publishLatencyMs.p50')).toEqual({ runId: 'run-1', value: 1.25 });
  });

  it('is the highest value for a rate, the earliest of equals', () => {
    expect(best('produced.recordsPerSec')).toEqual({ runId: 'run-1', value: 1200 });
    expect(best('produced.mbPerSec')).toEqual({ runId: 'run-1', value: 0.12 });
  });

  it('is none for a figure no run has', () => {
    expect(best('endToEndLatencyMs.p99')).toBeNull();
    expect(best('consumed.recordsPerSec')).toBeNull();
  });
});

describe('buildTrend', () => {
  const rates = [1000, 1010, 990, 1005, 995, 1000, 700, 705, 695, 702, 698, 700];
  const runs = rates.map((rate, i) => run(i, summary(rate, 5 + (i % 2))));

  it('finds the drop in produced rec/s at the first slow run and calls it worse', () => {
    const trend = buildTrend('steady', 'bundled', runs);
    const produced = trend.series.find((s) => s.metric === 'produced.recordsPerSec');
    expect(produced?.values).toEqual(rates);
    expect(produced?.changePoints.map((c) => [c.runId, c.verdict])).toEqual([['run-6', 'worse']]);
    expect(produced?.changePoints[0]?.changePercent).toBeCloseTo(-30, 0);
  });

  it('picks the highest rate and the lowest p99 as best, leaving out a run that shared the machine', () => {
    const shared = [...runs, run(12, summary(5000, 0.1), { concurrentWith: ['other'] })];
    const trend = buildTrend('steady', 'bundled', shared);
    expect(trend.series.find((s) => s.metric === 'produced.recordsPerSec')?.best).toEqual({
      runId: 'run-1',
      value: 1010,
    });
    expect(trend.series.find((s) => s.metric === 'publishLatencyMs.p99')?.best).toEqual({
      runId: 'run-0',
      value: 5,
    });
    expect(trend.runs.at(-1)?.concurrentWith).toEqual(['other']);
  });

  it('leaves out a run that shared the machine with busy processes, as one with another run', () => {
    const busy = summary(5000, 0.1);
    busy.machine = { cpuBusy: 0.98, cores: 2, disk: null, diskWrittenBytes: null, othersCores: 1.2 };
    const trend = buildTrend('steady', 'bundled', [...runs, run(12, busy)]);
    expect(trend.series.find((s) => s.metric === 'produced.recordsPerSec')?.best?.runId).toBe('run-1');
    expect(trend.runs.at(-1)?.machineShared).toBe(
      "something besides this run kept 1.2 of the machine's 2 cores busy",
    );
    expect(trend.runs.at(-1)?.concurrentWith).toBeUndefined();
    // Below the mark (0.5 cores and a tenth of the machine): not shared.
    const quiet = summary(5000, 0.1);
    quiet.machine = { cpuBusy: 0.6, cores: 2, disk: null, diskWrittenBytes: null, othersCores: 0.3 };
    const alone = buildTrend('steady', 'bundled', [...runs, run(12, quiet)]);
    expect(alone.runs.at(-1)?.machineShared).toBeUndefined();
    expect(alone.series.find((s) => s.metric === 'produced.recordsPerSec')?.best?.runId).toBe('run-12');
  });

  it('uses runs beside busy processes when no run had a quiet machine (a CI runner always busy), marked', () => {
    const busyRuns = runs.map((r) => {
      const s = structuredClone(r.summary as RunSummary);
      s.machine = { cpuBusy: 0.98, cores: 2, disk: null, diskWrittenBytes: null, othersCores: 1.2 };
      return { ...r, summary: s };
    });
    const trend = buildTrend('steady', 'bundled', busyRuns);
    expect(trend.series.find((s) => s.metric === 'produced.recordsPerSec')?.best?.runId).toBe('run-1');
    expect(trend.runs.every((r) => r.machineShared !== undefined)).toBe(true);
    // A run beside another kbench run is still left out.
    const withConcurrent = [...busyRuns, run(12, summary(5000, 0.1), { concurrentWith: ['other'] })];
    const mixed = buildTrend('steady', 'bundled', withConcurrent);
    expect(mixed.series.find((s) => s.metric === 'produced.recordsPerSec')?.best?.runId).toBe('run-1');
  });

  it('marks a run whose load thread set the pace, and keeps only the metrics asked for', () => {
    const trend = buildTrend('steady', 'bundled', [run(0, summary(100, 1, 0.97))], ['publishLatencyMs.p50']);
    expect(trend.runs[0]?.clientPaced).toMatch(/producer thread 97% busy/);
    expect(trend.series.map((s) => s.metric)).toEqual(['publishLatencyMs.p50']);
  });

  it('gives null for a figure a run does not have: no end-to-end latency, nothing consumed', () => {
    const trend = buildTrend('steady', 'bundled', runs.slice(0, 2));
    expect(trend.series.find((s) => s.metric === 'endToEndLatencyMs.p99')?.values).toEqual([null, null]);
    expect(trend.series.find((s) => s.metric === 'consumed.recordsPerSec')?.values).toEqual([null, null]);
  });
});
