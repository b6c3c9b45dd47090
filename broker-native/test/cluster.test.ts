// The bundled cluster in process (startCluster), driven by kafkajs: metadata lists every node and
// spreads leaders, acks=all waits for the ISR and honours min.insync.replicas, and leadership moves
// off a killed or paused node and the node rejoins the ISR after a restart.
import { Kafka, logLevel } from 'kafkajs';
import { afterEach, describe, expect, it } from 'vitest';
import { type ClusterHandle, startCluster } from '../index.js';
import { eventually, tempDir } from './helpers.js';

let cluster: ClusterHandle | undefined;
let cleanup: (() => void) | undefined;

afterEach(async () => {
  await cluster?.stop();
  cluster = undefined;
  cleanup?.();
  cleanup = undefined;
});

async function start(nodes: number): Promise<{ cluster: ClusterHandle; kafka: Kafka }> {
  const dir = tempDir('cluster');
  cleanup = dir.cleanup;
  cluster = await startCluster({ nodes, dataDir: dir.path, sessionTimeoutMs: 1000, replicaLagMs: 2000 });
  const kafka = new Kafka({
    brokers: cluster.bootstrap.split(','),
    logLevel: logLevel.NOTHING,
    retry: { retries: 30, initialRetryTime: 50, maxRetryTime: 300 },
  });
  return { cluster, kafka };
}

async function partitionsOf(kafka: Kafka, topic: string) {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
    return metadata.topics[0]!.partitions.sort((a, b) => a.partitionId - b.partitionId);
  } finally {
    await admin.disconnect();
  }
}

async function createTopic(kafka: Kafka, topic: string, partitions: number, rf: number, minIsr = 1) {
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    waitForLeaders: true,
    topics: [
      {
        topic,
        numPartitions: partitions,
        replicationFactor: rf,
        configEntries: [{ name: 'min.insync.replicas', value: String(minIsr) }],
      },
    ],
  });
  await admin.disconnect();
}

describe('bundled cluster', () => {
  it('lists every node, spreads leaders and replicates acks=all writes to every replica', async () => {
    const { cluster, kafka } = await start(3);
    const nodes = await cluster.nodes();
    expect(nodes.map((n) => n.id)).toEqual([1, 2, 3]);
    await createTopic(kafka, 'spread', 3, 3, 2);
    const partitions = await partitionsOf(kafka, 'spread');
    expect(new Set(partitions.map((p) => p.leader))).toEqual(new Set([1, 2, 3]));
    for (const p of partitions) {
      expect(p.replicas.sort()).toEqual([1, 2, 3]);
      expect(p.isr.sort()).toEqual([1, 2, 3]);
    }
    const producer = kafka.producer();
    await producer.connect();
    const messages = Array.from({ length: 300 }, (_, i) => ({ partition: i % 3, value: `m${i}` }));
    const acks = await producer.send({ topic: 'spread', acks: -1, messages });
    expect(acks.every((a) => a.errorCode === 0)).toBe(true);
    await producer.disconnect();
    // Every node's stats show replicated bytes arriving (it follows two partitions).
    const stats = await cluster.stats();
    expect(stats).toHaveLength(3);
    for (const s of stats) expect(s.stats.replicatedBytes).toBeGreaterThan(0);
  });

  it('moves leadership off a killed node and takes it back into the ISR after a restart', async () => {
    const { cluster, kafka } = await start(3);
    await createTopic(kafka, 'failover', 1, 3, 2);
    const before = (await partitionsOf(kafka, 'failover'))[0]!.leader;
    await cluster.kill(before);
    const after = await eventually('a new leader', async () => {
      const leader = await cluster.leaderOf('failover', 0);
      return leader !== null && leader !== before ? leader : undefined;
    });
    expect([1, 2, 3]).toContain(after);
    const producer = kafka.producer();
    await producer.connect();
    const [ack] = await producer.send({ topic: 'failover', acks: -1, messages: [{ value: 'after-kill' }] });
    expect(ack?.errorCode).toBe(0);
    await cluster.restart(before);
    await eventually('the restarted node back in the ISR', async () => {
      const p = (await partitionsOf(kafka, 'failover'))[0]!;
      return p.isr.length === 3 ? true : undefined;
    });
    const [again] = await producer.send({
      topic: 'failover',
      acks: -1,
      messages: [{ value: 'after-restart' }],
    });
    expect(again?.errorCode).toBe(0);
    await producer.disconnect();
  });

  it('a pause past the session timeout moves leadership too', async () => {
    const { cluster, kafka } = await start(3);
    await createTopic(kafka, 'paused', 1, 3, 1);
    const before = (await cluster.leaderOf('paused', 0))!;
    await cluster.pause(before, 2500);
    const after = await eventually('a new leader', async () => {
      const leader = await cluster.leaderOf('paused', 0);
      return leader !== null && leader !== before ? leader : undefined;
    });
    expect(after).not.toBe(before);
  });

  it('acks=all is refused with NOT_ENOUGH_REPLICAS when the ISR is below min.insync.replicas', async () => {
    const { cluster, kafka } = await start(3);
    await createTopic(kafka, 'strict', 1, 3, 3);
    const leader = (await cluster.leaderOf('strict', 0))!;
    const follower = [1, 2, 3].find((n) => n !== leader)!;
    await cluster.kill(follower);
    await eventually('the ISR to shrink', async () => {
      const p = (await partitionsOf(kafka, 'strict'))[0]!;
      return p.isr.length === 2 ? true : undefined;
    });
    const strict = new Kafka({
      brokers: cluster.bootstrap.split(','),
      logLevel: logLevel.NOTHING,
      retry: { retries: 0 },
    });
    const producer = strict.producer();
    await producer.connect();
    await expect(producer.send({ topic: 'strict', acks: -1, messages: [{ value: 'x' }] })).rejects.toThrow(
      /replicas/i,
    );
    // acks=1 still goes through.
    const [ack] = await producer.send({ topic: 'strict', acks: 1, messages: [{ value: 'y' }] });
    expect(ack?.errorCode).toBe(0);
    await producer.disconnect();
  });
});
