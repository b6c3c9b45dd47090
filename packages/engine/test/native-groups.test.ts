// The native driver's consumers are real consumer-group members: against the bundled broker (and,
// when it can start, a managed Apache Kafka) two groups of two native members each read every
// record once, and kafkajs's admin sees the groups, their members, assignments and offsets.
// Also the native producer's size distributions and payload files. No timing assertions.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type ApacheKafka, startApacheKafka } from '@kbench/apache-kafka';
import { NativeConsumer, startBroker } from '@kbench/broker-native';
import { parseScenario, type ScenarioInput } from '@kbench/schema';
import { type Admin, AssignerProtocol, Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoadClients } from '../src/drivers/driver.js';
import { nativeDriver } from '../src/drivers/native.js';
import { ScenarioRun } from '../src/index.js';

let workDir: string;
beforeAll(async () => {
  workDir = await mkdtemp(path.join(os.tmpdir(), 'kbench-native-groups-'));
});
afterAll(async () => {
  await rm(workDir, { recursive: true, force: true });
});

const run = (input: ScenarioInput) =>
  new ScenarioRun(parseScenario(input), {
    runId: Math.random().toString(16).slice(2, 10),
    workDir,
  }).execute();

async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Two groups of two native members on `bootstrap`, then RECORDS produced by the native producer:
 * each group reads every record once, and kafkajs sees both groups with their members.
 */
async function twoGroupsReadEverything(bootstrap: string, records: number): Promise<void> {
  const admin: Admin = new Kafka({
    clientId: 'test-admin',
    brokers: [bootstrap],
    logLevel: logLevel.NOTHING,
  }).admin();
  await admin.connect();
  const topic = `groups-${Math.random().toString(16).slice(2, 8)}`;
  const driver = nativeDriver();
  const groups: { id: string; clients: LoadClients }[] = [];
  try {
    await admin.createTopics({ topics: [{ topic, numPartitions: 4, replicationFactor: 1 }] });
    for (const id of [`${topic}-g0`, `${topic}-g1`]) {
      const clients = await driver.startConsumers({
        bootstrap: [bootstrap],
        topics: [topic],
        clientId: 'native-c',
        groupId: id,
        count: 2,
        fromBeginning: false,
        properties: {},
      });
      groups.push({ id, clients });
    }
    // Another client sees each group as a stable consumer group of two range-assigned members
    // that together hold every partition once.
    for (const { id } of groups) {
      const described = await eventually(`${id} stable with two members`, async () => {
        const {
          groups: [g],
        } = await admin.describeGroups([id]);
        return g?.state === 'Stable' && g.members.length === 2 ? g : undefined;
      });
      expect(described.protocolType).toBe('consumer');
      expect(described.protocol).toBe('range');
      const partitions = described.members.flatMap((m) => {
        const assignment = AssignerProtocol.MemberAssignment.decode(m.memberAssignment);
        const meta = AssignerProtocol.MemberMetadata.decode(m.memberMetadata);
        expect(meta?.topics).toEqual([topic]);
        return assignment?.assignment[topic] ?? [];
      });
      expect(partitions.sort()).toEqual([0, 1, 2, 3]);
    }
    const producers = await driver.startProducers({
      bootstrap: [bootstrap],
      topics: [topic],
      clientId: 'native-p',
      config: parseScenario({ producers: { count: 1, messageSize: 100, keys: 'roundRobin:16' } }).producers,
      ratePerSec: null,
      recordsEach: [records],
      durationMs: null,
    });
    producers.start();
    await producers.finished;
    expect(producers.lastError()).toBeNull();
    expect((await producers.take()).records).toBe(records);
    await producers.stop();
    const read = [0, 0];
    await eventually('both groups read every record', async () => {
      for (const [i, g] of groups.entries()) read[i] = (read[i] ?? 0) + (await g.clients.take()).records;
      return read.every((n) => n >= records) ? true : undefined;
    });
    await new Promise((r) => setTimeout(r, 500));
    for (const [i, g] of groups.entries()) read[i] = (read[i] ?? 0) + (await g.clients.take()).records;
    expect(read).toEqual([records, records]);
    for (const g of groups) {
      expect(g.clients.lastError()).toBeNull();
      await g.clients.stop();
    }
    // Stopping committed where each member got to: every record, for each group.
    for (const { id } of groups) {
      const [offsets] = await admin.fetchOffsets({ groupId: id, topics: [topic] });
      expect(offsets?.partitions.reduce((n, p) => n + Number(p.offset), 0)).toBe(records);
    }
  } finally {
    await Promise.allSettled(groups.map((g) => g.clients.stop()));
    await admin.disconnect();
  }
}

