import {
  type BrokerHandle,
  NativeConsumer,
  type NativeInterval,
  NativeProducer,
  type NativeProducerOptions,
  startBroker,
} from '@kbench/broker-native';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, tempDir } from './helpers.js';

const RECORDS = 20_000;
const PARTITIONS = 6;

describe('native load engine against the bundled broker', () => {
  const dir = tempDir('loadgen');
  let broker: BrokerHandle;
  let bootstrap: string[];
  let topicCounter = 0;

  beforeAll(async () => {
    broker = await startBroker({ dataDir: dir.path, port: 0 });
    bootstrap = [`${broker.host}:${broker.port}`];
  });

  afterAll(async () => {
    await broker.stop();
    dir.cleanup();
  });

  async function createTopic(): Promise<string> {
    const topic = `loadgen-${topicCounter++}`;
    const admin = new Kafka({
      clientId: 'loadgen-test',
      brokers: bootstrap,
      logLevel: logLevel.NOTHING,
    }).admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: PARTITIONS }] });
    await admin.disconnect();
    return topic;
  }

  function producerOptions(
    topic: string,
    overrides: Partial<NativeProducerOptions> = {},
  ): NativeProducerOptions {
    return {
      bootstrap,
      topics: [topic],
      acks: 1,
      messageSize: 100,
      keys: 'none',
      compression: 'none',
      batchSize: 16_384,
      lingerMs: 0,
      maxInFlight: 5,
      idempotence: false,
      records: RECORDS,
      ...overrides,
    };
  }

  /** Produces RECORDS and returns the producer's interval totals. */
  async function produce(options: NativeProducerOptions): Promise<NativeInterval> {
    const producer = await NativeProducer.start(options);
    await producer.finished();
    const interval = producer.takeInterval();
    expect(producer.lastError()).toBeNull();
    return interval;
  }

  /** Consumes the topic from the beginning until RECORDS have arrived; returns the totals. */
  async function consumeAll(
    topic: string,
  ): Promise<{ records: number; valueBytes: number; latencies: number }> {
    const consumer = await NativeConsumer.start({
      bootstrap,
      topics: [topic],
      fromBeginning: true,
      groupId: `read-${topic}`,
    });
    const total = { records: 0, valueBytes: 0, latencies: 0 };
    await eventually('every record consumed', async () => {
      const i = consumer.takeInterval();
      total.records += i.records;
      total.valueBytes += i.valueBytes;
      total.latencies += i.latencyCount;
      return total.records >= RECORDS ? total : undefined;
    });
    expect(consumer.lastError()).toBeNull();
    await consumer.stop();
    return total;
  }

  for (const compression of ['none', 'gzip', 'snappy', 'lz4', 'zstd']) {
    it(`produces and consumes ${RECORDS} records with ${compression} compression`, async () => {
      const topic = await createTopic();
      const produced = await produce(producerOptions(topic, { compression }));
      expect(produced.records).toBe(RECORDS);
      expect(produced.valueBytes).toBe(RECORDS * 100);
      expect(produced.latencyCount).toBe(RECORDS);
      const consumed = await consumeAll(topic);
      expect(consumed).toEqual({ records: RECORDS, valueBytes: RECORDS * 100, latencies: RECORDS });
    });
  }

  it('produces with idempotence (InitProducerId and sequence numbers)', async () => {
    const topic = await createTopic();
    const produced = await produce(producerOptions(topic, { acks: -1, idempotence: true }));
    expect(produced.records).toBe(RECORDS);
    expect((await consumeAll(topic)).records).toBe(RECORDS);
  });

  it('paces a fixed rate and reports latency buckets that add up to the count', async () => {
    const topic = await createTopic();
    const produced = await produce(
      producerOptions(topic, {
        ratePerSec: 10_000,
        records: 5_000,
        keys: 'roundRobin:8',
        messageSize: 50,
        messageSizeMax: 150,
      }),
    );
    expect(produced.records).toBe(5_000);
    expect(produced.latencyCounts.reduce((a, b) => a + b, 0)).toBe(produced.latencyCount);
    expect(produced.latencyBuckets).toHaveLength(produced.latencyCounts.length);
  });

  it('stops a closed-loop producer that has no record limit', async () => {
    const topic = await createTopic();
    const producer = await NativeProducer.start(producerOptions(topic, { records: undefined }));
    await eventually('some records acknowledged', async () =>
      producer.takeInterval().records > 0 ? true : undefined,
    );
    await producer.stop();
    await producer.finished();
  });

  it('rejects options it cannot honour', async () => {
    const topic = await createTopic();
    await expect(NativeProducer.start(producerOptions(topic, { keys: 'sometimes' }))).rejects.toThrow(/keys/);
    await expect(NativeProducer.start(producerOptions(topic, { compression: 'brotli' }))).rejects.toThrow(
      /compression/,
    );
    await expect(
      NativeProducer.start(producerOptions(topic, { idempotence: true, acks: 1 })),
    ).rejects.toThrow(/idempotence/);
  });
});
