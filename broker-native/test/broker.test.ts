import { type BrokerHandle, startBroker } from '@kbench/broker-native';
import { type Admin, Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, tempDir } from './helpers.js';

const TOPIC = 'bench';
const MESSAGES = 1000;

function client(broker: BrokerHandle, clientId: string): Kafka {
  return new Kafka({
    clientId,
    brokers: [`${broker.host}:${broker.port}`],
    logLevel: logLevel.NOTHING,
    retry: { retries: 5 },
  });
}

async function totalOffsets(admin: Admin): Promise<number> {
  const offsets = await admin.fetchTopicOffsets(TOPIC);
  return offsets.reduce((sum, p) => sum + Number(p.high), 0);
}

/** Reads every message of TOPIC with a fresh consumer group; key -> value. */
async function consumeAll(kafka: Kafka, groupId: string): Promise<Map<string, string>> {
  const consumer = kafka.consumer({ groupId, sessionTimeout: 10_000, heartbeatInterval: 1000 });
  const seen = new Map<string, string>();
  await consumer.connect();
  await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
  let done: () => void = () => {};
  const finished = new Promise<void>((resolve) => {
    done = resolve;
  });
  await consumer.run({
    eachMessage: async ({ message }) => {
      seen.set(message.key?.toString() ?? '', message.value?.toString() ?? '');
      if (seen.size === MESSAGES) done();
    },
  });
  await finished;
  await consumer.disconnect();
  return seen;
}

describe('broker with kafkajs', () => {
  const dir = tempDir('kafkajs');
  let broker: BrokerHandle;

  beforeAll(async () => {
    broker = await startBroker({ dataDir: dir.path, port: 0 });
  });

  afterAll(async () => {
    await broker.stop();
    dir.cleanup();
  });

  it('listens on an ephemeral port with the defaults', () => {
    expect(broker.port).toBeGreaterThan(0);
    expect(broker.host).toBe('127.0.0.1');
    expect(broker.nodeId).toBe(1);
  });

  it('creates a topic, takes 1000 messages with acks 1 and 0, and reports the offsets', async () => {
    const kafka = client(broker, 'produce-test');
    const admin = kafka.admin();
    await admin.connect();
    expect(await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 3 }] })).toBe(true);
    const meta = await admin.fetchTopicMetadata({ topics: [TOPIC] });
    expect(meta.topics[0]?.partitions).toHaveLength(3);

    const producer = kafka.producer();
    await producer.connect();
    const message = (i: number) => ({ key: `k-${i}`, value: `value-${i}` });
    for (let start = 0; start < MESSAGES / 2; start += 100) {
      const batch = Array.from({ length: 100 }, (_, j) => message(start + j));
      await producer.send({ topic: TOPIC, acks: 1, messages: batch });
    }
    for (let start = MESSAGES / 2; start < MESSAGES; start += 100) {
      const batch = Array.from({ length: 100 }, (_, j) => message(start + j));
      await producer.send({ topic: TOPIC, acks: 0, messages: batch });
    }
    await producer.disconnect();

    // acks=0 sends are not confirmed, so wait until the broker has them all.
    const total = await eventually('all 1000 offsets', async () => {
      const n = await totalOffsets(admin);
      return n === MESSAGES ? n : undefined;
    });
    expect(total).toBe(MESSAGES);
    await admin.disconnect();

    const stats = broker.stats();
    expect(stats.produceRequests).toBeGreaterThanOrEqual(10);
    expect(stats.bytesIn).toBeGreaterThan(0);
    expect(stats.logSizeBytes).toBeGreaterThan(0);
  });

  it('a consumer group reads all 1000 messages back with their keys and values', async () => {
    const seen = await consumeAll(client(broker, 'consume-test'), 'group-a');
    expect(seen.size).toBe(MESSAGES);
    for (let i = 0; i < MESSAGES; i++) {
      expect(seen.get(`k-${i}`)).toBe(`value-${i}`);
    }
    expect(broker.stats().fetchRequests).toBeGreaterThan(0);
  });

  it('stop() resolves, twice, and a restart on the same dataDir keeps topic and data', async () => {
    await broker.stop();
    await broker.stop();
    broker = await startBroker({ dataDir: dir.path, port: 0 });
    const kafka = client(broker, 'restart-test');
    const admin = kafka.admin();
    await admin.connect();
    expect(await admin.listTopics()).toContain(TOPIC);
    expect(await totalOffsets(admin)).toBe(MESSAGES);
    await admin.disconnect();
    const seen = await consumeAll(kafka, 'group-after-restart');
    expect(seen.get('k-999')).toBe('value-999');
    expect(seen.size).toBe(MESSAGES);
  });
});

describe('startBroker options', () => {
  it('rejects a port out of range', async () => {
    const dir = tempDir('badport');
    await expect(startBroker({ dataDir: dir.path, port: 70000 })).rejects.toThrow(/port/);
    dir.cleanup();
  });

  it('takes host and nodeId', async () => {
    const dir = tempDir('opts');
    const broker = await startBroker({ dataDir: dir.path, host: '127.0.0.1', nodeId: 7 });
    expect(broker.nodeId).toBe(7);
    const admin = client(broker, 'opts').admin();
    await admin.connect();
    const cluster = await admin.describeCluster();
    expect(cluster.controller).toBe(7);
    expect(cluster.brokers).toEqual([{ nodeId: 7, host: '127.0.0.1', port: broker.port }]);
    await admin.disconnect();
    await broker.stop();
    dir.cleanup();
  });
});
