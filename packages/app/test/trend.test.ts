import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { History } from '@kbench/history';
import { parseScenario, type RunRecord, type RunSummary } from '@kbench/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTrend, TrendError } from '../src/index.js';

function summary(rate: number): RunSummary {
  const latency = {
    count: 10,
    p50: 1,
    p75: 1,
    p95: 2,
    p99: 3,
    p999: 3,
    p9999: 3,
    max: 3,
    mean: 1,
    worst10Mean: 3,
  };
  return {
    measuredSeconds: 5,
    produced: { records: rate * 5, recordsPerSec: rate, mbPerSec: 1, wireMbPerSec: null, errors: 0 },
    consumed: { records: 0, recordsPerSec: 0, mbPerSec: 0 },
    publishLatencyMs: latency,
    endToEndLatencyMs: null,
  };
}

let dir: string;
let history: History;

/** Stores a run of `name` on `target` started at minute `minute`, ended with `status` and `rate`. */
async function store(
  id: string,
  name: string,
  target: string,
  minute: number,
  status: 'completed' | 'failed',
  rate: number,
  extra: Partial<RunRecord> = {},
): Promise<void> {
  const startedAt = new Date(Date.UTC(2026, 0, 1, 0, minute)).toISOString();
  await history.createRun({
    id,
    status: 'running',
    scenario: parseScenario({ name, target }),
    source: null,
    environment: {
      cores: 2,
      cpuModel: 'cpu',
      memoryBytes: 1,
      os: 'linux',
      hostname: 'h',
      versions: {},
      target: 'bundled',
      bootstrap: '127.0.0.1:9092',
      driver: 'native',
    },
    summary: null,
    error: null,
    startedAt,
    finishedAt: null,
    tags: [],
    notes: '',
    ...extra,
  });
  await history.finishRun(id, {
    status,
    summary: status === 'completed' ? summary(rate) : null,
    error: status === 'failed' ? 'broke' : null,
    finishedAt: startedAt,
  });
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'kbench-trend-'));
  history = await History.open(path.join(dir, 'history.duckdb'));
  // Stored out of time order, to see the trend put them in order.
  await store('b', 'acks one', 'bundled', 2, 'completed', 200);
  await store('a', 'acks one', 'bundled', 1, 'completed', 100);
  await store('c', 'acks one', 'bundled', 3, 'failed', 0);
  await store('d', 'acks one extended', 'bundled', 4, 'completed', 400);
  await store('e', 'acks one', 'kafka', 5, 'completed', 500);
  await store('f', 'acks one', 'bundled', 6, 'completed', 600, { sweepValue: '100', series: 'sweep:x' });
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('loadTrend', () => {
  it('takes the completed runs of that very scenario on that target, oldest first, without sweep points', async () => {
    const trend = await loadTrend(history, { scenario: 'acks one', target: 'bundled' });
    expect(trend.runs.map((r) => r.id)).toEqual(['a', 'b']);
    expect(trend.series.find((s) => s.metric === 'produced.recordsPerSec')?.values).toEqual([100, 200]);
  });

  it("takes a sweep's runs only for the sweep value asked for", async () => {
    const trend = await loadTrend(history, { scenario: 'acks one', target: 'bundled', sweepValue: '100' });
    expect(trend.runs.map((r) => r.id)).toEqual(['f']);
    expect(trend.sweepValue).toBe('100');
    await expect(loadTrend(history, { scenario: 'acks one', sweepValue: '7' })).rejects.toThrow(
      /no completed run of scenario "acks one" at sweep value 7; its sweep values: 100/,
    );
  });

  it('asks for a target when the scenario ran on several, naming them', async () => {
    await expect(loadTrend(history, { scenario: 'acks one' })).rejects.toThrow(
      /ran on 2 targets; name one with target: bundled, kafka/,
    );
  });

  it('takes the only target when there is one', async () => {
    const trend = await loadTrend(history, { scenario: 'acks one extended' });
    expect(trend.target).toBe('bundled');
  });

  it('names an unknown scenario and an unknown target', async () => {
    const unknown = await loadTrend(history, { scenario: 'acks' }).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(TrendError);
    expect((unknown as TrendError).kind).toBe('unknown-scenario');
    expect((unknown as Error).message).toMatch(/no completed run of scenario "acks".*acks one/);
    await expect(loadTrend(history, { scenario: 'acks one', target: 'prod' })).rejects.toThrow(
      /no completed run on target "prod"; its targets: bundled, kafka/,
    );
  });
});
