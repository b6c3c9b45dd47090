// CSV export (RFC 4180: comma separated, CRLF line ends, fields quoted when they hold a comma, quote or line break).
// Headers are the snake_case column names of the history tables, so a CSV and a SQL query agree.
import type { BrokerNodeSample, FaultEvent, RunListItem, Sample } from '@kbench/schema';
import { SAMPLE_FIGURES } from './rows.js';

type Cell = string | number | boolean | null;

const RUN_HEADER = [
  'id',
  'status',
  'name',
  'target',
  'driver',
  'source',
  'started_at',
  'finished_at',
  'measured_seconds',
  'produced_records',
  'produced_rps',
  'produced_mbps',
  'produced_errors',
  'consumed_records',
  'consumed_rps',
  'consumed_mbps',
  'publish_p50_ms',
  'publish_p99_ms',
  'publish_max_ms',
  'e2e_p50_ms',
  'e2e_p99_ms',
  'e2e_max_ms',
  'verify_verdict',
  'verify_acknowledged',
  'verify_lost',
  'verify_duplicated',
  'verify_reordered',
  'error',
  'tags',
  'notes',
  'concurrent_with',
  'machine_cpu_busy',
  'disk_written_bytes',
];

/** Broker figures per node, as `node<id>_<figure>` columns; empty where a node was down or did not count it. */
const BROKER_FIGURES: [string, (b: BrokerNodeSample) => Cell][] = [
  ['bytes_in_per_sec', (b) => b.bytesInPerSec],
  ['bytes_out_per_sec', (b) => b.bytesOutPerSec],
  ['replicated_bytes_per_sec', (b) => b.replicatedBytesPerSec ?? null],
  ['fsyncs', (b) => b.fsyncs ?? null],
  ['fsync_mean_ms', (b) => b.fsyncMeanMs ?? null],
  ['fsync_max_ms', (b) => b.fsyncMaxMs ?? null],
  ['under_replicated', (b) => b.underReplicated ?? null],
  ['isr_shrinks', (b) => b.isrShrinks ?? null],
  ['isr_expands', (b) => b.isrExpands ?? null],
  ['log_size_bytes', (b) => b.logSizeBytes ?? null],
];

/**
 * One row per sample; null latencies are empty fields, warmup is true/false. Samples of the bundled
 * broker or cluster add a group of `node<id>_...` columns per node.
 */
export function samplesToCsv(samples: Sample[]): string {
  const nodes = [...new Set(samples.flatMap((s) => (s.broker ?? []).map((b) => b.node)))].sort(
    (a, b) => a - b,
  );
  const brokerHeader = nodes.flatMap((n) => BROKER_FIGURES.map(([name]) => `node${n}_${name}`));
  const brokerCells = (s: Sample): Cell[] =>
    nodes.flatMap((n) => {
      const b = s.broker?.find((x) => x.node === n);
      return BROKER_FIGURES.map(([, get]) => (b ? get(b) : null));
    });
  return toCsv(
    [...SAMPLE_FIGURES.map(([column]) => column), ...brokerHeader],
    samples.map((s) => [...SAMPLE_FIGURES.map(([, get]) => get(s)), ...brokerCells(s)]),
  );
}

/**
 * One row per run with its headline summary figures (empty while running); tags and the runs it went
 * on at the same time as (concurrent_with) joined with ';'.
 */
export function runsToCsv(runs: RunListItem[]): string {
  return toCsv(
    RUN_HEADER,
    runs.map((r) => {
      const s = r.summary;
      return [
        r.id,
        r.status,
        r.name,
        r.target,
        r.driver,
        r.source,
        r.startedAt,
        r.finishedAt,
        s?.measuredSeconds ?? null,
        s?.produced.records ?? null,
        s?.produced.recordsPerSec ?? null,
        s?.produced.mbPerSec ?? null,
        s?.produced.errors ?? null,
        s?.consumed.records ?? null,
        s?.consumed.recordsPerSec ?? null,
        s?.consumed.mbPerSec ?? null,
        s?.publishLatencyMs?.p50 ?? null,
        s?.publishLatencyMs?.p99 ?? null,
        s?.publishLatencyMs?.max ?? null,
        s?.endToEndLatencyMs?.p50 ?? null,
        s?.endToEndLatencyMs?.p99 ?? null,
        s?.endToEndLatencyMs?.max ?? null,
        s?.verification?.verdict ?? null,
        s?.verification?.totals?.acknowledged ?? null,
        s?.verification?.totals?.lost ?? null,
        s?.verification?.totals?.duplicated ?? null,
        s?.verification?.totals?.reordered ?? null,
        r.error,
        r.tags.join(';'),
        r.notes,
        (r.concurrentWith ?? []).join(';'),
        s?.machine?.cpuBusy ?? null,
        s?.machine?.diskWrittenBytes ?? null,
      ];
    }),
  );
}

const FAULT_HEADER = [
  't',
  'action',
  'target',
  'node',
  'duration_ms',
  'error',
  'window_end_t',
  'no_ack_sec',
  'level_per_sec',
  'recovery_sec',
  'recovery_note',
  'publish_p99_ms',
  'publish_max_ms',
  'e2e_p99_ms',
  'e2e_max_ms',
  'errors',
  'retried_records',
  'leader_election_ms',
  'leader_note',
  'waited_ms',
];

/** One row per executed fault with its recovery figures (docs/scenarios.md#recovery-figures); empty where not measured. */
export function faultsToCsv(faults: FaultEvent[]): string {
  return toCsv(
    FAULT_HEADER,
    faults.map((f) => {
      const r = f.recovery;
      return [
        f.t,
        f.action,
        f.target,
        f.node,
        f.durationMs,
        f.error,
        r?.windowEndT ?? null,
        r?.noAckSec ?? null,
        r?.levelPerSec ?? null,
        r?.recoverySec ?? null,
        r?.recoveryNote ?? null,
        r?.publishP99Ms ?? null,
        r?.publishMaxMs ?? null,
        r?.e2eP99Ms ?? null,
        r?.e2eMaxMs ?? null,
        r?.errors ?? null,
        r?.retries ?? null,
        r?.leaderElectionMs ?? null,
        r?.leaderNote ?? null,
        f.waitedMs ?? null,
      ];
    }),
  );
}

function toCsv(header: string[], rows: Cell[][]): string {
  return [header, ...rows].map((row) => `${row.map(field).join(',')}\r\n`).join('');
}

function field(value: Cell): string {
  if (value === null) return '';
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}
