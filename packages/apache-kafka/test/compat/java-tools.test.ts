import type { BundledBroker } from '@kbench/broker-launcher';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consumerPerformance, producerPerformance, runKafkaTool } from '../../src/index.js';
import { startTestBroker } from './helpers.js';

// The Java client, as the official Kafka 4.3.1 tools use it, unmodified, against the bundled broker.
describe('Java client (Apache Kafka 4.3.1 tools) against the bundled broker', () => {
  let broker: BundledBroker;

  beforeAll(async () => {
    broker = await startTestBroker('java');
  });

  afterAll(async () => {
    await broker?.stop();
  });

  const topicCommand = (...args: string[]) =>
    runKafkaTool('org.apache.kafka.tools.TopicCommand', ['--bootstrap-server', broker.bootstrap, ...args], {
      timeoutMs: 60_000,
    });

  it('TopicCommand --create makes a 6-partition topic', async () => {
    const created = await topicCommand(
      '--create',
      '--topic',
      'perf',
      '--partitions',
      '6',
      '--replication-factor',
      '1',
    );
    expect(created.stderr).toBe('');
    expect(created.stdout.trim()).toBe('Created topic perf.');
    expect(created.exitCode).toBe(0);
  });

  it('TopicCommand --list lists it', async () => {
    const listed = await topicCommand('--list');
    expect(listed.exitCode).toBe(0);
    expect(listed.stdout.split('\n').map((line) => line.trim())).toContain('perf');
  });

  it('TopicCommand --describe shows its 6 partitions led by node 1', async () => {
    const described = await topicCommand('--describe', '--topic', 'perf');
    expect(described.stderr).toBe('');
    expect(described.exitCode).toBe(0);
    expect(described.stdout).toMatch(/Topic: perf\s.*PartitionCount: 6\s.*ReplicationFactor: 1/);
    for (let partition = 0; partition < 6; partition++) {
      expect(described.stdout).toMatch(
        new RegExp(`Partition: ${partition}\\s+Leader: 1\\s+Replicas: 1\\s+Isr: 1`),
      );
    }
  });

  it('ProducerPerformance sends 200,000 x 100 B with acks=1, every record acknowledged', async () => {
    const produced = await producerPerformance({
      bootstrap: broker.bootstrap,
      topic: 'perf',
      records: 200_000,
      recordSize: 100,
      producerProps: { acks: 1 },
    });
    expect(produced.records).toBe(200_000);
    expect(produced.tool.stderr).not.toMatch(/Exception|ERROR/);
  });

  it('ConsumerPerformance reads those 200,000 records (19.07 MiB of values) back', async () => {
    const consumed = await consumerPerformance({
      bootstrap: broker.bootstrap,
      topic: 'perf',
      messages: 200_000,
      group: 'compat-perf',
    });
    expect(consumed.messages).toBe(200_000);
    expect(consumed.mb).toBeCloseTo((200_000 * 100) / 1024 / 1024, 3);
  });

  it('ProducerPerformance with acks=all and the Java default idempotence (InitProducerId) sends 200,000 x 100 B', async () => {
    await topicCommand('--create', '--topic', 'idempotent', '--partitions', '6');
    const produced = await producerPerformance({
      bootstrap: broker.bootstrap,
      topic: 'idempotent',
      records: 200_000,
      recordSize: 100,
      producerProps: { acks: 'all' },
    });
    expect(produced.records).toBe(200_000);
    const consumed = await consumerPerformance({
      bootstrap: broker.bootstrap,
      topic: 'idempotent',
      messages: 200_000,
    });
    expect(consumed.messages).toBe(200_000);
  });
});
