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
  type ProducerPerformanceSummary,
  producerPerformance,
  runKafkaTool,
  startApacheKafka,
} from '@kbench/apache-kafka';
import { bundledBrokerBinary, startBundledBroker } from '@kbench/broker-launcher';
import { BENCHMARKS_DOC, fixed, int, replaceSection } from './doc.js';
import { describeMachine } from './machine.js';
import { inRounds, medianBy, WARMUP_SHARE } from './rounds.js';
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
/** Rounds of the throughput and replication comparisons; each table row is the target's median round. */
const ROUNDS = Number(process.env.KBENCH_BENCH_ROUNDS ?? 3);
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
  /** ProducerPerformance's steady state, after the warm-up. */
  steady: ProducerPerformanceSummary;
  consumedPerSec: number;
  consumedMbPerSec: number;
  consumed: number;
}

/** Each round's ratio of `value` between the two targets' runs of that round. */
function perRound<T>(a: T[], b: T[], value: (item: T) => number): string {
  return a.map((x, i) => `${fixed(value(x) / value(b[i]!))}x`).join(' / ');
}

async function throughputRun(kind: 'bundled' | 'apache', records: number): Promise<ThroughputRow> {
  return withTarget(kind, async (target) => {
    log(`throughput: ${records} x 100 B, acks=1, 6 partitions -> ${target.name}`);
    await createTopic(target.bootstrap, 'throughput', 6);
    const produced = await producerPerformance({
      bootstrap: target.bootstrap,
      topic: 'throughput',
      records,
      recordSize: 100,
      warmupRecords: Math.round(records * WARMUP_SHARE),
      producerProps: { acks: 1 },
      timeoutMs: 30 * 60_000,
    });
    const steady = produced.steadyState;
    log(`  produced ${int(steady.recordsPerSec)} rec/s in steady state; consuming`);
    const consumed = await consumerPerformance({
      bootstrap: target.bootstrap,
      topic: 'throughput',
      messages: records,
      timeoutMs: 30 * 60_000,
    });
    return {
      target: target.name,
      produced,
      steady,
      consumed: consumed.messages,
      consumedPerSec: consumed.messagesPerSec,
      consumedMbPerSec: consumed.mbPerSec,
    };
  });
}

async function throughputSection(records: number): Promise<string> {
  const runs = await inRounds({ bundled: 'bundled', apache: 'apache' } as const, ROUNDS, (kind) =>
    throughputRun(kind, records),
  );
  const median = (rows: ThroughputRow[]) => medianBy(rows, (r) => r.steady.recordsPerSec);
  const [bundled, apache] = [median(runs.bundled), median(runs.apache)];
  const ratio = (a: number, b: number) => `${fixed(a / b)}x`;
  const line = (r: ThroughputRow, all: ThroughputRow[]) =>
    `| ${r.target} | ${all.map((x) => int(x.steady.recordsPerSec)).join(' / ')} | **${int(r.steady.recordsPerSec)}** | ` +
    `${fixed(r.steady.mbPerSec)} | ${fixed(r.steady.avgLatencyMs, 1)} | ${r.steady.p50Ms} | ${r.steady.p99Ms} | ` +
    `${r.steady.p999Ms} | ${fixed(r.steady.maxLatencyMs, 0)} | ${int(r.produced.recordsPerSec)} | ` +
    `${int(r.consumedPerSec)} | ${fixed(r.consumedMbPerSec)} |`;
  return `## Producer throughput: bundled broker vs Apache Kafka ${KAFKA_VERSION}

ProducerPerformance, ${int(records)} records of 100 B, one producer, \`acks=1\` (Java defaults otherwise:
batch.size 16384, linger.ms 5, idempotence off because acks is not all), one topic with 6 partitions, one
node; then ConsumerPerformance reads the same ${int(records)} records back (one consumer, Java defaults). Each
broker starts empty in its own temporary directory; Apache Kafka runs with kafka-server-start.sh's 1 GB heap.
The producer figures are ProducerPerformance's steady state: the first ${fixed(WARMUP_SHARE * 100, 0)}% of the records are left out
(\`--warmup-records\`), while the JVMs compile (the broker's too, for Apache Kafka); "whole run" includes them.
${ROUNDS} round${ROUNDS === 1 ? '' : 's'}, each running both brokers one after the other, starting with a different one each round; a
row is the broker's median round (by steady-state rec/s), with every round's rate beside it. Latencies in
ms, as ProducerPerformance measures them (send to ack, including time queued in the client).

| target | produce rec/s by round | produce rec/s | MB/s | avg | p50 | p99 | p99.9 | max | whole-run rec/s | consume rec/s | consume MB/s |
|---|---|---|---|---|---|---|---|---|---|---|---|
${line(bundled, runs.bundled)}
${line(apache, runs.apache)}
| **ratio bundled / Apache Kafka** | ${perRound(runs.bundled, runs.apache, (r) => r.steady.recordsPerSec)} | **${ratio(bundled.steady.recordsPerSec, apache.steady.recordsPerSec)}** | | ${ratio(bundled.steady.avgLatencyMs, apache.steady.avgLatencyMs)} | | ${ratio(bundled.steady.p99Ms, apache.steady.p99Ms)} | | | ${ratio(bundled.produced.recordsPerSec, apache.produced.recordsPerSec)} | **${ratio(bundled.consumedPerSec, apache.consumedPerSec)}** | |

Consumed in the median rounds: ${int(bundled.consumed)} (bundled), ${int(apache.consumed)} (Apache Kafka).`;
}

