// A linearizability-style check of the bundled cluster's replication: an idempotent kafkajs producer
// writes with acks=all to a 3-node cluster (RF 3, min.insync.replicas 2, each node its own process)
// while the leader of partition 0 is killed with SIGKILL and restarted, again and again. Afterwards
// everything is read back: every acknowledged record must be there, exactly once, and in the order it
// was acknowledged within its partition. The second case does the same with fsync per batch.
// A kill -9 leaves the page cache alone, so these cases check that no acknowledged record is lost by the
// processes, not that it had reached the disk. That rule (acks=1 once the leader's journal has the batch on
// disk, acks=all and the high watermark once every in-sync replica's has) is checked on the running binary by
// broker-native/test/durable-ack.test.ts, from an strace of its writes, fdatasyncs and responses (single
// node and a 3-process cluster), and its bookkeeping by kbench-broker-core's unit tests
// (storage/partition/durability.rs, cluster/replica.rs).
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type BundledCluster, startBundledCluster } from '@kbench/broker-launcher';
import { type Admin, Kafka, logLevel } from 'kafkajs';
import { afterEach, describe, expect, it } from 'vitest';

const TOPIC = 'checked';
const PARTITIONS = 3;
const BATCH = 25;

let cluster: BundledCluster | undefined;
let dataDir: string | undefined;

afterEach(async () => {
  await cluster?.stop();
  cluster = undefined;
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
  dataDir = undefined;
});

function client(bootstrap: string): Kafka {
  return new Kafka({
    clientId: 'kbench-checker',
    brokers: bootstrap.split(','),
    logLevel: logLevel.NOTHING,
    retry: { retries: 60, initialRetryTime: 50, maxRetryTime: 400 },
  });
}

async function leaderOf(admin: Admin, partition: number): Promise<number> {
  const metadata = await admin.fetchTopicMetadata({ topics: [TOPIC] });
  const p = metadata.topics[0]?.partitions.find((x) => x.partitionId === partition);
  if (!p || p.leader < 0) throw new Error(`partition ${partition} has no leader`);
  return p.leader;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Outcome {
  kills: number;
  acked: number;
  failedSends: number;
  read: number;
}

/** Produces while killing and restarting partition 0's leader `rounds` times; then checks the log. */
async function produceThroughKills(fsync: string, rounds: number): Promise<Outcome> {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'kbench-checker-'));
  cluster = await startBundledCluster({
    dataDir,
    nodes: 3,
    fsync,
    sessionTimeoutMs: 1000,
    replicaLagMs: 2000,
  });
  const kafka = client(cluster.bootstrap);
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    waitForLeaders: true,
    topics: [
      {
        topic: TOPIC,
        numPartitions: PARTITIONS,
        replicationFactor: 3,
        configEntries: [{ name: 'min.insync.replicas', value: '2' }],
      },
    ],
  });
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();

  // Acknowledged values per partition, in acknowledgement order.
  const acked: string[][] = Array.from({ length: PARTITIONS }, () => []);
  let failedSends = 0;
  const debugAcks: string[] = [];
  let producing = true;
  let next = 0;
  let sends = 0;
  const load = (async () => {
    while (producing) {
      // One partition per send: kafkajs keeps a send's per-broker responses across retries, so a
      // partition whose leader moves to a broker that already answered for another partition of
      // the same send would be skipped silently (the send resolves without producing it).
      const partition = sends++ % PARTITIONS;
      const messages = Array.from({ length: BATCH }, () => ({ partition, value: String(next++) }));
      try {
        const res = await producer.send({ topic: TOPIC, acks: -1, timeout: 5000, messages });
        for (const m of messages) acked[m.partition]?.push(m.value);
        if (process.env.CHECKER_DEBUG)
          for (const r of res)
            if (r.partition === 0)
              debugAcks.push(
                `${r.baseOffset}:${messages.find((m) => m.partition === 0)?.value}@${Date.now() % 100000}`,
              );
      } catch {
        // Not acknowledged: each record may or may not be in the log, but at most once.
        failedSends++;
      }
    }
  })();

  let kills = 0;
  for (let round = 0; round < rounds; round++) {
    await sleep(1500);
    const leader = await leaderOf(admin, 0);
    await cluster.kill(leader);
    kills++;
    await sleep(2000); // past the session timeout: leadership moves
    await cluster.restart(leader);
  }
  await sleep(1500);
  producing = false;
  await load;
  await producer.disconnect();

  // Read everything back.
  const ends = await admin.fetchTopicOffsets(TOPIC);
  const total = ends.reduce((sum, p) => sum + Number(p.high), 0);
  const seen: string[][] = Array.from({ length: PARTITIONS }, () => []);
  const consumer = kafka.consumer({ groupId: `checker-${Date.now()}`, maxWaitTimeInMs: 200 });
  await consumer.connect();
  await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
  let read = 0;
  const debugLog: string[] = [];
  const done = new Promise<void>((resolve) => {
    void consumer.run({
      eachMessage: async ({ partition, message }) => {
        seen[partition]?.push(message.value?.toString() ?? '');
        if (process.env.CHECKER_DEBUG && partition === 0) debugLog.push(`${message.offset}:${message.value}`);
        if (++read >= total) resolve();
      },
    });
  });
  await Promise.race([done, sleep(60_000)]);
  await consumer.disconnect();
  await admin.disconnect();

  if (process.env.CHECKER_DEBUG) {
    const fs = await import('node:fs');
    fs.writeFileSync('/tmp/acks.txt', debugAcks.join('\n'));
    fs.writeFileSync('/tmp/log0.txt', debugLog.join('\n'));
  }
  expect(read).toBe(total);
  for (let p = 0; p < PARTITIONS; p++) {
    const log = seen[p] ?? [];
    // No record twice (the producer is idempotent).
    expect(new Set(log).size).toBe(log.length);
    // Every acknowledged record, in acknowledgement order.
    const position = new Map(log.map((v, i) => [v, i]));
    let last = -1;
    for (const value of acked[p] ?? []) {
      const at = position.get(value);
      expect(at, `acknowledged record ${value} of partition ${p} is missing`).toBeDefined();
      expect(at!).toBeGreaterThan(last);
      last = at!;
    }
  }
  const ackedCount = acked.reduce((sum, a) => sum + a.length, 0);
  return { kills, acked: ackedCount, failedSends, read };
}

describe('replication under leader kills', () => {
  it('acks=all to RF 3 with min ISR 2 loses, duplicates and reorders nothing acknowledged', async () => {
    const outcome = await produceThroughKills('none', 4);
    console.log(`checker (fsync none): ${JSON.stringify(outcome)}`);
    expect(outcome.kills).toBe(4);
    expect(outcome.acked).toBeGreaterThan(1000);
  });

  it('with fsync per batch, kill -9 and restart lose no acknowledged record', async () => {
    const outcome = await produceThroughKills('batch', 2);
    console.log(`checker (fsync batch): ${JSON.stringify(outcome)}`);
    expect(outcome.kills).toBe(2);
    expect(outcome.acked).toBeGreaterThan(500);
  });
});
