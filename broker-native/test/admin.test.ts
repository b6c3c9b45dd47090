import { type BrokerHandle, startBroker } from '@kbench/broker-native';
import { ConfigResourceTypes, Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from './helpers.js';

let broker: BrokerHandle;
let kafka: Kafka;
const dir = tempDir('admin');

beforeAll(async () => {
  broker = await startBroker({ dataDir: dir.path, port: 0 });
  kafka = new Kafka({
    clientId: 'admin-test',
    brokers: [`${broker.host}:${broker.port}`],
    logLevel: logLevel.NOTHING,
    retry: { retries: 2 },
  });
});

afterAll(async () => {
  await broker.stop();
  dir.cleanup();
});

describe('kafkajs admin and idempotent producer', () => {
  it('idempotent producer writes each message once', async () => {
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'idem', numPartitions: 1 }] });
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    for (let i = 0; i < 5; i++) {
      await producer.send({ topic: 'idem', acks: -1, messages: [{ value: `v${i}` }] });
    }
    await producer.disconnect();
    const offsets = await admin.fetchTopicOffsets('idem');
    expect(offsets[0]?.high).toBe('5');
    await admin.disconnect();
  });

  it('deleteTopics removes a topic', async () => {
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'doomed', numPartitions: 2 }] });
    await admin.deleteTopics({ topics: ['doomed'] });
    expect(await admin.listTopics()).not.toContain('doomed');
    await admin.disconnect();
  });

  it('createPartitions grows a topic', async () => {
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'grow', numPartitions: 1 }] });
    await admin.createPartitions({ topicPartitions: [{ topic: 'grow', count: 3 }] });
    const meta = await admin.fetchTopicMetadata({ topics: ['grow'] });
    expect(meta.topics[0]?.partitions).toHaveLength(3);
    await admin.disconnect();
  });

  it('alterConfigs then describeConfigs reports the override', async () => {
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'cfg', numPartitions: 1 }] });
    await admin.alterConfigs({
      validateOnly: false,
      resources: [
        {
          type: ConfigResourceTypes.TOPIC,
          name: 'cfg',
          configEntries: [{ name: 'retention.ms', value: '60000' }],
        },
      ],
    });
    const described = await admin.describeConfigs({
      includeSynonyms: false,
      resources: [{ type: ConfigResourceTypes.TOPIC, name: 'cfg', configNames: ['retention.ms'] }],
    });
    const entry = described.resources[0]?.configEntries[0];
    expect(entry?.configValue).toBe('60000');
    expect(entry?.isDefault).toBe(false);
    await admin.disconnect();
  });
});
