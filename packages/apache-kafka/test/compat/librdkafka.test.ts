import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import type { BundledBroker } from '@kbench/broker-launcher';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker } from './helpers.js';

// librdkafka through Python's confluent-kafka (its wheels bundle librdkafka). kcat, the other
// librdkafka client, is covered by broker-native/test/binary.test.ts.
const SCRIPT = join(import.meta.dirname, 'confluent_kafka_roundtrip.py');

function requireConfluentKafka(): void {
  const probe = spawnSync('python3', ['-c', 'import confluent_kafka'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    throw new Error(
      'python3 with confluent-kafka is needed for the librdkafka compatibility test: ' +
        `python3 -m pip install confluent-kafka (${probe.error?.message ?? probe.stderr.trim()})`,
    );
  }
}

describe('librdkafka (confluent-kafka for Python) against the bundled broker', () => {
  let broker: BundledBroker;

  beforeAll(async () => {
    broker = await startTestBroker('librdkafka');
  });

  afterAll(async () => {
    await broker?.stop();
  });

  it('creates a topic, lists every topic, produces 5,000 with delivery reports, consumes them as a group and commits', () => {
    requireConfluentKafka();
    const run = spawnSync('python3', [SCRIPT, broker.bootstrap, 'rdkafka-roundtrip', '5000'], {
      encoding: 'utf8',
      timeout: 180_000,
    });
    const report = JSON.parse(run.stdout.trim().split('\n').pop() || '{}');
    expect(report, run.stderr).toMatchObject({
      partitions: 3,
      listedAll: true,
      delivered: 5000,
      failed: [],
      unflushed: 0,
      consumed: 5000,
      distinct: 5000,
      valuesMatchKeys: true,
      expectedValues: true,
      committed: 5000,
      consumedAfterCommit: 0,
    });
    expect(run.status).toBe(0);
  });
});