interface ReplicationRow {
  target: string;
  produced: ProducerPerformanceResult;
  steady: ProducerPerformanceSummary;
}

/** ProducerPerformance with acks=all (the Java defaults: idempotence on) to RF 3, min ISR 2, on 3 nodes. */
async function replicatedRun(target: Target, records: number): Promise<ReplicationRow> {
  log(`replication: ${records} x 100 B, acks=all, RF 3 -> ${target.name}`);
  await createTopic(target.bootstrap, 'replicated', 6, { factor: 3, minIsr: 2 });
  const produced = await producerPerformance({
    bootstrap: target.bootstrap,
    topic: 'replicated',
    records,
    recordSize: 100,
    warmupRecords: Math.round(records * WARMUP_SHARE),
    producerProps: { acks: 'all' },
    timeoutMs: 30 * 60_000,
  });
  const steady = produced.steadyState;
  log(`  ${int(steady.recordsPerSec)} rec/s in steady state, p99 ${steady.p99Ms} ms`);
  return { target: target.name, produced, steady };
}

async function replicationSection(records: number): Promise<string> {
  const runs = await inRounds({ bundled: 'bundled', apache: 'apache' } as const, ROUNDS, (kind) =>
    withCluster(kind, 'none', (t) => replicatedRun(t, records)),
  );
  const median = (rows: ReplicationRow[]) => medianBy(rows, (r) => r.steady.recordsPerSec);
  const [bundled, apache] = [median(runs.bundled), median(runs.apache)];
  const ratio = (a: number, b: number) => `${fixed(a / b)}x`;
  const line = (r: ReplicationRow, all: ReplicationRow[]) =>
    `| ${r.target} | ${all.map((x) => int(x.steady.recordsPerSec)).join(' / ')} | **${int(r.steady.recordsPerSec)}** | ` +
    `${fixed(r.steady.mbPerSec)} | ${fixed(r.steady.avgLatencyMs, 1)} | ${r.steady.p50Ms} | ${r.steady.p99Ms} | ` +
    `${r.steady.p999Ms} | ${fixed(r.steady.maxLatencyMs, 0)} | ${int(r.produced.recordsPerSec)} |`;
  return `## Replication: 3 nodes, RF 3, acks=all

ProducerPerformance, ${int(records)} records of 100 B with \`acks=all\` (Java defaults otherwise: idempotence on,
batch.size 16384, linger.ms 5), one topic of 6 partitions with replication factor 3 and min.insync.replicas 2,
three nodes on this one machine: the bundled cluster (three nodes in one kbench-broker process, page cache)
and three Apache Kafka ${KAFKA_VERSION} KRaft nodes (each broker and controller, each its own JVM). Steady-state
figures after ${fixed(WARMUP_SHARE * 100, 0)}% of the records as warm-up, ${ROUNDS} round${ROUNDS === 1 ? '' : 's'} as in the throughput section; the
durability section below has the bundled cluster with \`--fsync batch\`. Latencies in ms, as
ProducerPerformance measures them.

| target | rec/s by round | rec/s | MB/s | avg | p50 | p99 | p99.9 | max | whole-run rec/s |
|---|---|---|---|---|---|---|---|---|---|
${line(bundled, runs.bundled)}
${line(apache, runs.apache)}
| **ratio bundled / Apache Kafka** | ${perRound(runs.bundled, runs.apache, (r) => r.steady.recordsPerSec)} | **${ratio(bundled.steady.recordsPerSec, apache.steady.recordsPerSec)}** | | ${ratio(bundled.steady.avgLatencyMs, apache.steady.avgLatencyMs)} | | ${ratio(bundled.steady.p99Ms, apache.steady.p99Ms)} | | | ${ratio(bundled.produced.recordsPerSec, apache.produced.recordsPerSec)} |`;
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
