// Acknowledged only once durable, checked on the real broker process: kbench-broker runs under
// strace, kafkajs produces records whose values are unique markers, and the trace must show for
// every acknowledged record that each replica the rule requires wrote it durably (to its journal
// through a descriptor opened with O_DSYNC, or to a file an fdatasync then synced), and that only
// then did the leader write the Produce response (syscall-trace.ts). A kill -9 keeps the page cache, and this machine
// cannot cut the power, so the order of the calls is what can be shown here (issue #18). Under
// `--fsync none` the same check must fail: it can tell a broker that answers before the disk.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Kafka, logLevel } from 'kafkajs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { eventually, tempDir } from './helpers.js';
import {
  type AckedProduce,
  checkDurableBeforeAck,
  type NodeTrace,
  parseTrace,
  requireStrace,
  straceArgs,
} from './syscall-trace.js';

const BINARY = join(import.meta.dirname, '..', 'target', 'release', 'kbench-broker');
const TOPIC = 'durable-acks';
/** Produce requests per case and records in each: a few hundred records, one request in flight. */
const SENDS = 16;
const RECORDS_PER_SEND = 20;

interface TracedBroker {
  id: number;
  port: number;
  /** The broker's own pid (strace's child), as it prints it. */
  pid: number;
  trace: string;
  strace: ChildProcess;
}

const running: TracedBroker[] = [];
let cleanup: (() => void) | undefined;
// If the runner dies first, no broker outlives it.
process.once('exit', () => {
  for (const b of running) signal(b, 'SIGKILL');
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((b) => stop(b)));
  cleanup?.();
  cleanup = undefined;
});

