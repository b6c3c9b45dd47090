// OMB export: a run (from an imported OMB workload) as OMB's TestResult, field names included.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ombToScenario, parseScenario, type RunRecord, readScenarioText, type Sample } from '@kbench/schema';
import { describe, expect, it } from 'vitest';
import { runToOmbResult } from '../src/omb-export.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const OMB = path.resolve(here, '../../../packages/schema/test/fixtures/omb');
const read = (name: string) => readScenarioText(readFileSync(path.join(OMB, name), 'utf8'));

/** The fields of OMB's TestResult (benchmark-framework, TestResult.java) that kbench writes. */
const TEST_RESULT_FIELDS = [
  'workload',
  'driver',
  'messageSize',
  'topics',
  'partitions',
  'producersPerTopic',
  'consumersPerTopic',
  'publishRate',
  'publishErrorRate',
  'consumeRate',
  'backlog',
  ...['Avg', '50pct', '75pct', '95pct', '99pct', '999pct', '9999pct', 'Max'].flatMap((q) => [
    `publishLatency${q}`,
    `aggregatedPublishLatency${q}`,
    `endToEndLatency${q}`,
    `aggregatedEndToEndLatency${q}`,
  ]),
  'aggregatedPublishLatencyQuantiles',
  'aggregatedEndToEndLatencyQuantiles',
];

function sample(t: number, warmup: boolean): Sample {
  return {
    t,
    intervalMs: 500,
    warmup,
    producedRecords: 1000,
    producedBytes: 1024 * 1000,
    consumedRecords: 900,
    consumedBytes: 900 * 1024,
    errors: 0,
    backlog: 100,
    publishP50Ms: 1,
    publishP99Ms: 4,
    publishMaxMs: 9,
    e2eP50Ms: 2,
    e2eP99Ms: 6,
    e2eMaxMs: 12,
  };
}

describe('runToOmbResult', () => {
  const { scenario } = ombToScenario(read('10-topics-4p-4c-backlog.yaml'), read('kafka-throughput.yaml'));
  const latency = {
    count: 10,
    p50: 1,
    p75: 2,
    p95: 3,
    p99: 4,
    p999: 5,
    p9999: 6,
    max: 9,
    mean: 1.5,
    worst10Mean: 5,
  };
  const run = {
    id: 'abc',
    status: 'completed',
    scenario: parseScenario(scenario),
    source: null,
    environment: {
      cores: 2,
      cpuModel: 'x',
      memoryBytes: 1,
      os: 'linux',
      hostname: 'h',
      versions: {},
      target: 'bundled',
      bootstrap: '',
      driver: 'native',
    },
    summary: {
      measuredSeconds: 1,
      produced: { records: 2000, recordsPerSec: 2000, mbPerSec: 1.95, wireMbPerSec: 2, errors: 0 },
      consumed: { records: 1800, recordsPerSec: 1800, mbPerSec: 1.76 },
      publishLatencyMs: latency,
      endToEndLatencyMs: { ...latency, p50: 2 },
    },
    error: null,
    startedAt: '',
    finishedAt: '',
    tags: [],
    notes: '',
  } as RunRecord;
  const result = runToOmbResult(run, [sample(0.5, true), sample(1, false), sample(1.5, false)]);

  it('writes every TestResult field with OMB names', () => {
    expect(Object.keys(result).sort()).toEqual([...TEST_RESULT_FIELDS].sort());
  });

  it('round-trips the workload shape: topics, partitions, size and clients per topic', () => {
    expect(result).toMatchObject({
      messageSize: 100,
      topics: 10,
      partitions: 3,
      producersPerTopic: 4,
      consumersPerTopic: 8,
    });
  });

  it('leaves warm-up out of the per-interval series and turns counts into rates', () => {
    expect(result.publishRate).toEqual([2000, 2000]);
    expect(result.consumeRate).toEqual([1800, 1800]);
    expect(result.publishLatency99pct).toEqual([4, 4]);
    expect(result.endToEndLatencyMax).toEqual([12, 12]);
  });

  it('takes the aggregated figures from the summary', () => {
    expect(result.aggregatedPublishLatencyAvg).toBe(1.5);
    expect(result.aggregatedPublishLatency9999pct).toBe(6);
    expect(result.aggregatedEndToEndLatency50pct).toBe(2);
    expect(result.aggregatedPublishLatencyQuantiles['99.0']).toBe(4);
  });
});
