// The `kafka` target: a real Apache Kafka 4.3.1 (KRaft, cluster.nodes nodes, loopback) from the Maven
// Central jars, started for the run and stopped after it; the run is stored like any other.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { History } from '@kbench/history';
import { parseScenario } from '@kbench/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRecordedRun } from '../src/index.js';

let workDir: string;
beforeAll(async () => {
  workDir = await mkdtemp(path.join(os.tmpdir(), 'kbench-managed-kafka-'));
});
afterAll(async () => {
  await rm(workDir, { recursive: true, force: true });
});

describe('the managed Apache Kafka target', () => {
  it('runs a scenario against Apache Kafka and stores it with the broker version', async () => {
    const history = await History.open(path.join(workDir, 'history.duckdb'));
    const live = await startRecordedRun(
      parseScenario({
        name: 'on apache kafka',
        target: 'kafka',
        records: 20_000,
        topics: { partitions: 3 },
        producers: { count: 1 },
        consumers: { count: 1 },
      }),
      { history, workDir },
    );
    const record = await live.done;
    expect(record.status, String(record.error)).toBe('completed');
    const stored = await history.getRun(live.id);
    expect(stored?.environment.target).toBe('kafka');
    expect(stored?.environment.versions.broker).toBe('Apache Kafka 4.3.1');
    expect(stored?.environment.bootstrap).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(stored?.summary?.produced.records).toBe(20_000);
    expect((await history.getSamples(live.id)).length).toBeGreaterThan(0);
    expect(stored?.environment.cluster?.brokers).toHaveLength(1);
  }, 300_000);

  it('starts cluster.nodes KRaft nodes: acks=all to topics replicated three times', async () => {
    const history = await History.open(path.join(workDir, 'history.duckdb'));
    const live = await startRecordedRun(
      parseScenario({
        name: 'on a three-node apache kafka',
        target: 'kafka',
        cluster: { nodes: 3 },
        records: 5_000,
        topics: { partitions: 3, replicationFactor: 3, minInsyncReplicas: 2 },
        producers: { count: 1, acks: 'all' },
      }),
      { history, workDir },
    );
    const record = await live.done;
    expect(record.status, String(record.error)).toBe('completed');
    expect(record.summary?.produced.records).toBe(5_000);
    expect(record.environment.versions.broker).toBe('Apache Kafka 4.3.1, 3 nodes');
    expect(record.environment.bootstrap.split(',')).toHaveLength(3);
    expect(record.environment.cluster?.brokers.map((b) => b.nodeId)).toEqual([1, 2, 3]);
    expect(record.environment.cluster?.topicConfigs?.configs['min.insync.replicas']).toBe('2');
  }, 300_000);
});
