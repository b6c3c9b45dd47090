// The same workload measured two ways must give the same throughput: kbench's native driver and
// Kafka's own ProducerPerformance, both at a fixed 50,000 records/s of 100 B with matching client
// settings, against the same standalone broker build. (At `max`, each measures its own client's
// speed, which is not what a cross-check of the measurement is about.)
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ensureKafkaJars, producerPerformance } from '@kbench/apache-kafka';
import { type BundledBroker, startBundledBroker } from '@kbench/broker-launcher';
import { parseScenario } from '@kbench/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTopics } from '../src/admin.js';
import { ScenarioRun } from '../src/index.js';

const RATE = 50_000;
const RECORDS = 250_000;

let dataDir: string;
let broker: BundledBroker;

beforeAll(async () => {
  await ensureKafkaJars();
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'kbench-cross-check-'));
  broker = await startBundledBroker({ dataDir });
}, 600_000);

afterAll(async () => {
  await broker?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

describe('cross-check against ProducerPerformance', () => {
  it('agrees on throughput within 10% at the same fixed rate and settings', async () => {
    await createTopics(
      { bootstrap: [broker.bootstrap] },
      'cross-admin',
      ['pp'],
      parseScenario({ topics: { partitions: 6 } }).topics,
      () => {},
    );
    const java = await producerPerformance({
      bootstrap: broker.bootstrap,
      topic: 'pp',
      records: RECORDS,
      recordSize: 100,
      throughput: RATE,
      producerProps: { acks: '1', 'batch.size': '16384', 'linger.ms': '0' },
    });
    const native = await new ScenarioRun(
      parseScenario({
        target: broker.bootstrap,
        driver: 'native',
        records: RECORDS,
        topics: { partitions: 6 },
        producers: { count: 1, acks: 1, messageSize: 100, rate: RATE, batchSize: 16384, lingerMs: 0 },
      }),
      { runId: 'crosscheck' },
    ).execute();
    expect(native.status, String(native.error)).toBe('completed');
    const nativeRate = native.summary!.produced.recordsPerSec;
    expect(Math.abs(nativeRate - java.recordsPerSec) / java.recordsPerSec).toBeLessThan(0.1);
  }, 120_000);
});
