// The kafkajs driver at a fixed rate, against the bundled broker: no record is counted from before
// it was sent (40% of a run's latencies read 0 µs when timers fired early), a record limit is met
// exactly (each lane in flight dropped its claimed records at the end), and a run whose side the
// scenario asked for did nothing while measured has failed.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { History } from '@kbench/history';
import { parseScenario, type ScenarioInput } from '@kbench/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRecordedRun } from '../src/index.js';
import { storedIntervals } from '../src/stored-latency.js';

let workDir: string;
let history: History;
beforeAll(async () => {
  workDir = await mkdtemp(path.join(os.tmpdir(), 'kbench-kafkajs-schedule-'));
  history = await History.open(path.join(workDir, 'history.duckdb'));
});
afterAll(async () => {
  await rm(workDir, { recursive: true, force: true });
});

async function recorded(input: ScenarioInput) {
  const live = await startRecordedRun(parseScenario(input), { history, workDir });
  return live.done;
}

describe('the kafkajs driver at a fixed rate', () => {
  it('counts no publish or end-to-end latency from before a record was sent', async () => {
    const record = await recorded({
      driver: 'kafkajs',
      duration: '3s',
      warmup: '1s',
      producers: { count: 1, messageSize: 100, rate: 2000 },
      consumers: { count: 1 },
    });
    expect(record.status, record.error ?? '').toBe('completed');
    const [intervals = []] = await storedIntervals(history, [record.id]);
    // Bucket 0 holds latencies under 1 µs: no round trip through a broker takes that little.
    const atZero = (h: { buckets: number[]; counts: number[] } | null) =>
      h === null ? 0 : (h.counts[h.buckets.indexOf(0)] ?? 0);
    const publishZero = intervals.reduce((n, i) => n + atZero(i.publish), 0);
    const e2eZero = intervals.reduce((n, i) => n + atZero(i.e2e), 0);
    expect({ publishZero, e2eZero }).toEqual({ publishZero: 0, e2eZero: 0 });
  });

  it('produces exactly the records asked with many sends in flight', async () => {
    const record = await recorded({
      driver: 'kafkajs',
      records: 3000,
      warmup: '0s',
      producers: { count: 1, messageSize: 100, rate: 2000, maxInFlight: 20 },
    });
    expect(record.status, record.error ?? '').toBe('completed');
    const samples = await history.getSamples(record.id);
    expect(samples.reduce((n, s) => n + s.producedRecords, 0)).toBe(3000);
  });
});

describe('a run whose side did nothing while it was measured', () => {
  it('fails when its consumers read nothing (a consumer-only run on an empty topic)', async () => {
    for (const driver of ['kafkajs', 'native'] as const) {
      const record = await recorded({
        driver,
        duration: '2s',
        warmup: '1s',
        producers: { count: 0 },
        consumers: { count: 1 },
      });
      expect(record.status).toBe('failed');
      expect(record.error).toMatch(/^no record was consumed: producers\.count is 0/);
    }
  });
});
