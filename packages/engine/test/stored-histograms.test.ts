// Real runs against the bundled broker store each sample's latency histograms; merged again from
// the history they give the run's summary exactly. A run may sample every 100 ms.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { History } from '@kbench/history';
import { parseScenario, type ScenarioInput } from '@kbench/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRecordedRun } from '../src/index.js';
import { storedIntervals, windowLatency } from '../src/stored-latency.js';

let workDir: string;
let history: History;
beforeAll(async () => {
  workDir = await mkdtemp(path.join(os.tmpdir(), 'kbench-stored-histograms-'));
  history = await History.open(path.join(workDir, 'history.duckdb'));
});
afterAll(async () => {
  await rm(workDir, { recursive: true, force: true });
});

async function recorded(input: ScenarioInput) {
  const live = await startRecordedRun(parseScenario(input), { history, workDir });
  const record = await live.done;
  expect(record.status, record.error ?? '').toBe('completed');
  return record;
}

describe('stored sample histograms', () => {
  for (const driver of ['kafkajs', 'native'] as const) {
    it(`merge into the run's summary exactly (${driver})`, async () => {
      const record = await recorded({
        driver,
        duration: '4s',
        warmup: '1s',
        producers: { count: 1, messageSize: 100, rate: 20_000 },
        consumers: { count: 1 },
      });
      const [intervals = []] = await storedIntervals(history, [record.id]);
      const samples = await history.getSamples(record.id);
      expect(intervals.map((i) => [i.t, i.warmup])).toEqual(samples.map((s) => [s.t, s.warmup]));
      expect(intervals.some((i) => i.warmup)).toBe(true);
      const whole = windowLatency([intervals]);
      expect(record.summary?.publishLatencyMs).not.toBeNull();
      expect(record.summary?.endToEndLatencyMs).not.toBeNull();
      expect(whole.publishLatencyMs).toEqual(record.summary?.publishLatencyMs);
      expect(whole.endToEndLatencyMs).toEqual(record.summary?.endToEndLatencyMs);
      // Each sample's own p99 is its stored histogram's.
      for (const [i, interval] of intervals.entries()) {
        const one = windowLatency([[interval]], { warmup: true });
        expect(one.publishLatencyMs?.p99 ?? null).toBe(samples[i]?.publishP99Ms);
      }
    });
  }

  it('are taken every 100 ms with sampleIntervalMs: 100, about ten a second, rates still per second', async () => {
    const record = await recorded({
      duration: '3s',
      sampleIntervalMs: 100,
      producers: { count: 1, messageSize: 100, rate: 5000 },
    });
    const samples = await history.getSamples(record.id);
    // 3 s at 100 ms is 30 intervals; a slow machine may merge a few late ones, never add any.
    expect(samples.length).toBeGreaterThanOrEqual(20);
    expect(samples.length).toBeLessThanOrEqual(31);
    for (const sample of samples.slice(0, -1)) expect(sample.intervalMs).toBeLessThan(1000);
    expect(new Set(samples.map((s) => s.t)).size).toBe(samples.length);
    expect(samples.some((s) => !Number.isInteger(s.t))).toBe(true);
    expect(record.summary?.produced.recordsPerSec).toBeGreaterThan(1000);
    const [intervals = []] = await storedIntervals(history, [record.id]);
    expect(intervals.length).toBe(samples.length);
    expect(windowLatency([intervals]).publishLatencyMs).toEqual(record.summary?.publishLatencyMs);
  });
});
