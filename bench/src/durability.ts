// npm run bench (durability part): what fsync before every acknowledgement costs, with Kafka's own
// ProducerPerformance (1 KB records, acks=all, 6 partitions): the bundled broker's `--fsync batch` against
// Apache Kafka 4.3.1 with log.flush.interval.messages=1 (flush.messages=1 on every topic), and against its
// own `--fsync none`, on one node and on three (RF 3), into the durability section of docs/benchmarks.md.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  ensureKafkaJars,
  KAFKA_VERSION,
  type ProducerPerformanceResult,
  producerPerformance,
  startApacheKafka,
} from '@kbench/apache-kafka';
import { startBundledBroker } from '@kbench/broker-launcher';
import { BENCHMARKS_DOC, fixed, int, replaceSection } from './doc.js';
import { holdBenchSlot } from './slot.js';
import { createTopic } from './topics.js';

// The other benchmarks' flags come along (npm run bench passes them to every part): not strict.
const { values: flags } = parseArgs({
  options: {
    only: { type: 'string', default: 'durability' },
    doc: { type: 'string', default: BENCHMARKS_DOC },
  },
  strict: false,
});
const RECORDS = Number(process.env.KBENCH_BENCH_DURABILITY_RECORDS ?? 300_000);
const RECORD_SIZE = 1024;
const PARTITIONS = 6;
/** The fixed rate of the latency rows: well under what Apache Kafka with flush.messages=1 sustains here. */
const FIXED_RATE = Number(process.env.KBENCH_BENCH_DURABILITY_RATE ?? 5_000);
const FIXED_RATE_SECONDS = 20;
/** Seconds at the fixed rate before those, left out of its figures (ProducerPerformance --warmup-records). */
const FIXED_RATE_WARMUP_SECONDS = 5;
const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);

interface Row {
  target: string;
  produced: ProducerPerformanceResult;
  /** The 1-minute load average when the run started. */
  load: number;
}

type Setup =
  | { kind: 'bundled'; nodes: 1 | 3; fsync: 'none' | 'batch' }
  | { kind: 'apache'; flushEveryMessage: true };

function describe(setup: Setup): string {
  if (setup.kind === 'apache') return `Apache Kafka ${KAFKA_VERSION}, one node, flush.messages=1`;
  const nodes = setup.nodes === 1 ? 'one node' : '3 nodes, RF 3';
  return `bundled broker, ${nodes}, \`--fsync ${setup.fsync}\``;
}

/**
 * Starts the target empty, creates the topic, runs ProducerPerformance once (as fast as it can, or at
 * `rate` records/s), stops it.
 */
