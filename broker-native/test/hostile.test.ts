// Hostile clients (issue 13): requests that claim absurd sizes, partition counts no node can host,
// connections that hold a slot and never speak. Every case runs against the standalone binary and
// against the addon inside a child Node process; after every case the broker must still answer
// ApiVersions on a new connection and serve a real client (kafkajs).
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmdirSync } from 'node:fs';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrokerLimits } from '@kbench/broker-native';
import { type Admin, Kafka, logLevel } from 'kafkajs';
import { afterEach, describe, expect, it, type TestContext } from 'vitest';
import {
  type BrokerProcess,
  handshakesInProgress,
  launchBinary,
  launchInNode,
  memoryOf,
  sleep,
} from './broker-process.js';
import { eventually, tempDir } from './helpers.js';
import {
  API_VERSIONS_CORRELATION_ID,
  apiVersionsRequest,
  Body,
  closedWithin,
  connect,
  createTopicRequest,
  exchange,
  HUGE_ARRAY_COUNT,
  HUGE_COMPACT_COUNT,
  readApiVersions,
  readCreateTopics,
  requestFrame,
  sendHostile,
} from './raw-frames.js';

const INVALID_PARTITIONS = 37;
const POLICY_VIOLATION = 44;
const MiB = 1024 * 1024;

const TARGETS = [
  { name: 'standalone kbench-broker', launch: launchBinary },
  { name: 'startBroker in a child Node process', launch: launchInNode },
];

