// npm run bench (durability part): what fsync before every acknowledgement costs, with Kafka's own
// ProducerPerformance (1 KB records, acks=all, 6 partitions): the bundled broker's `--fsync batch` against
// Apache Kafka 4.3.1 with log.flush.interval.messages=1 (flush.messages=1 on every topic), and against its
// own `--fsync none`, on one node and on three (RF 3), into the durability section of docs/benchmarks.md.
// Every figure is ProducerPerformance's steady state (after --warmup-records), over several rounds whose
// runs alternate, each round's runs starting at a different target.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  ensureKafkaJars,
  KAFKA_VERSION,
  type ProducerPerformanceSummary,
  producerPerformance,
  startApacheKafka,
} from '@kbench/apache-kafka';
import { startBundledBroker } from '@kbench/broker-launcher';
import { diskOf, type HostUse, hostUse, readHost, returnsFreeMemoryToHost } from '@kbench/engine';
import { BENCHMARKS_DOC, fixed, int, replaceSection } from './doc.js';
import { inRounds, medianBy, WARMUP_SHARE } from './rounds.js';
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
/** Records of a run against one bundled node; the others are scaled to take about as long. */
const ONE_NODE_RECORDS = Number(process.env.KBENCH_BENCH_DURABILITY_RECORDS ?? 2_500_000);
/** Rounds of every run; the tables give each target's median round. */
const ROUNDS = Number(process.env.KBENCH_BENCH_DURABILITY_ROUNDS ?? 3);
const RECORD_SIZE = 1024;
const PARTITIONS = 6;
/** The fixed rate of the latency rows: well under what Apache Kafka with flush.messages=1 sustains here. */
const FIXED_RATE = Number(process.env.KBENCH_BENCH_DURABILITY_RATE ?? 5_000);
const FIXED_RATE_SECONDS = 20;
/** Seconds at the fixed rate before those, left out of its figures (ProducerPerformance --warmup-records). */
const FIXED_RATE_WARMUP_SECONDS = 5;
/**
 * The producer's batch.size in the rows that show where durability's cost comes from: with Java's
 * 16 KB a request carries at most 16 KB per partition and the producer keeps 5 in flight, so under
 * `batch` the time a request waits for the disk, not the broker's work, sets its rate.
 */
const LARGE_BATCH = 65_536;
const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);

type Setup =
  | { kind: 'bundled'; nodes: 1 | 3; fsync: 'none' | 'batch'; batchSize?: number }
  | { kind: 'apache'; flushEveryMessage: true };

interface Run {
  /** ProducerPerformance's steady state: what the tables show. */
  steady: ProducerPerformanceSummary;
  /** The whole run, warm-up included. */
  whole: ProducerPerformanceSummary;
  /** The 1-minute load average when the run started. */
  load: number;
  /** The whole machine during the whole run: the disk under the data directory, and the CPUs. */
  host: HostUse;
  /** Bytes of record values the whole run produced (warm-up included). */
  dataBytes: number;
}

function describe(setup: Setup): string {
  if (setup.kind === 'apache') return `Apache Kafka ${KAFKA_VERSION}, one node, flush.messages=1`;
  const nodes = setup.nodes === 1 ? 'one node' : '3 nodes, RF 3';
  const client = setup.batchSize === undefined ? '' : `, producer batch.size ${setup.batchSize}`;
  return `bundled broker, ${nodes}, \`--fsync ${setup.fsync}\`${client}`;
}

/** Records of a full-speed run: about the same time on every target (Kafka flushing every message is slow). */
function recordsFor(setup: Setup): number {
  const share = setup.kind === 'apache' ? 0.24 : setup.nodes === 3 ? 0.6 : 1;
  return Math.round((ONE_NODE_RECORDS * share) / 1000) * 1000;
}

/**
 * Starts the target empty, creates the topic, runs ProducerPerformance once (as fast as it can, or at
 * `rate` records/s) with a warm-up it leaves out of its steady-state figures, stops it.
 */
