// CSV export (RFC 4180: comma separated, CRLF line ends, fields quoted when they hold a comma, quote or line break).
// Headers are the snake_case column names of the history tables, so a CSV and a SQL query agree.
import type { RunListItem, Sample } from '@kbench/schema';

type Cell = string | number | boolean | null;

const SAMPLE_HEADER = [
  't',
  'interval_ms',
  'warmup',
  'produced_records',
  'produced_bytes',
  'consumed_records',
  'consumed_bytes',
  'errors',
  'backlog',
  'publish_p50_ms',
  'publish_p99_ms',
  'publish_max_ms',
  'e2e_p50_ms',
  'e2e_p99_ms',
  'e2e_max_ms',
];

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
  'error',
  'tags',
  'notes',
];

/** One row per sample; null latencies are empty fields, warmup is true/false. */
export function samplesToCsv(samples: Sample[]): string {
  return toCsv(
    SAMPLE_HEADER,
    samples.map((s) => [
      s.t,
      s.intervalMs,
      s.warmup,
      s.producedRecords,
      s.producedBytes,
      s.consumedRecords,
      s.consumedBytes,
      s.errors,
      s.backlog,
      s.publishP50Ms,
      s.publishP99Ms,
      s.publishMaxMs,
      s.e2eP50Ms,
      s.e2eP99Ms,
      s.e2eMaxMs,
    ]),
  );
}

/** One row per run with its headline summary figures (empty while running); tags joined with ';'. */
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
        r.error,
        r.tags.join(';'),
        r.notes,
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