async function measure(setup: Setup, rate?: number): Promise<Row> {
  // The previous run's dirty pages (a `none` run leaves hundreds of MB) would otherwise be written
  // back by the kernel during this one, beside its fdatasyncs.
  execFileSync('sync');
  const dataDir = mkdtempSync(join(tmpdir(), `kbench-bench-durability-${setup.kind}-`));
  const target =
    setup.kind === 'bundled'
      ? await startBundledBroker({
          dataDir,
          args: [...(setup.nodes === 3 ? ['--nodes', '3'] : []), '--fsync', setup.fsync],
        })
      : await startApacheKafka({ dataDir, serverProps: { 'log.flush.interval.messages': 1 } });
  const name = describe(setup);
  try {
    const replicated = setup.kind === 'bundled' && setup.nodes === 3;
    await createTopic(
      target.bootstrap,
      'durable',
      PARTITIONS,
      replicated ? { factor: 3, minIsr: 2 } : undefined,
    );
    const load = loadavg()[0]!;
    const warmupRecords = rate === undefined ? undefined : rate * FIXED_RATE_WARMUP_SECONDS;
    const records = rate === undefined ? RECORDS : rate * (FIXED_RATE_WARMUP_SECONDS + FIXED_RATE_SECONDS);
    const pace = rate === undefined ? '' : ` at ${int(rate)} rec/s`;
    log(
      `durability: ${int(records)} x ${RECORD_SIZE} B, acks=all${pace} -> ${name} (load ${fixed(load, 1)})`,
    );
    const produced = await producerPerformance({
      bootstrap: target.bootstrap,
      topic: 'durable',
      records,
      recordSize: RECORD_SIZE,
      ...(rate === undefined ? {} : { throughput: rate, warmupRecords }),
      producerProps: { acks: 'all' },
      timeoutMs: 30 * 60_000,
    });
    if (warmupRecords !== undefined && produced.steadyState === undefined) {
      throw new Error(
        `ProducerPerformance printed no steady-state line after --warmup-records ${warmupRecords}`,
      );
    }
    const figures = { ...produced, ...produced.steadyState };
    log(`  ${int(figures.recordsPerSec)} rec/s, ${fixed(figures.mbPerSec)} MB/s, p99 ${figures.p99Ms} ms`);
    return { target: `${name}${pace}`, produced: figures, load };
  } finally {
    await target.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

interface Rows {
  apache: Row;
  batch: Row;
  none: Row;
  batch3: Row;
  none3: Row;
  /** The same as `apache` and `batch`, at FIXED_RATE. */
  apachePaced: Row;
  batchPaced: Row;
}

/** Records waiting on average (Little's law: mean latency x throughput). */
const waiting = (r: Row) => (r.produced.avgLatencyMs / 1000) * r.produced.recordsPerSec;

function section(rows: Rows): string {
  const ratio = (a: number, b: number) => `${fixed(a / b)}x`;
  const line = (r: Row) =>
    `| ${r.target} | ${int(r.produced.recordsPerSec)} | ${fixed(r.produced.mbPerSec)} | ${fixed(r.produced.avgLatencyMs, 1)} | ` +
    `${r.produced.p50Ms} | ${r.produced.p99Ms} | ${r.produced.p999Ms} | ${fixed(r.produced.maxLatencyMs, 0)} |`;
  const vs = (label: string, a: Row, b: Row) =>
    `| **${label}** | | **${ratio(a.produced.mbPerSec, b.produced.mbPerSec)}** | ${ratio(a.produced.avgLatencyMs, b.produced.avgLatencyMs)} | | ` +
    `**${ratio(a.produced.p99Ms, b.produced.p99Ms)}** | | |`;
  const { apache, batch, none, batch3, none3, apachePaced, batchPaced } = rows;
  const loads = Object.values(rows).map((r) => r.load);
  const cores = availableParallelism();
  return `## Durability: fsync before every acknowledgement

ProducerPerformance, ${int(RECORDS)} records of ${RECORD_SIZE} B, one producer, \`acks=all\` (Java defaults
otherwise: idempotence on, batch.size 16384, linger.ms 5), one topic of ${PARTITIONS} partitions. Under
\`--fsync batch\` the bundled broker acknowledges a batch only once its bytes are on disk (fdatasync by the
group-commit flusher, one per dirty segment for everything written since the last round; on 3 nodes, once
every in-sync replica has synced it). Apache Kafka ${KAFKA_VERSION} runs with
\`log.flush.interval.messages=1\` (flush.messages=1: it flushes the log after every append). Each target
starts empty, after \`sync\` (so no earlier run's dirty pages are written back during it). Goals (issue #18): batch at least 4x Apache Kafka's MB/s with at most a tenth of its p99, and
durability costing under 25% of the throughput (batch / none at least 0.75x). Latencies in ms, as
ProducerPerformance measures them.

| target | rec/s | MB/s | avg | p50 | p99 | p99.9 | max |
|---|---|---|---|---|---|---|---|
${line(batch)}
${line(apache)}
${vs('ratio bundled batch / Apache Kafka flush.messages=1', batch, apache)}
${line(none)}
${vs('ratio batch / none, one node', batch, none)}
${line(batch3)}
${line(none3)}
${vs('ratio batch / none, 3 nodes', batch3, none3)}
${line(batchPaced)}
${line(apachePaced)}
${vs(`ratio at ${int(FIXED_RATE)} rec/s, bundled batch / Apache Kafka flush.messages=1`, batchPaced, apachePaced)}

Run as fast as it can, ProducerPerformance keeps its buffer (buffer.memory, 32 MB) full, and a record's
latency is mostly its wait in that queue: by Little's law the records waiting, mean latency times
records/s, were ${int(waiting(batch))} for the bundled broker and ${int(waiting(apache))} for Apache Kafka (32 MB holds
about 31,000 records of 1 KB). The unthrottled p99 ratio therefore follows the inverse of the
throughput ratio, and a tenth of Kafka's p99 would take ten times its MB/s. The last three rows hold
both brokers to the same ${int(FIXED_RATE)} records/s (${fixed((FIXED_RATE * RECORD_SIZE) / 1_048_576, 1)} MB/s, fewer than Kafka sustains here), where the
queue stays short and the latency is the broker's: its wait for the disk. Their figures are
ProducerPerformance's steady state: ${FIXED_RATE_SECONDS} s after ${FIXED_RATE_WARMUP_SECONDS} s of warm-up (\`--warmup-records\`), which it leaves out.

The 1-minute load average when each run started was ${fixed(Math.min(...loads), 1)} to ${fixed(Math.max(...loads), 1)} on ${cores} cores.`;
}

async function main(): Promise<void> {
  holdBenchSlot('npm run bench (durability)');
  if (!String(flags.only).split(',').includes('durability')) return;
  await ensureKafkaJars({ log });
  // The fixed-rate pair first, on a machine not yet warm from the runs at full speed.
  const batchPaced = await measure({ kind: 'bundled', nodes: 1, fsync: 'batch' }, FIXED_RATE);
  const apachePaced = await measure({ kind: 'apache', flushEveryMessage: true }, FIXED_RATE);
  const batch = await measure({ kind: 'bundled', nodes: 1, fsync: 'batch' });
  const apache = await measure({ kind: 'apache', flushEveryMessage: true });
  const none = await measure({ kind: 'bundled', nodes: 1, fsync: 'none' });
  const batch3 = await measure({ kind: 'bundled', nodes: 3, fsync: 'batch' });
  const none3 = await measure({ kind: 'bundled', nodes: 3, fsync: 'none' });
  const doc = String(flags.doc);
  replaceSection(doc, 'durability', section({ apache, batch, none, batch3, none3, apachePaced, batchPaced }));
  log(`wrote ${doc}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