/** Rejects with `what` if `work` takes longer than `ms`: a hang becomes a failure, not a stuck run. */
async function withDeadline<T>(ms: number, what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no result within ${ms / 1000} s`)), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

function kafkaClient(port: number, clientId: string): Kafka {
  return new Kafka({
    clientId,
    brokers: [`127.0.0.1:${port}`],
    logLevel: logLevel.NOTHING,
    connectionTimeout: 5000,
    requestTimeout: 30_000,
    retry: { retries: 0 },
  });
}

let probeTopics = 0;

/** kafkajs creates a topic, produces three records and reads them back in a consumer group. */
async function produceAndConsume(port: number): Promise<void> {
  const topic = `alive-${++probeTopics}`;
  const kafka = new Kafka({
    clientId: 'hostile-alive',
    brokers: [`127.0.0.1:${port}`],
    logLevel: logLevel.NOTHING,
    retry: { retries: 3 },
  });
  const admin = kafka.admin();
  const producer = kafka.producer();
  const consumer = kafka.consumer({ groupId: topic, sessionTimeout: 10_000, heartbeatInterval: 500 });
  const values = ['one', 'two', 'three'];
  const seen: string[] = [];
  const roundTrip = async () => {
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] });
    await producer.connect();
    await producer.send({ topic, acks: -1, messages: values.map((value) => ({ value })) });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve) => {
      void consumer.run({
        eachMessage: async ({ message }) => {
          seen.push(message.value?.toString() ?? '');
          if (seen.length === values.length) resolve();
        },
      });
    });
  };
  try {
    await withDeadline(20_000, 'kafkajs produce and consume', roundTrip());
  } finally {
    // Also after a deadline, so that no client keeps retrying into the next test.
    await Promise.allSettled([consumer.disconnect(), producer.disconnect(), admin.disconnect()]);
  }
  expect(seen).toEqual(values);
}

/** Case 5: still running, ApiVersions answered on a new connection, kafkajs produces and consumes. */
async function expectServing(broker: BrokerProcess): Promise<void> {
  let versions: ReturnType<typeof readApiVersions>;
  try {
    versions = readApiVersions(await exchange(broker.port, apiVersionsRequest(), 15_000));
  } catch (error) {
    throw new Error(
      `ApiVersions on a new connection failed (${String(error)}); ${await broker.describeDeath()}`,
    );
  }
  expect(versions.correlationId).toBe(API_VERSIONS_CORRELATION_ID);
  expect(versions.errorCode).toBe(0);
  expect(versions.apis).toBeGreaterThan(10);
  expect(broker.exitStatus).toBeNull();
  await produceAndConsume(broker.port);
}

/** One broker per test: `start` launches it, `stop` (also run after each test) stops it. */
function brokerPerTest(launch: (dataDir: string, limits?: BrokerLimits) => Promise<BrokerProcess>) {
  const dirs: { cleanup: () => void }[] = [];
  let current: BrokerProcess | undefined;
  const stop = async () => {
    await current?.stop();
    current = undefined;
    for (const dir of dirs.splice(0)) dir.cleanup();
  };
  afterEach(stop);
  const start = async (limits: BrokerLimits = {}, dataDir?: string): Promise<BrokerProcess> => {
    let path = dataDir;
    if (!path) {
      const dir = tempDir('hostile');
      dirs.push(dir);
      path = dir.path;
    }
    current = await launch(path, limits);
    return current;
  };
  return { start, stop };
}

const probe = (apiKey: number, version: number, flexible: boolean) => ({
  apiKey,
  version,
  correlationId: 77,
  clientId: 'probe',
  flexible,
});

/** Case 1: each request claims 2^31-1 (or, compact, 2^32-2) elements in its first array. */
const HUGE_COUNT_REQUESTS = [
  {
    name: 'Metadata v1 (the 23-byte probe, i32 topic count)',
    frame: requestFrame(probe(3, 1, false), new Body().uint32(HUGE_ARRAY_COUNT).bytes()),
  },
  {
    name: 'Metadata v9 (compact topic count)',
    frame: requestFrame(probe(3, 9, true), new Body().uvarint(HUGE_COMPACT_COUNT).bytes()),
  },
  {
    name: 'Produce v3 (topic_data count)',
    frame: requestFrame(
      probe(0, 3, false),
      new Body().string(null).int16(1).int32(1000).uint32(HUGE_ARRAY_COUNT).bytes(),
    ),
  },
  {
    name: 'Produce v9 (compact topic_data count)',
    frame: requestFrame(
      probe(0, 9, true),
      new Body().compactString(null).int16(1).int32(1000).uvarint(HUGE_COMPACT_COUNT).bytes(),
    ),
  },
  {
    name: 'Fetch v4 (topics count)',
    frame: requestFrame(
      probe(1, 4, false),
      new Body().int32(-1).int32(0).int32(0).int32(MiB).int8(0).uint32(HUGE_ARRAY_COUNT).bytes(),
    ),
  },
  {
    name: 'Fetch v12 (compact topics count)',
    frame: requestFrame(
      probe(1, 12, true),
      new Body()
        .int32(-1) // replica_id
        .int32(0) // max_wait_ms
        .int32(0) // min_bytes
        .int32(MiB) // max_bytes
        .int8(0) // isolation_level
        .int32(0) // session_id
        .int32(-1) // session_epoch
        .uvarint(HUGE_COMPACT_COUNT)
        .bytes(),
    ),
  },
  {
    name: 'ListOffsets v1 (topics count)',
    frame: requestFrame(probe(2, 1, false), new Body().int32(-1).uint32(HUGE_ARRAY_COUNT).bytes()),
  },
  {
    name: 'ListOffsets v6 (compact topics count)',
    frame: requestFrame(probe(2, 6, true), new Body().int32(-1).int8(0).uvarint(HUGE_COMPACT_COUNT).bytes()),
  },
  {
    name: 'CreateTopics v2 (topics count)',
    frame: requestFrame(probe(19, 2, false), new Body().uint32(HUGE_ARRAY_COUNT).bytes()),
  },
  {
    name: 'CreateTopics v5 (compact topics count)',
    frame: requestFrame(probe(19, 5, true), new Body().uvarint(HUGE_COMPACT_COUNT).bytes()),
  },
  {
    name: 'LeaveGroup v3 (members count)',
    frame: requestFrame(probe(13, 3, false), new Body().string('g').uint32(HUGE_ARRAY_COUNT).bytes()),
  },
  {
    name: 'LeaveGroup v4 (compact members count)',
    frame: requestFrame(
      probe(13, 4, true),
      new Body().compactString('g').uvarint(HUGE_COMPACT_COUNT).bytes(),
    ),
  },
];

describe('raw frames', () => {
  it('the Metadata v1 probe is byte for byte the 23-byte packet of the report', () => {
    expect(HUGE_COUNT_REQUESTS[0]!.frame.toString('hex')).toBe(
      '00000013000300010000004d000570726f62657fffffff',
    );
  });

  it('a compact count of 2^32-2 is the varint ff ff ff ff 0f', () => {
    expect(new Body().uvarint(HUGE_COMPACT_COUNT).bytes().toString('hex')).toBe('ffffffff0f');
  });
});

/** Case 2 runs on a tmpfs this small, so a broker that obeys a million-partition request stops early. */
const TMPFS_OPTIONS = 'size=256m,nr_inodes=50000';
const PARTITION_LIMITS: BrokerLimits = { maxPartitionsPerTopic: 100, maxPartitions: 250 };

/** Mounts a fresh tmpfs; returns its path, or why it cannot (not root). */
function mountTmpfs(): { path: string } | { refused: string } {
  const path = mkdtempSync(join(tmpdir(), 'kbench-hostile-tmpfs-'));
  const result = spawnSync('mount', ['-t', 'tmpfs', '-o', TMPFS_OPTIONS, 'tmpfs', path], {
    encoding: 'utf8',
  });
  if (result.status === 0) return { path };
  rmdirSync(path);
  const why = (result.stderr || String(result.error)).trim();
  if (process.getuid?.() !== 0 || /permission|not permitted|superuser|only root/i.test(why)) {
    return { refused: `mounting a tmpfs needs root (${why}); the partition-limit cases are skipped` };
  }
  throw new Error(`mount -t tmpfs failed: ${why}`);
}

function unmount(path: string): void {
  const result = spawnSync('umount', [path], { encoding: 'utf8' });
  // A broker that died mid-write may leave the mount busy for a moment; detach it lazily then.
  if (result.status !== 0) spawnSync('umount', ['-l', path]);
  rmdirSync(path);
}

/** `<topic>-<partition>` directories in a broker's data directory, sorted. */
function partitionDirs(dataDir: string): string[] {
  return readdirSync(dataDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && /-\d+$/.test(entry.name))
    .map((entry) => entry.name)
    .sort();
}

/** Partition directories no topic in the broker's metadata accounts for. */
async function strayPartitionDirs(admin: Admin, dataDir: string): Promise<string[]> {
  const topics = await admin.listTopics();
  const { topics: described } = await admin.fetchTopicMetadata({ topics });
  const expected = new Set(described.flatMap((t) => t.partitions.map((p) => `${t.name}-${p.partitionId}`)));
  return partitionDirs(dataDir).filter((dir) => !expected.has(dir));
}

function expectNoStrayDirs(stray: string[]): void {
  expect(stray.length, `stray partition directories, e.g. ${stray.slice(0, 3).join(', ')}`).toBe(0);
}

/** The Kafka error types in a kafkajs error (an aggregate of per-topic errors or a single one). */
function errorTypes(error: unknown): string[] {
  const e = error as { errors?: unknown[]; type?: string; cause?: unknown; message?: string } | null;
  if (!e) return ['(no error: the request succeeded)'];
  if (Array.isArray(e.errors)) return e.errors.flatMap(errorTypes);
  if (e.type) return [e.type];
  if (e.cause) return errorTypes(e.cause);
  return [`(not a Kafka error: ${e.message ?? String(error)})`];
}

async function failureOf(work: Promise<unknown>): Promise<unknown> {
  return work.then(
    () => null,
    (error: unknown) => error,
  );
}

/**
 * `count` connections from `localAddress` that never send a byte. They are opened in batches smaller
 * than the listen backlog, each batch once the broker's kernel has completed the last one's handshakes,
 * so that none waits in SYN_RECV for a retransmission and every one is in the broker's accept queue
 * (or accepted) before the well-behaved client comes.
 */
async function openSilent(port: number, count: number, localAddress: string): Promise<Socket[]> {
  const open: Socket[] = [];
  for (let opened = 0; opened < count; opened += 50) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(50, count - opened) }, () =>
        connect(port, localAddress).catch(() => null),
      ),
    );
    for (const s of batch) {
      if (!s) continue;
      s.on('error', () => {});
      open.push(s);
    }
    await eventually('the broker to complete the handshakes', async () =>
      handshakesInProgress(port) === 0 ? true : undefined,
    );
  }
  return open;
}

/** Sends a frame header declaring `size` bytes, then one byte a second until closed or stopped. */
function drip(socket: Socket, size: number): () => void {
  socket.on('error', () => {});
  socket.write(new Body().int32(size).bytes());
  let sent = 0;
  const timer = setInterval(() => {
    if (socket.destroyed || sent === size) return clearInterval(timer);
    socket.write(Buffer.from([0]));
    sent++;
  }, 1000);
  return () => clearInterval(timer);
}

/** Opens `count` connections that each send only a frame header declaring `size` bytes. */
async function declareFrames(port: number, count: number, size: number): Promise<Socket[]> {
  const sockets = await Promise.all(Array.from({ length: count }, () => connect(port)));
  await Promise.all(
    sockets.map(
      (s) =>
        new Promise<void>((resolve, reject) => {
          s.on('error', () => {});
          s.write(new Body().int32(size).bytes(), (error) => (error ? reject(error) : resolve()));
        }),
    ),
  );
  return sockets;
}

/** Memory of the broker process before and after 200 connections each declared a 100 MiB frame. */
async function memoryAroundDeclaredFrames(broker: BrokerProcess) {
  await exchange(broker.port, apiVersionsRequest());
  const before = memoryOf(broker.pid);
  const sockets = await declareFrames(broker.port, 200, 100 * MiB);
  // An answer on a new connection shows the broker has been scheduled since the headers arrived.
  await exchange(broker.port, apiVersionsRequest()).catch(() => {});
  await sleep(500);
  const after = memoryOf(broker.pid);
  return { before, after, sockets };
}

for (const { name, launch } of TARGETS) {
  describe(name, () => {
    describe('a request claiming a huge array (case 1)', () => {
      const { start } = brokerPerTest(launch);

      for (const { name, frame } of HUGE_COUNT_REQUESTS) {
        it(`survives ${name}`, async () => {
          const broker = await start();
          await sendHostile(broker.port, frame);
          await expectServing(broker);
        });
      }
    });

    describe('partition limits on a small tmpfs (case 2)', () => {
      const brokers = brokerPerTest(launch);
      let mount: string | undefined;

      afterEach(async () => {
        if (!mount) return;
        // The broker must be gone before its file system is unmounted.
        await brokers.stop();
        unmount(mount);
        mount = undefined;
      });

      /** A broker with PARTITION_LIMITS on a fresh tmpfs, and a kafkajs admin client for it. */
      async function startOnTmpfs(ctx: TestContext): Promise<{ broker: BrokerProcess; admin: Admin }> {
        const mounted = mountTmpfs();
        if ('refused' in mounted) return ctx.skip(mounted.refused);
        mount = mounted.path;
        const dataDir = join(mount, 'data');
        mkdirSync(dataDir);
        const broker = await brokers.start(PARTITION_LIMITS, dataDir);
        const admin = kafkaClient(broker.port, 'hostile-admin').admin();
        await admin.connect();
        return { broker, admin };
      }

      it('CreateTopics of 1,000,000 partitions is refused with INVALID_PARTITIONS and creates no directory', async (ctx) => {
        const { broker, admin } = await startOnTmpfs(ctx);
        try {
          const error = await withDeadline(
            60_000,
            'CreateTopics of 1,000,000 partitions',
            failureOf(admin.createTopics({ topics: [{ topic: 'million', numPartitions: 1_000_000 }] })),
          );
          expectNoStrayDirs(await strayPartitionDirs(admin, broker.dataDir));
          expect(errorTypes(error)).toEqual(['INVALID_PARTITIONS']);
          expect(await admin.listTopics()).not.toContain('million');
        } finally {
          await admin.disconnect();
        }
        await expectServing(broker);
      });

      it('CreatePartitions raising a topic to 1,000,000 is refused with INVALID_PARTITIONS and adds no directory', async (ctx) => {
        const { broker, admin } = await startOnTmpfs(ctx);
        try {
          await admin.createTopics({ topics: [{ topic: 'grow', numPartitions: 2 }] });
          const error = await withDeadline(
            60_000,
            'CreatePartitions to 1,000,000',
            failureOf(admin.createPartitions({ topicPartitions: [{ topic: 'grow', count: 1_000_000 }] })),
          );
          expectNoStrayDirs(await strayPartitionDirs(admin, broker.dataDir));
          expect(errorTypes(error)).toEqual(['INVALID_PARTITIONS']);
          const meta = await admin.fetchTopicMetadata({ topics: ['grow'] });
          expect(meta.topics[0]?.partitions).toHaveLength(2);
        } finally {
          await admin.disconnect();
        }
        await expectServing(broker);
      });

      it('a topic that would take the node past maxPartitions is refused with POLICY_VIOLATION or INVALID_PARTITIONS and a message', async (ctx) => {
        const { broker, admin } = await startOnTmpfs(ctx);
        try {
          // 200 of the node's 250 partitions, each topic within the per-topic 100.
          await admin.createTopics({
            topics: [
              { topic: 'first', numPartitions: 100 },
              { topic: 'second', numPartitions: 100 },
            ],
          });
          // kafkajs drops CreateTopics' error message, so this one goes as raw bytes.
          const [result] = readCreateTopics(
            await exchange(broker.port, createTopicRequest('third', 100), 60_000),
          );
          expect(result?.name).toBe('third');
          expectNoStrayDirs(await strayPartitionDirs(admin, broker.dataDir));
          expect(result?.errorCode).toBeOneOf([POLICY_VIOLATION, INVALID_PARTITIONS]);
          expect(result?.errorMessage ?? '').not.toBe('');
          expect(await admin.listTopics()).not.toContain('third');
        } finally {
          await admin.disconnect();
        }
        await expectServing(broker);
      });

      it('CreatePartitions that would take the node past maxPartitions is refused and adds no directory', async (ctx) => {
        const { broker, admin } = await startOnTmpfs(ctx);
        try {
          await admin.createTopics({
            topics: [
              { topic: 'first', numPartitions: 100 },
              { topic: 'second', numPartitions: 100 },
              { topic: 'grow', numPartitions: 10 },
            ],
          });
          // 100 is within the per-topic limit; 290 is past the node's 250.
          const error = await failureOf(
            admin.createPartitions({ topicPartitions: [{ topic: 'grow', count: 100 }] }),
          );
          expectNoStrayDirs(await strayPartitionDirs(admin, broker.dataDir));
          expect(errorTypes(error)).toEqual([expect.toBeOneOf(['POLICY_VIOLATION', 'INVALID_PARTITIONS'])]);
          const meta = await admin.fetchTopicMetadata({ topics: ['grow'] });
          expect(meta.topics[0]?.partitions).toHaveLength(10);
        } finally {
          await admin.disconnect();
        }
        await expectServing(broker);
      });
    });

    describe('connections that hold a slot and never speak (case 3)', () => {
      const { start } = brokerPerTest(launch);
      const opened: Socket[] = [];
      afterEach(() => {
        for (const s of opened.splice(0)) s.destroy();
      });

      it('1,030 silent connections from 127.0.0.2 do not lock out a client on 127.0.0.1', async () => {
        const broker = await start();
        opened.push(...(await openSilent(broker.port, 1030, '127.0.0.2')));
        await expectServing(broker);
      });

      it('1,030 silent connections from 127.0.0.1 do not lock out another client on 127.0.0.1', async () => {
        const broker = await start();
        opened.push(...(await openSilent(broker.port, 1030, '127.0.0.1')));
        // At the per-address cap a newcomer evicts the longest-idle connection once it has idled 1 s.
        await sleep(1500);
        await expectServing(broker);
      });

      it('a connection dripping a frame one byte a second is closed once frameTimeoutMs passes', async () => {
        const broker = await start({ frameTimeoutMs: 1000 });
        const sockets = await Promise.all(Array.from({ length: 5 }, () => connect(broker.port)));
        opened.push(...sockets);
        // 60 bytes at one a second: the frames would be complete after a minute.
        const stops = sockets.map((s) => drip(s, 60));
        try {
          const closed = await Promise.all(sockets.map((s) => closedWithin(s, 20_000)));
          expect(closed).toEqual(sockets.map(() => true));
        } finally {
          for (const stop of stops) stop();
        }
        await expectServing(broker);
      });

      it('a connection that never sends a byte is closed once connectionsMaxIdleMs passes', async () => {
        const broker = await start({ connectionsMaxIdleMs: 1500 });
        const socket = await connect(broker.port);
        socket.on('error', () => {});
        opened.push(socket);
        expect(await closedWithin(socket, 20_000)).toBe(true);
        await expectServing(broker);
      });
    });

    describe('frame headers that declare 100 MiB and send nothing more (case 4)', () => {
      const { start } = brokerPerTest(launch);
      const opened: Socket[] = [];
      afterEach(() => {
        for (const s of opened.splice(0)) s.destroy();
      });

      it('200 of them grow resident memory by less than 256 MiB', async () => {
        const broker = await start();
        const { before, after, sockets } = await memoryAroundDeclaredFrames(broker);
        opened.push(...sockets);
        expect((after.rss - before.rss) / MiB).toBeLessThan(256);
        await expectServing(broker);
      });

      it('200 of them reserve no address space for the bodies not yet sent (virtual size +<4 GiB, not +20 GiB)', async () => {
        const broker = await start();
        const { before, after, sockets } = await memoryAroundDeclaredFrames(broker);
        opened.push(...sockets);
        expect((after.virtual - before.virtual) / MiB).toBeLessThan(4096);
        await expectServing(broker);
      });
    });
  });
}
