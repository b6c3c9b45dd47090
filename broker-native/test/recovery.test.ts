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
async function startBinary(dataDir: string): Promise<{ child: ChildProcess; port: number }> {
  if (!existsSync(BINARY)) throw new Error(`${BINARY} is missing: run npm run build first`);
  const child = spawn(BINARY, ['--port', '0', '--data-dir', dataDir], {
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
    const acked = new Map<number, string>();
    let stop = false;
    let sent = 0;
    const producers = await Promise.all(
      [0, 1, 2].map(async (p) => {
        const producer = kafka(first.port).producer({ allowAutoTopicCreation: false });
        await producer.connect();
        return { p, producer };
      }),
    );
    const loops = producers.map(async ({ p, producer }) => {
      for (let n = 0; !stop; n++) {
        const values = Array.from({ length: 50 }, (_, i) => `p${p}-b${n}-r${i}-${'x'.repeat(1000)}`);
        try {
          const [meta] = await producer.send({
            topic: TOPIC,
            acks: 1,
            messages: values.map((value) => ({ value })),
          });
          const base = Number(meta!.baseOffset);
          values.forEach((value, i) => {
            acked.set(base + i, value);
          });
          sent++;
        } catch {
          return;
        }
      }
    });
    while (sent < 40) await new Promise((resolve) => setTimeout(resolve, 10));
    first.child.kill('SIGKILL');
    await once(first.child, 'exit');
    stop = true;
    await Promise.all(loops);
    await Promise.all(producers.map(({ producer }) => producer.disconnect().catch(() => {})));
    expect(acked.size).toBeGreaterThanOrEqual(40 * 50);

    const second = await startBinary(dir.path);
    child = second.child;
    const client = kafka(second.port);
    const admin2 = client.admin();
    await admin2.connect();
    const [offsets] = await admin2.fetchTopicOffsets(TOPIC);
    await admin2.disconnect();
    const high = Number(offsets!.high);
    expect(high).toBeGreaterThanOrEqual(Math.max(...acked.keys()) + 1);

    const consumer = client.consumer({ groupId: 'after-crash', maxBytes: 1 << 20 });
    const seen = new Map<number, string>();
    let lastOffset = -1;
    let inOrder = true;
    await consumer.connect();
    await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
    const finished = new Promise<void>((resolve) => {
      void consumer.run({
        eachMessage: async ({ message }) => {
          const offset = Number(message.offset);
          if (offset !== lastOffset + 1) inOrder = false;
          lastOffset = offset;
          seen.set(offset, message.value?.toString() ?? '');
          if (seen.size === high) resolve();
        },
      });
    });
    await finished;
    await consumer.disconnect();

    expect(inOrder).toBe(true);
    const missing = [...acked].filter(([offset, value]) => seen.get(offset) !== value);
    expect(missing.length).toBe(0);

    second.child.kill('SIGTERM');
    expect((await once(second.child, 'exit'))[0]).toBe(0);
    const partitionDir = join(dir.path, `${TOPIC}-0`);
    const segments = readdirSync(partitionDir).filter((f) => f.endsWith('.log'));
    const batches = segments.reduce((sum, f) => sum + checkSegment(join(partitionDir, f)), 0);
    expect(batches).toBeGreaterThanOrEqual(40);
  });
});
