// The addon's listener security (issue 16, item 2): a cluster started with `security` asks kafkajs
// for SCRAM-SHA-512 on every node, refuses a wrong password, and its followers still replicate
// acks=all writes (they fetch over a plaintext port of their own).
import { Kafka, logLevel } from 'kafkajs';
import { afterEach, describe, expect, it } from 'vitest';
import { type ClusterHandle, startCluster } from '../index.js';
import { tempDir } from './helpers.js';

let cluster: ClusterHandle | undefined;
let cleanup: (() => void) | undefined;

afterEach(async () => {
  await cluster?.stop();
  cluster = undefined;
  cleanup?.();
  cleanup = undefined;
});

function client(bootstrap: string, password: string): Kafka {
  return new Kafka({
    brokers: bootstrap.split(','),
    logLevel: logLevel.NOTHING,
    sasl: { mechanism: 'scram-sha-512', username: 'bench', password },
    retry: { retries: 20, initialRetryTime: 50, maxRetryTime: 300 },
  });
}

describe('bundled cluster with SASL', () => {
  it('authenticates SCRAM-SHA-512 clients and replicates acks=all writes to every replica', async () => {
    const dir = tempDir('security');
    cleanup = dir.cleanup;
    cluster = await startCluster({
      nodes: 3,
      dataDir: dir.path,
      security: { saslMechanisms: ['scram-sha-512'], users: ['bench:s3cret'] },
    });
    const kafka = client(cluster.bootstrap, 's3cret');
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({
      waitForLeaders: true,
      topics: [{ topic: 'replicated', numPartitions: 3, replicationFactor: 3 }],
    });
    await admin.disconnect();
    const producer = kafka.producer();
    await producer.connect();
    const messages = Array.from({ length: 30 }, (_, i) => ({ value: `m${i}` }));
    await producer.send({ topic: 'replicated', acks: -1, messages });
    await producer.disconnect();
    const replicated = (await cluster.stats()).reduce((sum, node) => sum + node.stats.replicatedBytes, 0);
    expect(replicated).toBeGreaterThan(0);

    const refused = client(cluster.bootstrap, 'wrong').admin();
    await expect(refused.connect()).rejects.toThrow(/SASL|authentication/i);
  }, 60_000);
});
