import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from './helpers.js';

const BINARY = join(import.meta.dirname, '..', 'target', 'release', 'kbench-broker');
const TOPIC = 'crash';

/** Starts the binary on `dataDir` and resolves once it prints its address. */
async function startBinary(
  dataDir: string,
  extra: string[] = [],
): Promise<{ child: ChildProcess; port: number }> {
  if (!existsSync(BINARY)) throw new Error(`${BINARY} is missing: run npm run build first`);
  const child = spawn(BINARY, ['--port', '0', '--data-dir', dataDir, ...extra], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  const [line] = (await once(lines, 'line')) as [string];
  const match = /^node 1 127\.0\.0\.1:(\d+) pid \d+$/.exec(line);
  if (!match) throw new Error(`unexpected first line: ${line}`);
  return { child, port: Number(match[1]) };
}

function kafka(port: number): Kafka {
  return new Kafka({
    brokers: [`127.0.0.1:${port}`],
    logLevel: logLevel.NOTHING,
    retry: { retries: 0 },
  });
}

/** One producer of `crashMidProduce`: its acks and its n-th batch (values, and a partition if named). */
interface Sender {
  acks: number;
  batch: (n: number) => { partition?: number; values: string[] };
}

/**
 * Connects one kafkajs producer per sender to the broker on `port`; each sends batch after batch
 * until 40 batches in all are acknowledged, when the broker is killed with SIGKILL, or until a send
 * fails. Returns every acknowledged record's value by `partition:offset`.
 */
async function crashMidProduce(
  broker: { child: ChildProcess; port: number },
  senders: Sender[],
): Promise<Map<string, string>> {
  const acked = new Map<string, string>();
  let sent = 0;
  let stop = false;
  const producers = await Promise.all(
    senders.map(async () => {
      const producer = kafka(broker.port).producer({ allowAutoTopicCreation: false });
      await producer.connect();
      return producer;
    }),
  );
  const loops = producers.map(async (producer, p) => {
    const { acks, batch } = senders[p]!;
    for (let n = 0; !stop; n++) {
      const { partition, values } = batch(n);
      try {
        const [meta] = await producer.send({
          topic: TOPIC,
          acks,
          messages: values.map((value) => ({ value, partition })),
        });
        const base = Number(meta!.baseOffset);
        values.forEach((value, i) => {
          acked.set(`${meta!.partition}:${base + i}`, value);
        });
        sent++;
      } catch {
        return;
      }
    }
  });
  while (sent < 40) await new Promise((resolve) => setTimeout(resolve, 10));
  broker.child.kill('SIGKILL');
  await once(broker.child, 'exit');
  stop = true;
  await Promise.all(loops);
  await Promise.all(producers.map((producer) => producer.disconnect().catch(() => {})));
  return acked;
}

/**
 * Reads the whole topic back from the broker on `port`: each record's value by `partition:offset`, how
 * often each value was seen, each partition's high watermark, and whether every partition came in
 * offset order without gaps.
 */
async function readBack(port: number): Promise<{
  seen: Map<string, string>;
  counts: Map<string, number>;
  highs: number[];
  inOrder: boolean;
}> {
  const client = kafka(port);
  const admin = client.admin();
  await admin.connect();
  const offsets = await admin.fetchTopicOffsets(TOPIC);
  await admin.disconnect();
  const highs = offsets.sort((a, b) => a.partition - b.partition).map((o) => Number(o.high));
  const total = highs.reduce((sum, high) => sum + high, 0);
  const consumer = client.consumer({ groupId: 'after-crash', maxBytes: 1 << 20 });
  const seen = new Map<string, string>();
  const counts = new Map<string, number>();
  const last = new Map<number, number>();
  let inOrder = true;
  await consumer.connect();
  await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
  const finished = new Promise<void>((resolve) => {
    void consumer.run({
      eachMessage: async ({ partition, message }) => {
        const offset = Number(message.offset);
        if (offset !== (last.get(partition) ?? -1) + 1) inOrder = false;
        last.set(partition, offset);
        const value = message.value?.toString() ?? '';
        seen.set(`${partition}:${offset}`, value);
        counts.set(value, (counts.get(value) ?? 0) + 1);
        if (seen.size === total) resolve();
      },
    });
  });
  await finished;
  await consumer.disconnect();
  return { seen, counts, highs, inOrder };
}

/** CRC-32C (Castagnoli), as record batches use. */
const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32c(bytes: Buffer): number {
  let crc = 0xffffffff;
  for (const b of bytes) crc = CRC_TABLE[(crc ^ b) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** Walks a segment file batch by batch: each whole, CRC valid, offsets in order. */
function checkSegment(path: string): number {
  const bytes = readFileSync(path);
  let pos = 0;
  let batches = 0;
  let expectedOffset = -1;
  while (pos < bytes.length) {
    expect(pos + 61).toBeLessThanOrEqual(bytes.length);
    const baseOffset = Number(bytes.readBigInt64BE(pos));
    const size = 12 + bytes.readInt32BE(pos + 8);
    expect(pos + size).toBeLessThanOrEqual(bytes.length);
    expect(bytes.readUInt32BE(pos + 17)).toBe(crc32c(bytes.subarray(pos + 21, pos + size)));
    if (expectedOffset >= 0) expect(baseOffset).toBe(expectedOffset);
    expectedOffset = baseOffset + bytes.readInt32BE(pos + 23) + 1;
    pos += size;
    batches++;
  }
  return batches;
}

describe('kill -9 of kbench-broker mid-produce', () => {
  const dir = tempDir('crash');
  let child: ChildProcess | undefined;

  afterAll(() => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    dir.cleanup();
  });

  it('keeps every acked record, in order, and serves only whole batches after restart', async () => {
    const first = await startBinary(dir.path);
    child = first.child;
    const admin = kafka(first.port).admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 1 }] });
    await admin.disconnect();

    // Three producers send batches of 50 records of ~1 KiB with acks=1 until
    // the broker dies; each ack names the batch's base offset.
    const acked = await crashMidProduce(
      first,
      [0, 1, 2].map((p) => ({
        acks: 1,
        batch: (n: number) => ({
          values: Array.from({ length: 50 }, (_, i) => `p${p}-b${n}-r${i}-${'x'.repeat(1000)}`),
        }),
      })),
    );
    expect(acked.size).toBeGreaterThanOrEqual(40 * 50);

    const second = await startBinary(dir.path);
    child = second.child;
    const { seen, highs, inOrder } = await readBack(second.port);
    const lastAcked = Math.max(...[...acked.keys()].map((at) => Number(at.split(':')[1])));
    expect(highs[0]!).toBeGreaterThanOrEqual(lastAcked + 1);
    expect(inOrder).toBe(true);
    const missing = [...acked].filter(([at, value]) => seen.get(at) !== value);
    expect(missing.length).toBe(0);

    second.child.kill('SIGTERM');
    expect((await once(second.child, 'exit'))[0]).toBe(0);
    const partitionDir = join(dir.path, `${TOPIC}-0`);
    const segments = readdirSync(partitionDir).filter((f) => f.endsWith('.log'));
    const batches = segments.reduce((sum, f) => sum + checkSegment(join(partitionDir, f)), 0);
    expect(batches).toBeGreaterThanOrEqual(40);
  });
});

