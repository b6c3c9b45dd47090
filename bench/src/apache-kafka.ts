// npm run bench (Apache Kafka part): the Java perf tools against the bundled broker and Apache Kafka 4.3.1,
// into the machine, throughput, replication and topics sections of docs/benchmarks.md.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  consumerPerformance,
  ensureKafkaJars,
  KAFKA_VERSION,
  type ProducerPerformanceResult,
  producerPerformance,
  runKafkaTool,
  startApacheKafka,
} from '@kbench/apache-kafka';
import { bundledBrokerBinary, startBundledBroker } from '@kbench/broker-launcher';
import { BENCHMARKS_DOC, fixed, int, replaceSection } from './doc.js';
import { describeMachine } from './machine.js';
import { holdBenchSlot } from './slot.js';
import { createTopic } from './topics.js';

const { values: flags } = parseArgs({
  options: {
    only: { type: 'string', default: 'machine,throughput,replication,topics' },
    'replication-records': {
      type: 'string',
      default: process.env.KBENCH_BENCH_REPLICATION_RECORDS ?? '2000000',
    },
    records: { type: 'string', default: process.env.KBENCH_BENCH_RECORDS ?? '10000000' },
    'topic-counts': { type: 'string', default: process.env.KBENCH_BENCH_TOPIC_COUNTS ?? '1,50001,120001' },
    'create-timeout-min': { type: 'string', default: '20' },
    doc: { type: 'string', default: BENCHMARKS_DOC },
  },
});
const only = new Set(flags.only.split(','));
const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);

interface Target {
  name: string;
  bootstrap: string;
  stop(): Promise<void>;
}