/** kbench-broker `args` under strace writing to `trace`; resolves once it prints where it listens. */
async function launchTraced(trace: string, args: string[]): Promise<TracedBroker> {
  const strace = spawn('strace', [...straceArgs(trace), BINARY, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  strace.stderr!.setEncoding('utf8');
  strace.stderr!.on('data', (text: string) => {
    stderr = (stderr + text).slice(-8192);
  });
  const lines = createInterface({ input: strace.stdout! });
  const first = await Promise.race([
    once(lines, 'line').then(([line]) => line as string),
    once(strace, 'exit').then(([code]) => `(exited with ${code})`),
  ]);
  lines.on('line', () => {}); // keep draining stdout
  const match = /^node (\d+) [^:]+:(\d+) pid (\d+)$/.exec(first);
  if (!match) {
    strace.kill('SIGKILL');
    throw new Error(`kbench-broker under strace did not start: ${first}; stderr: ${stderr.trim()}`);
  }
  const broker = {
    id: Number(match[1]),
    port: Number(match[2]),
    pid: Number(match[3]),
    trace,
    strace,
  };
  running.push(broker);
  return broker;
}

function signal(broker: TracedBroker, name: NodeJS.Signals): void {
  try {
    process.kill(broker.pid, name);
  } catch {
    // already gone
  }
}

/** SIGTERM to the broker itself (strace holds fatal signals while it writes to a file); waits for strace. */
async function stop(broker: TracedBroker): Promise<void> {
  const { strace } = broker;
  if (strace.exitCode !== null || strace.signalCode !== null) return;
  const exited = once(strace, 'exit');
  signal(broker, 'SIGTERM');
  const timer = setTimeout(() => signal(broker, 'SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** The broker's system calls, once it has stopped. */
function traceOf(broker: TracedBroker): NodeTrace {
  return { name: `node ${broker.id}`, calls: parseTrace(readFileSync(broker.trace, 'utf8')) };
}

function kafkaFor(brokers: TracedBroker[]): Kafka {
  return new Kafka({
    brokers: brokers.map((b) => `127.0.0.1:${b.port}`),
    logLevel: logLevel.NOTHING,
    retry: { retries: 20, initialRetryTime: 50, maxRetryTime: 300 },
  });
}

async function createTopic(kafka: Kafka, replicas: number): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({
      waitForLeaders: true,
      topics: [
        {
          topic: TOPIC,
          numPartitions: 1,
          replicationFactor: replicas,
          configEntries: [{ name: 'min.insync.replicas', value: String(Math.min(2, replicas)) }],
        },
      ],
    });
  } finally {
    await admin.disconnect();
  }
}

/** Partition 0's leader and in-sync replicas, as metadata says. */
async function partitionState(kafka: Kafka): Promise<{ leader: number; isr: number[] }> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const metadata = await admin.fetchTopicMetadata({ topics: [TOPIC] });
    const p = metadata.topics[0]!.partitions.find((x) => x.partitionId === 0)!;
    return { leader: p.leader, isr: [...p.isr].sort((a, b) => a - b) };
  } finally {
    await admin.disconnect();
  }
}

/** An acknowledged Produce request and the acks it asked for. */
type Sent = AckedProduce & { acks: number };

/**
 * SENDS Produce requests of RECORDS_PER_SEND records to partition 0, one at a time, with `acks`
 * for each request in turn; no retries, so each acknowledged request was written exactly once.
 */
async function produce(kafka: Kafka, acks: (send: number) => number): Promise<Sent[]> {
  const producer = kafka.producer({
    allowAutoTopicCreation: false,
    idempotent: false,
    maxInFlightRequests: 1,
    retry: { retries: 0 },
  });
  await producer.connect();
  const acked: Sent[] = [];
  try {
    for (let send = 0; send < SENDS; send++) {
      const values = Array.from(
        { length: RECORDS_PER_SEND },
        (_, i) => `<durable-ack ${String(send * RECORDS_PER_SEND + i).padStart(5, '0')}>`,
      );
      const [result] = await producer.send({
        topic: TOPIC,
        acks: acks(send),
        messages: values.map((value) => ({ value, partition: 0 })),
      });
      acked.push({ baseOffset: BigInt(result!.baseOffset!), values, acks: acks(send) });
    }
  } finally {
    await producer.disconnect();
  }
  // One partition, one request at a time: the offsets follow one another.
  expect(acked.map((a) => a.baseOffset)).toEqual(acked.map((_, i) => BigInt(i * RECORDS_PER_SEND)));
  return acked;
}

async function singleNode(fsync: string) {
  const dir = tempDir('durable-ack');
  cleanup = dir.cleanup;
  const broker = await launchTraced(join(dir.path, 'trace'), [
    '--port',
    '0',
    '--data-dir',
    join(dir.path, 'data'),
    '--fsync',
    fsync,
  ]);
  const kafka = kafkaFor([broker]);
  await createTopic(kafka, 1);
  const acked = await produce(kafka, (send) => (send % 2 === 0 ? 1 : -1));
  await stop(broker);
  const trace = traceOf(broker);
  return checkDurableBeforeAck({ topic: TOPIC, partition: 0, leader: trace, required: [trace], acked });
}

describe('acknowledged only once durable (kbench-broker under strace)', () => {
  beforeAll(() => {
    requireStrace();
    if (!existsSync(BINARY)) throw new Error(`${BINARY} is missing: run npm run build first`);
  });

  it('single node, fsync batch: every acknowledged record was on disk before its response', async () => {
    const report = await singleNode('batch');
    expect(report.violations.slice(0, 10)).toEqual([]);
    expect(report.held).toBe(SENDS * RECORDS_PER_SEND);
    expect(report.durableWrites['node 1']).toBeGreaterThan(0);
  });

  it('single node, fsync none: the check fails, as nothing durable comes before a response', async () => {
    const report = await singleNode('none');
    expect(report.held).toBe(0);
    expect(report.violations).toHaveLength(SENDS * RECORDS_PER_SEND);
    expect(report.violations[0]).toMatch(
      /^<durable-ack 00000>: node 1 wrote it to .*durable-acks-0\/.*\.log/,
    );
  });

  it('3 processes, RF 3, fsync batch: acks=all once every replica had it on disk, acks=1 once the leader did', async () => {
    const dir = tempDir('durable-ack-cluster');
    cleanup = dir.cleanup;
    const clusterDir = join(dir.path, 'cluster');
    mkdirSync(clusterDir);
    const nodes: TracedBroker[] = [];
    for (let id = 1; id <= 3; id++) {
      nodes.push(
        await launchTraced(join(dir.path, `trace-${id}`), [
          '--node-id',
          String(id),
          '--port',
          '0',
          '--data-dir',
          join(dir.path, `node-${id}`),
          '--cluster-dir',
          clusterDir,
          '--fsync',
          'batch',
          // Generous under strace on a small machine: a quiet run keeps every replica in sync.
          '--session-timeout-ms',
          '5000',
          '--replica-lag-ms',
          '10000',
        ]),
      );
    }
    const kafka = kafkaFor(nodes);
    await createTopic(kafka, 3);
    await eventually('all 3 replicas in sync', async () =>
      (await partitionState(kafka)).isr.length === 3 ? true : undefined,
    );
    // The last quarter of the requests with acks=1, the rest with acks=all.
    const acked = await produce(kafka, (send) => (send < (SENDS * 3) / 4 ? -1 : 1));
    const { leader, isr } = await partitionState(kafka);
    expect(isr).toEqual([1, 2, 3]); // still all in sync: acks=all needed every replica's sync
    await Promise.all(nodes.map((node) => stop(node)));
    const traces = new Map(nodes.map((node) => [node.id, traceOf(node)]));
    const leaderTrace = traces.get(leader)!;

    const all = checkDurableBeforeAck({
      topic: TOPIC,
      partition: 0,
      leader: leaderTrace,
      required: [...traces.values()],
      acked: acked.filter((a) => a.acks === -1),
    });
    expect(all.violations.slice(0, 10)).toEqual([]);
    expect(all.held).toBe(((SENDS * 3) / 4) * RECORDS_PER_SEND * 3);
    for (const node of nodes) expect(all.durableWrites[`node ${node.id}`]).toBeGreaterThan(0);

    const one = checkDurableBeforeAck({
      topic: TOPIC,
      partition: 0,
      leader: leaderTrace,
      required: [leaderTrace],
      acked: acked.filter((a) => a.acks === 1),
    });
    expect(one.violations.slice(0, 10)).toEqual([]);
    expect(one.held).toBe((SENDS / 4) * RECORDS_PER_SEND);
  });
});