describe('native consumers in consumer groups', () => {
  it('two groups of two on the bundled broker each read every record, and kafkajs sees them', async () => {
    const broker = await startBroker({ dataDir: path.join(workDir, 'broker'), port: 0 });
    try {
      await twoGroupsReadEverything(`127.0.0.1:${broker.port}`, 20_000);
    } finally {
      await broker.stop();
    }
  }, 120_000);

  it('runs a native scenario with two groups of two consumers on the bundled target', async () => {
    const outcome = await run({
      driver: 'native',
      records: 20_000,
      topics: { partitions: 4 },
      producers: { count: 1, messageSize: 100 },
      consumers: { count: 2, groups: 2 },
    });
    expect(outcome.status, String(outcome.error)).toBe('completed');
    expect(outcome.summary?.produced.records).toBe(20_000);
    const consumed = outcome.samples.reduce((n, s) => n + s.consumedRecords, 0);
    expect(consumed).toBe(40_000);
    expect(outcome.samples.at(-1)?.backlog).toBe(0);
  }, 120_000);

  it('refuses an empty group id', async () => {
    await expect(
      NativeConsumer.start({ bootstrap: ['127.0.0.1:1'], topics: ['t'], fromBeginning: true, groupId: '' }),
    ).rejects.toThrow(/groupId/);
  });

  describe('on a managed Apache Kafka', () => {
    let kafka: ApacheKafka | undefined;
    beforeAll(async () => {
      kafka = await startApacheKafka({ dataDir: path.join(workDir, 'kafka') });
    }, 300_000);
    afterAll(async () => {
      await kafka?.stop();
    });

    it('two groups of two native members each read every record, and kafkajs sees them', async () => {
      await twoGroupsReadEverything(kafka!.bootstrap, 20_000);
    }, 180_000);
  });
});

describe('native producer value sizes', () => {
  it('draws sizes from a distribution: mean value bytes close to its mean', async () => {
    const outcome = await run({
      driver: 'native',
      records: 50_000,
      topics: { partitions: 2 },
      producers: { count: 2, messageSize: { distribution: 'exponential', mean: 300, max: 5000 } },
      consumers: { count: 1 },
    });
    expect(outcome.status, String(outcome.error)).toBe('completed');
    const produced = outcome.samples.reduce((n, s) => n + s.producedRecords, 0);
    const bytes = outcome.samples.reduce((n, s) => n + s.producedBytes, 0);
    expect(produced).toBe(50_000);
    // The clamp at max trims the tail a little; the mean of 50,000 draws is within a few percent.
    expect(Math.abs(bytes / produced - 300) / 300).toBeLessThan(0.05);
    const consumedBytes = outcome.samples.reduce((n, s) => n + s.consumedBytes, 0);
    expect(consumedBytes).toBe(bytes);
  }, 120_000);

  it('sends a payload file as every value, stamped with the send time like the kafkajs driver', async () => {
    const file = path.join(workDir, 'payload.json');
    const content = Buffer.from(JSON.stringify({ order: 42, items: ['a', 'b', 'c'], note: 'x'.repeat(200) }));
    await writeFile(file, content);
    const broker = await startBroker({ dataDir: path.join(workDir, 'payload-broker'), port: 0 });
    const bootstrap = `127.0.0.1:${broker.port}`;
    const kafka = new Kafka({ clientId: 'test', brokers: [bootstrap], logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    const consumer = kafka.consumer({ groupId: 'payload-reader', maxWaitTimeInMs: 100 });
    try {
      await admin.connect();
      await admin.createTopics({ topics: [{ topic: 'payload', numPartitions: 2 }] });
      const driver = nativeDriver();
      const producers = await driver.startProducers({
        bootstrap: [bootstrap],
        topics: ['payload'],
        clientId: 'native-p',
        config: parseScenario({
          driver: 'native',
          producers: { count: 1, messageSize: { payloadFile: file } },
        }).producers,
        ratePerSec: null,
        recordsEach: [500],
        durationMs: null,
      });
      producers.start();
      await producers.finished;
      const produced = await producers.take();
      await producers.stop();
      expect(produced.records).toBe(500);
      expect(produced.valueBytes).toBe(500 * content.length);
      const values: Buffer[] = [];
      await consumer.connect();
      await consumer.subscribe({ topics: ['payload'], fromBeginning: true });
      await consumer.run({
        eachMessage: async ({ message }) => {
          if (message.value) values.push(message.value);
        },
      });
      await eventually('every value read back', async () => (values.length >= 500 ? true : undefined));
      expect(values).toHaveLength(500);
      const now = Date.now() * 1000;
      for (const value of values) {
        // The file's content, its first 8 bytes carrying the send time (µs, float64 LE).
        expect(value.length).toBe(content.length);
        expect(value.subarray(8).equals(content.subarray(8))).toBe(true);
        expect(Math.abs(now - value.readDoubleLE(0))).toBeLessThan(60e6);
      }
    } finally {
      await consumer.disconnect();
      await admin.disconnect();
      await broker.stop();
    }
  }, 120_000);
});