async function withTarget<T>(kind: 'bundled' | 'apache', use: (target: Target) => Promise<T>): Promise<T> {
  const dataDir = mkdtempSync(join(tmpdir(), `kbench-bench-${kind}-`));
  const target =
    kind === 'bundled'
      ? { name: 'bundled broker (kbench-broker)', ...(await startBundledBroker({ dataDir })) }
      : { name: `Apache Kafka ${KAFKA_VERSION}`, ...(await startApacheKafka({ dataDir })) };
  try {
    return await use(target);
  } finally {
    await target.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Three nodes on this machine: the bundled cluster (one kbench-broker process, `fsync` policy) or Apache Kafka. */
async function withCluster<T>(
  kind: 'bundled' | 'apache',
  fsync: string,
  use: (target: Target) => Promise<T>,
): Promise<T> {
  const dataDir = mkdtempSync(join(tmpdir(), `kbench-bench-${kind}3-`));
  const target =
    kind === 'bundled'
      ? {
          name: `bundled cluster, 3 nodes, fsync ${fsync}`,
          ...(await startBundledBroker({ dataDir, args: ['--nodes', '3', '--fsync', fsync] })),
        }
      : {
          name: `Apache Kafka ${KAFKA_VERSION}, 3 nodes`,
          ...(await startApacheKafka({ dataDir, nodes: 3 })),
        };
  try {
    return await use(target);
  } finally {
    await target.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function machineSection(): string {
  const m = describeMachine();
  return `## Machine

| | |
|---|---|
| CPU | ${m.cpuModel}, ${m.cores} cores |
| memory | ${m.memoryGiB} GiB |
| OS | ${m.os}, ${m.kernel} |
| open files limit | ${m.openFilesLimit} |
| Java | ${m.java} |
| Node | ${m.node} |
| bundled broker | \`${bundledBrokerBinary()}\`, built ${statSync(bundledBrokerBinary())
    .mtime.toISOString()
    .replace(/\.\d+Z$/, 'Z')} |
| Apache Kafka (tools, client, reference broker) | ${KAFKA_VERSION} from Maven Central |
| date | ${m.date} |

Broker, tools and Node share this one machine.`;
}

interface ThroughputRow {
  target: string;
  produced: ProducerPerformanceResult;
  consumedPerSec: number;
  consumedMbPerSec: number;
  consumed: number;
}

async function throughputSection(records: number): Promise<string> {
  const rows: ThroughputRow[] = [];
  for (const kind of ['bundled', 'apache'] as const) {
    rows.push(
      await withTarget(kind, async (target) => {
        log(`throughput: ${records} x 100 B, acks=1, 6 partitions -> ${target.name}`);
        await createTopic(target.bootstrap, 'throughput', 6);
        const produced = await producerPerformance({
          bootstrap: target.bootstrap,
          topic: 'throughput',
          records,
          recordSize: 100,
          producerProps: { acks: 1 },
          timeoutMs: 30 * 60_000,
        });
        log(`  produced ${int(produced.recordsPerSec)} rec/s; consuming`);
        const consumed = await consumerPerformance({
          bootstrap: target.bootstrap,
          topic: 'throughput',
          messages: records,
          timeoutMs: 30 * 60_000,
        });
        return {
          target: target.name,
          produced,
          consumed: consumed.messages,
          consumedPerSec: consumed.messagesPerSec,
          consumedMbPerSec: consumed.mbPerSec,
        };
      }),
    );
  }
  const [bundled, apache] = rows as [ThroughputRow, ThroughputRow];
  const ratio = (a: number, b: number) => `${fixed(a / b)}x`;
  const line = (r: ThroughputRow) =>
    `| ${r.target} | ${int(r.produced.recordsPerSec)} | ${fixed(r.produced.mbPerSec)} | ${fixed(r.produced.avgLatencyMs, 1)} | ` +
    `${r.produced.p50Ms} | ${r.produced.p99Ms} | ${r.produced.p999Ms} | ${fixed(r.produced.maxLatencyMs, 0)} | ` +
    `${int(r.consumedPerSec)} | ${fixed(r.consumedMbPerSec)} |`;
  return `## Producer throughput: bundled broker vs Apache Kafka ${KAFKA_VERSION}

ProducerPerformance, ${int(records)} records of 100 B, one producer, \`acks=1\` (Java defaults otherwise:
batch.size 16384, linger.ms 5, idempotence off because acks is not all), one topic with 6 partitions, one
node; then ConsumerPerformance reads the same ${int(records)} records back (one consumer, Java defaults). Each
broker starts empty in its own temporary directory; Apache Kafka runs with kafka-server-start.sh's 1 GB heap.
Latencies in ms, as ProducerPerformance measures them (send to ack, including time queued in the client).

| target | produce rec/s | MB/s | avg | p50 | p99 | p99.9 | max | consume rec/s | consume MB/s |
|---|---|---|---|---|---|---|---|---|---|
${line(bundled)}
${line(apache)}
| **ratio bundled / Apache Kafka** | **${ratio(bundled.produced.recordsPerSec, apache.produced.recordsPerSec)}** | | ${ratio(bundled.produced.avgLatencyMs, apache.produced.avgLatencyMs)} | | ${ratio(bundled.produced.p99Ms, apache.produced.p99Ms)} | | | **${ratio(bundled.consumedPerSec, apache.consumedPerSec)}** | |

Consumed: ${int(bundled.consumed)} (bundled), ${int(apache.consumed)} (Apache Kafka).`;
}

interface ReplicationRow {
  target: string;
  recordSize: number;
  produced: ProducerPerformanceResult;
}

/** ProducerPerformance with acks=all (the Java defaults: idempotence on) to RF 3, min ISR 2, on 3 nodes. */
async function replicatedRun(target: Target, records: number, recordSize: number): Promise<ReplicationRow> {
  log(`replication: ${records} x ${recordSize} B, acks=all, RF 3 -> ${target.name}`);
  await createTopic(target.bootstrap, 'replicated', 6, { factor: 3, minIsr: 2 });
  const produced = await producerPerformance({
    bootstrap: target.bootstrap,
    topic: 'replicated',
    records,
    recordSize,
    producerProps: { acks: 'all' },
    timeoutMs: 30 * 60_000,
  });
  log(`  ${int(produced.recordsPerSec)} rec/s, p99 ${produced.p99Ms} ms`);
  return { target: target.name, recordSize, produced };
}

async function replicationSection(records: number): Promise<string> {
  const bundled = await withCluster('bundled', 'none', (t) => replicatedRun(t, records, 100));
  const apache = await withCluster('apache', 'none', (t) => replicatedRun(t, records, 100));
  const kb = Math.max(10_000, Math.round(records / 10));
  const none = await withCluster('bundled', 'none', (t) => replicatedRun(t, kb, 1024));
  const batch = await withCluster('bundled', 'batch', (t) => replicatedRun(t, kb, 1024));
  const ratio = (a: number, b: number) => `${fixed(a / b)}x`;
  const line = (r: ReplicationRow) =>
    `| ${r.target} | ${r.recordSize} B | ${int(r.produced.recordsPerSec)} | ${fixed(r.produced.mbPerSec)} | ${fixed(r.produced.avgLatencyMs, 1)} | ` +
    `${r.produced.p50Ms} | ${r.produced.p99Ms} | ${r.produced.p999Ms} | ${fixed(r.produced.maxLatencyMs, 0)} |`;
  return `## Replication: 3 nodes, RF 3, acks=all

ProducerPerformance with \`acks=all\` (Java defaults otherwise: idempotence on, batch.size 16384, linger.ms 5),
one topic of 6 partitions with replication factor 3 and min.insync.replicas 2, three nodes on this one machine:
the bundled cluster (three nodes in one kbench-broker process) and three Apache Kafka ${KAFKA_VERSION} KRaft nodes
(each broker and controller, each its own JVM). Then the bundled cluster with \`--fsync batch\` (fdatasync before
every acknowledgement, on leader and followers) against \`--fsync none\` (page cache), at 1 KB.
Latencies in ms, as ProducerPerformance measures them.

| target | record | rec/s | MB/s | avg | p50 | p99 | p99.9 | max |
|---|---|---|---|---|---|---|---|---|
${line(bundled)}
${line(apache)}
| **ratio bundled / Apache Kafka** | | **${ratio(bundled.produced.recordsPerSec, apache.produced.recordsPerSec)}** | | ${ratio(bundled.produced.avgLatencyMs, apache.produced.avgLatencyMs)} | | ${ratio(bundled.produced.p99Ms, apache.produced.p99Ms)} | | |
${line(none)}
${line(batch)}
| **ratio fsync batch / none** | | **${ratio(batch.produced.recordsPerSec, none.produced.recordsPerSec)}** | | ${ratio(batch.produced.avgLatencyMs, none.produced.avgLatencyMs)} | | ${ratio(batch.produced.p99Ms, none.produced.p99Ms)} | | |

${int(records)} records of 100 B; ${int(kb)} records of 1 KB.`;
}

interface TopicCountRow {
  topics: number;
  createMs?: number;
  failure?: string;
  latency?: ProducerPerformanceResult;
  /** The steady state of a second run at TOPICS_FIXED_RATE. */
  paced?: ProducerPerformanceResult['steadyState'];
}

/** The fixed rate of the topic-count rows' second run (4 KB records: 20 MB/s), its warm-up and measured seconds. */
const TOPICS_FIXED_RATE = 5_000;
const TOPICS_FIXED_WARMUP_S = 5;
const TOPICS_FIXED_S = 20;

async function createFillerTopics(
  bootstrap: string,
  count: number,
  timeoutMs: number,
): Promise<TopicCountRow> {
  if (count === 0) return { topics: 1, createMs: 0 };
  const program = join(import.meta.dirname, '..', 'java', 'CreateTopics.java');
  const run = await runKafkaTool(program, [bootstrap, 'filler', String(count), '1000'], { timeoutMs });
  const lines = run.stdout.trim().split('\n');
  const done = lines.map((l) => /^created (\d+) (\d+)$/.exec(l)).find((m) => m);
  if (run.exitCode === 0 && done) return { topics: count + 1, createMs: Number(done[2]) };
  const progress = lines
    .map((l) => /^progress (\d+) (\d+)$/.exec(l))
    .filter((m) => m)
    .pop();
  const cause = run.timedOut
    ? `stopped after ${Math.round(timeoutMs / 60_000)} min`
    : (/Caused by: (.*)/.exec(run.stderr)?.[1] ?? run.stderr.trim().split('\n')[0] ?? `exit ${run.exitCode}`);
  const reached = progress
    ? `${int(Number(progress[1]))} created in ${fixed(Number(progress[2]) / 1000, 1)} s, then `
    : '';
  return { topics: count + 1, failure: `${reached}${cause}` };
}

async function topicsSection(counts: number[], createTimeoutMs: number): Promise<string> {
  const rows: TopicCountRow[] = [];
  for (const topics of counts) {
    rows.push(
      await withTarget('bundled', async (target) => {
        log(`topics: creating ${topics} topics on the bundled broker`);
        const row = await createFillerTopics(target.bootstrap, topics - 1, createTimeoutMs);
        if (row.failure) {
          log(`  creation failed: ${row.failure}`);
          return row;
        }
        await createTopic(target.bootstrap, 'latency', 1);
        log(`  created in ${row.createMs} ms; ProducerPerformance 100,000 x 4096 B`);
        row.latency = await producerPerformance({
          bootstrap: target.bootstrap,
          topic: 'latency',
          records: 100_000,
          recordSize: 4096,
          producerProps: { acks: 1, 'batch.size': 128000 },
          timeoutMs: 20 * 60_000,
        });
        log(`  then ${int(TOPICS_FIXED_RATE)} rec/s for ${TOPICS_FIXED_WARMUP_S + TOPICS_FIXED_S} s`);
        const paced = await producerPerformance({
          bootstrap: target.bootstrap,
          topic: 'latency',
          records: TOPICS_FIXED_RATE * (TOPICS_FIXED_WARMUP_S + TOPICS_FIXED_S),
          recordSize: 4096,
          throughput: TOPICS_FIXED_RATE,
          warmupRecords: TOPICS_FIXED_RATE * TOPICS_FIXED_WARMUP_S,
          producerProps: { acks: 1, 'batch.size': 128000 },
          timeoutMs: 20 * 60_000,
        });
        row.paced = paced.steadyState;
        return row;
      }),
    );
  }
  const base = rows.find((r) => r.topics === 1)?.latency;
  const pacedBase = rows.find((r) => r.topics === 1)?.paced;
  const line = (r: TopicCountRow) => {
    const created = r.createMs === undefined || r.topics === 1 ? '-' : `${fixed(r.createMs / 1000, 1)} s`;
    if (!r.latency) return `| ${int(r.topics)} | ${created} | not measured: ${r.failure} | | | | | | | | |`;
    const l = r.latency;
    const vs = base ? `${fixed(l.avgLatencyMs / base.avgLatencyMs)}x` : '-';
    const p = r.paced;
    const paced = p
      ? `${fixed(p.avgLatencyMs, 2)} | ${pacedBase ? `**${fixed(p.avgLatencyMs / pacedBase.avgLatencyMs)}x**` : '-'} | ${p.p99Ms}`
      : 'not measured | | ';
    return `| ${int(r.topics)} | ${created} | ${fixed(l.avgLatencyMs, 1)} | ${vs} | ${l.p50Ms} | ${l.p99Ms} | ${fixed(l.maxLatencyMs, 0)} | ${int(l.recordsPerSec)} | ${paced} |`;
  };
  return `## Producer latency with many topics (SEEDS.md #4, the 2016 topic-count test)

The bundled broker, one node, empty at the start of each row. The Java Admin client creates the other topics
(1 partition, RF 1) in CreateTopics batches of 1,000 (bench/java/CreateTopics.java); "create" is the time for
those. Then ProducerPerformance sends 100,000 records of 4,096 B with \`acks=1\`, \`batch.size=128000\` to
one more 1-partition topic. The 2016 write-up saw average latency grow with the topic count (roughly
200-500 ms on its VM). Latencies in ms; "avg vs 1 topic" divides by the 1-topic row. Run as fast as it
can, ProducerPerformance's average is mostly the wait in its own 32 MiB buffer, so any CPU the machine
takes from client or broker moves it several-fold; the last three columns are a second run on the same
topic at a fixed ${int(TOPICS_FIXED_RATE)} records/s (${fixed((TOPICS_FIXED_RATE * 4096) / 1_048_576, 1)} MB/s; the steady state after ${TOPICS_FIXED_WARMUP_S} s of warm-up, ${TOPICS_FIXED_S} s), where
the buffer stays short and the average is the broker's answer time: issue #18's goal (at most 1.2x of
one topic at 120,001) is read there.

A partition's directory and segment file are made by its first write: a topic created and never written
costs one catalog line and memory, no inode. (Made eagerly, two inodes per topic cost 80% of the broker's
time while creating, in ext4's inode allocator, and left 240,000 new inodes for the kernel to write back
in the 30 s after, while the latency was measured.)

| topics on the broker | create | avg latency | avg vs 1 topic | p50 | p99 | max | rec/s | avg at ${int(TOPICS_FIXED_RATE)} rec/s | vs 1 topic | p99 at ${int(TOPICS_FIXED_RATE)} rec/s |
|---|---|---|---|---|---|---|---|---|---|---|
${rows.map(line).join('\n')}${
  rows.some((r) => r.failure?.includes('Too many open files'))
    ? `

The bundled broker keeps files open for every partition, so the open files limit of this machine (see
Machine) caps how many topics it can hold; the sizes marked "not measured" need a broker that opens
segment files lazily, or a higher limit.`
    : ''
}`;
}

async function main(): Promise<void> {
  holdBenchSlot('npm run bench (apache-kafka)');
  await ensureKafkaJars({ log });
  if (only.has('machine')) replaceSection(flags.doc, 'machine', machineSection());
  if (only.has('throughput')) {
    replaceSection(flags.doc, 'throughput', await throughputSection(Number(flags.records)));
  }
  if (only.has('replication')) {
    replaceSection(flags.doc, 'replication', await replicationSection(Number(flags['replication-records'])));
  }
  if (only.has('topics')) {
    const counts = flags['topic-counts'].split(',').map(Number);
    replaceSection(
      flags.doc,
      'topics',
      await topicsSection(counts, Number(flags['create-timeout-min']) * 60_000),
    );
  }
  log(`wrote ${flags.doc}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
