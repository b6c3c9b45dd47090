// Test data: a complete run record and samples, with every kind of field (JSON objects, nulls, booleans).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseScenario, type RunRecord, type RunSummary, type Sample } from '@kbench/schema';

export async function tempDir(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'kbench-history-'));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

export function makeRun(overrides: Partial<RunRecord> = {}): RunRecord {
  return {
    id: 'run-0001',
    status: 'running',
    scenario: parseScenario({ name: 'single producer', producers: { acks: 'all', messageSize: 100 } }),
    source: 'scenarios/kreps-2014/producer-1-thread.yaml',
    environment: {
      cores: 8,
      cpuModel: 'Test CPU @ 3 GHz',
      memoryBytes: 16 * 1024 ** 3,
      os: 'linux 6.1',
      hostname: 'bench-host',
      versions: { node: '20.20.2', kbench: '0.1.0' },
      target: 'bundled',
      bootstrap: '127.0.0.1:9092',
      driver: 'kafkajs',
    },
    summary: null,
    error: null,
    startedAt: '2025-01-02T03:04:05.000Z',
    finishedAt: null,
    tags: [],
    notes: '',
    ...overrides,
  };
}

export function makeSample(t: number, overrides: Partial<Sample> = {}): Sample {
  return {
    t,
    intervalMs: 1000,
    warmup: t <= 2,
    producedRecords: 1000 * t,
    producedBytes: 100_000 * t,
    consumedRecords: 900 * t,
    consumedBytes: 90_000 * t,
    errors: 0,
    backlog: 100 * t,
    publishP50Ms: 1.25,
    publishP99Ms: 4.5,
    publishMaxMs: 12,
    e2eP50Ms: null,
    e2eP99Ms: null,
    e2eMaxMs: null,
    ...overrides,
  };
}

export function makeSummary(): RunSummary {
  const latency = {
    count: 1000,
    p50: 1.5,
    p75: 2,
    p95: 3,
    p99: 4.25,
    p999: 9,
    p9999: 11,
    max: 12.5,
    mean: 1.75,
    worst10Mean: 5.5,
  };
  return {
    measuredSeconds: 8,
    produced: { records: 8000, recordsPerSec: 1000, mbPerSec: 0.095, wireMbPerSec: null, errors: 0 },
    consumed: { records: 7200, recordsPerSec: 900, mbPerSec: 0.086 },
    publishLatencyMs: latency,
    endToEndLatencyMs: null,
  };
}