describe('kill -9 of kbench-broker --fsync batch mid-produce', () => {
  const dir = tempDir('crash-batch');
  let child: ChildProcess | undefined;

  afterAll(() => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    dir.cleanup();
  });

  it('keeps every record acknowledged with acks=1 or acks=all, exactly once and in order', async () => {
    const args = ['--fsync', 'batch'];
    const first = await startBinary(dir.path, args);
    child = first.child;
    const admin = kafka(first.port).admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 2 }] });
    await admin.disconnect();

    // Four producers (acks=1 and acks=all, two each, over both
    // partitions) send batches of 20 small records until the broker dies.
    const acked = await crashMidProduce(
      first,
      [1, -1, 1, -1].map((acks, p) => ({
        acks,
        batch: (n: number) => ({
          partition: (p + n) % 2,
          values: Array.from({ length: 20 }, (_, i) => `p${p}-b${n}-r${i}-${'x'.repeat(200)}`),
        }),
      })),
    );
    expect(acked.size).toBeGreaterThanOrEqual(40 * 20);

    const second = await startBinary(dir.path, args);
    child = second.child;
    const { seen, counts, inOrder } = await readBack(second.port);
    expect(inOrder).toBe(true);
    const missing = [...acked].filter(([at, value]) => seen.get(at) !== value);
    expect(missing).toEqual([]);
    const twice = [...acked.values()].filter((value) => counts.get(value) !== 1);
    expect(twice).toEqual([]);

    second.child.kill('SIGTERM');
    expect((await once(second.child, 'exit'))[0]).toBe(0);
  });
});