async function measure(setup: Setup, rate?: number): Promise<Run> {
  // The previous run's dirty pages (a `none` run leaves gigabytes) would otherwise be written
  // back by the kernel during this one.
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
    const records =
      rate === undefined ? recordsFor(setup) : rate * (FIXED_RATE_WARMUP_SECONDS + FIXED_RATE_SECONDS);
    const warmupRecords =
      rate === undefined ? Math.round(records * WARMUP_SHARE) : rate * FIXED_RATE_WARMUP_SECONDS;
    const pace = rate === undefined ? '' : ` at ${int(rate)} rec/s`;
    const disk = diskOf(dataDir);
    log(
      `durability: ${int(records)} x ${RECORD_SIZE} B (${int(warmupRecords)} warm-up), acks=all${pace} -> ${name} (load ${fixed(load, 1)})`,
    );
    const before = readHost(disk);
    const produced = await producerPerformance({
      bootstrap: target.bootstrap,
      topic: 'durable',
      records,
      recordSize: RECORD_SIZE,
      warmupRecords,
      ...(rate === undefined ? {} : { throughput: rate }),
      producerProps: {
        acks: 'all',
        ...(setup.kind === 'bundled' && setup.batchSize !== undefined
          ? { 'batch.size': String(setup.batchSize) }
          : {}),
      },
      timeoutMs: 30 * 60_000,
    });
    const host = hostUse(before, readHost(disk));
    const { steadyState, tool: _tool, ...whole } = produced;
    log(
      `  steady state ${int(steadyState.recordsPerSec)} rec/s, ${fixed(steadyState.mbPerSec)} MB/s, p99 ${steadyState.p99Ms} ms`,
    );
    return { steady: steadyState, whole, load, host, dataBytes: records * RECORD_SIZE };
  } finally {
    await target.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Every setup once per round, ROUNDS times (at `rate`, or as fast as it can). */
function rounds<K extends string>(setups: Record<K, Setup>, rate?: number): Promise<Record<K, Run[]>> {
  return inRounds(setups, ROUNDS, (setup) => measure(setup, rate));
}

/** A full-speed target's median round is by MB/s; a fixed-rate one's, by p99 (they all reach the rate). */
const median = (runs: Run[], by: 'mbPerSec' | 'p99Ms' = 'mbPerSec') => medianBy(runs, (r) => r.steady[by]);

/** What the disk wrote during a run, over the bytes it produced: `2.03x`, or `–` with no disk to read. */
const diskShare = (r: Run) => (r.host.diskBytes === null ? '–' : `${fixed(r.host.diskBytes / r.dataBytes)}x`);

/** Records waiting on average (Little's law: mean latency x throughput). */
const waiting = (r: Run) => (r.steady.avgLatencyMs / 1000) * r.steady.recordsPerSec;

function section(
  runs: Record<'batch' | 'none' | 'apache' | 'batch3' | 'none3' | 'batchLarge' | 'noneLarge', Run[]>,
  paced: Record<'batchPaced' | 'apachePaced', Run[]>,
): string {
  const ratio = (a: number, b: number) => `${fixed(a / b)}x`;
  const row = (label: string, rs: Run[], by: 'mbPerSec' | 'p99Ms' = 'mbPerSec') => {
    const m = median(rs, by);
    const r = m.steady;
    return (
      `| ${label} | ${rs.map((x) => fixed(x.steady.mbPerSec, 1)).join(' / ')} | ${int(r.recordsPerSec)} | ` +
      `**${fixed(r.mbPerSec)}** | ${fixed(r.avgLatencyMs, 1)} | ${r.p50Ms} | ${r.p99Ms} | ${r.p999Ms} | ` +
      `${fixed(r.maxLatencyMs, 0)} | ${rs.map((x) => fixed(x.whole.mbPerSec, 1)).join(' / ')} | ${diskShare(m)} | ` +
      `${fixed(m.host.cpuBusy * 100, 0)}% |`
    );
  };
  /** Medians' ratio, and each round's own ratio (its two runs were taken one after the other). */
  const vs = (label: string, a: Run[], b: Run[], by: 'mbPerSec' | 'p99Ms' = 'mbPerSec') => {
    const [ma, mb] = [median(a, by).steady, median(b, by).steady];
    const each = a.map((x, i) => ratio(x.steady[by], b[i]!.steady[by])).join(' / ');
    return (
      `| **${label}** | ${each} | | **${ratio(ma.mbPerSec, mb.mbPerSec)}** | ${ratio(ma.avgLatencyMs, mb.avgLatencyMs)} | | ` +
      `**${ratio(ma.p99Ms, mb.p99Ms)}** | | | | | |`
    );
  };
  const { batch, none, apache, batch3, none3, batchLarge, noneLarge } = runs;
  const large = (fsync: 'batch' | 'none') =>
    describe({ kind: 'bundled', nodes: 1, fsync, batchSize: LARGE_BATCH });
  const { batchPaced, apachePaced } = paced;
  const loads = [...Object.values(runs), ...Object.values(paced)].flat().map((r) => r.load);
  const cores = availableParallelism();
  const reporting = returnsFreeMemoryToHost()
    ? 'on (the VM returns freed memory to its host; see "Long write-heavy runs" below)'
    : 'off';
  return `## Durability: fsync before every acknowledgement

ProducerPerformance, one producer, ${RECORD_SIZE} B records, \`acks=all\` (Java defaults otherwise:
idempotence on, batch.size 16384, linger.ms 5), one topic of ${PARTITIONS} partitions. Under \`--fsync batch\` the
bundled broker acknowledges a batch only once it is on disk (each node's journal: one O_DIRECT, O_DSYNC
write for everything appended since the last, across partitions and connections; on 3 nodes, once every
in-sync replica has it). Apache Kafka ${KAFKA_VERSION} runs with \`log.flush.interval.messages=1\`
(flush.messages=1: it flushes the log after every append). Each target starts empty, after \`sync\`.

Every figure is ProducerPerformance's steady state: each run leaves its first ${fixed(WARMUP_SHARE * 100, 0)}% of records out
(\`--warmup-records\`), while the JVMs compile: in a 3-second run on this 2-core machine the producer's C2
compiler alone used 4.5-6 s of CPU, so a short run measures the client's warm-up more than the broker.
Runs: ${int(recordsFor({ kind: 'bundled', nodes: 1, fsync: 'batch' }))} records against one bundled node, ${int(recordsFor({ kind: 'bundled', nodes: 3, fsync: 'batch' }))} against 3, ${int(recordsFor({ kind: 'apache', flushEveryMessage: true }))} against
Apache Kafka flushing every message (about the same time each). ${ROUNDS} round${ROUNDS === 1 ? '' : 's'}: each runs every target once, one
after the other, starting at a different one each round; a row is the target's median round (by MB/s),
with every round's MB/s beside it, and the whole run's (warm-up included) at the end; at the fixed
rate every round reaches the rate, so the median round is by p99. A ratio row divides the medians,
with each round's own ratio beside it (of p99 at the fixed rate). Goals (issue #18): batch at least 4x
Apache Kafka's MB/s with at most a tenth of its p99; durability costing under 25% of the throughput
(batch / none at least 0.75x). Latencies in ms, as ProducerPerformance measures them. The last two
columns are the whole machine's during the median round's whole run (warm-up included), read from /proc:
the bytes the disk under the data directory wrote, over the bytes of records the run produced, and the
share of all ${availableParallelism()} cores that was busy.

| target | MB/s by round | rec/s | MB/s | avg | p50 | p99 | p99.9 | max | whole-run MB/s | disk writes / data | CPU busy |
|---|---|---|---|---|---|---|---|---|---|---|---|
${row(describe({ kind: 'bundled', nodes: 1, fsync: 'batch' }), batch)}
${row(describe({ kind: 'apache', flushEveryMessage: true }), apache)}
${vs('ratio bundled batch / Apache Kafka flush.messages=1', batch, apache)}
${row(describe({ kind: 'bundled', nodes: 1, fsync: 'none' }), none)}
${vs('ratio batch / none, one node', batch, none)}
${row(describe({ kind: 'bundled', nodes: 3, fsync: 'batch' }), batch3)}
${row(describe({ kind: 'bundled', nodes: 3, fsync: 'none' }), none3)}
${vs('ratio batch / none, 3 nodes', batch3, none3)}
${row(large('batch'), batchLarge)}
${row(large('none'), noneLarge)}
${vs(`ratio batch / none, one node, producer batch.size ${LARGE_BATCH}`, batchLarge, noneLarge)}
${row(`${describe({ kind: 'bundled', nodes: 1, fsync: 'batch' })} at ${int(FIXED_RATE)} rec/s`, batchPaced, 'p99Ms')}
${row(`${describe({ kind: 'apache', flushEveryMessage: true })} at ${int(FIXED_RATE)} rec/s`, apachePaced, 'p99Ms')}
${vs(`ratio at ${int(FIXED_RATE)} rec/s, bundled batch / Apache Kafka flush.messages=1`, batchPaced, apachePaced, 'p99Ms')}

Run as fast as it can, ProducerPerformance keeps its buffer (buffer.memory, 32 MB) full whenever the
broker is what holds it back, and a record's latency is then mostly its wait in that queue: by Little's
law the records waiting, mean latency times records/s, were ${int(waiting(median(batch)))} for the bundled broker under
\`batch\` and ${int(waiting(median(apache)))} for Apache Kafka (32 MB holds about 31,000 records of 1 KB). The unthrottled
p99 ratio therefore follows the inverse of the throughput ratio. The last three rows hold both brokers to
the same ${int(FIXED_RATE)} records/s (${fixed((FIXED_RATE * RECORD_SIZE) / 1_048_576, 1)} MB/s, fewer than Kafka sustains here), where the queue stays short and
the latency is the broker's: its wait for the disk (${FIXED_RATE_SECONDS} s after ${FIXED_RATE_WARMUP_SECONDS} s of warm-up).

The rows with producer batch.size ${LARGE_BATCH} (the only setting changed) show where durability's cost
comes from. With Java's 16 KB a produce request carries at most 16 KB per partition (about 90 records
over ${PARTITIONS} partitions), and the producer keeps at most 5 requests in flight; under \`batch\` each
request also waits for the journal's write, so the producer's rate is bounded by 5 requests over that
round trip, and its buffer fills (the p50 above). With ${LARGE_BATCH / 1024} KB batches the same 5 requests
can carry four times as much, and the wait for the disk is spread over more records: records waiting
${int(waiting(median(batchLarge)))} under \`batch\`, against ${int(waiting(median(batch)))} with 16 KB.

The disk column shows what each policy asks of the disk. Under \`batch\` a byte is written about
twice on each node (the journal, then its segment's sync): ${diskShare(median(batch))} of the data on one node.
Under \`none\` the disk wrote ${diskShare(median(none))} of it while the run lasted: its bytes stay in the page cache
until the kernel writes dirty pages back (past its dirty thresholds, a share of free memory, or after
30 s), so most reach the disk after the run, or never once its files are deleted.${
    (median(none).host.diskBytes ?? 1) / median(none).dataBytes < 0.1
      ? ' So batch / none here sets a broker that writes every byte twice against one that writes next to nothing while it is measured.'
      : ''
  }

The 1-minute load average when each run started was ${fixed(Math.min(...loads), 1)} to ${fixed(Math.max(...loads), 1)} on ${cores} cores; free page
reporting was ${reporting}.`;
}

async function main(): Promise<void> {
  holdBenchSlot('npm run bench (durability)');
  if (!String(flags.only).split(',').includes('durability')) return;
  await ensureKafkaJars({ log });
  // The fixed-rate rounds first, on a machine not yet warm from the runs at full speed.
  const paced = await rounds(
    {
      batchPaced: { kind: 'bundled', nodes: 1, fsync: 'batch' },
      apachePaced: { kind: 'apache', flushEveryMessage: true },
    },
    FIXED_RATE,
  );
  const runs = await rounds({
    batch: { kind: 'bundled', nodes: 1, fsync: 'batch' },
    none: { kind: 'bundled', nodes: 1, fsync: 'none' },
    apache: { kind: 'apache', flushEveryMessage: true },
    batch3: { kind: 'bundled', nodes: 3, fsync: 'batch' },
    none3: { kind: 'bundled', nodes: 3, fsync: 'none' },
    batchLarge: { kind: 'bundled', nodes: 1, fsync: 'batch', batchSize: LARGE_BATCH },
    noneLarge: { kind: 'bundled', nodes: 1, fsync: 'none', batchSize: LARGE_BATCH },
  });
  const doc = String(flags.doc);
  replaceSection(doc, 'durability', section(runs, paced));
  log(`wrote ${doc}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
