// Converting between the schema's objects and table rows.
import type { DuckDBValue } from '@duckdb/node-api';
import type { FaultEvent, RunListItem, RunRecord, RunStatus, RunSummary, Sample } from '@kbench/schema';

export type Row = Record<string, unknown>;

/** Columns of `runs` written by createRun, in order. */
export const RUN_COLUMNS = [
  'id',
  'status',
  'name',
  'target',
  'driver',
  'source',
  'scenario',
  'environment',
  'summary',
  'produced_rps',
  'produced_mbps',
  'publish_p99_ms',
  'e2e_p99_ms',
  'error',
  'started_at',
  'finished_at',
  'tags',
  'notes',
  'owner_pid',
  'owner_host',
  'faults',
  'sweep_value',
  'series',
] as const;

/** Columns of `runs` a list row needs (everything but the scenario and environment JSON). */
export const RUN_LIST_COLUMNS = [
  'id',
  'status',
  'name',
  'target',
  'driver',
  'source',
  'summary',
  'error',
  'started_at',
  'finished_at',
  'tags',
  'notes',
  'sweep_value',
  'series',
] as const;

/** A select-list item for a run row: the other runs it went on with, as text (`a,b`), null for none. */
export const CONCURRENT_WITH_COLUMN = `(SELECT string_agg(c.other_id, ',' ORDER BY c.other_id)
  FROM concurrent_runs c WHERE c.run_id = runs.id) AS concurrent_with`;

/**
 * The per-sample figures: each table column and how it is read from a Sample. The samples table and
 * the CSV export both follow this list, so their columns cannot drift apart.
 */
export const SAMPLE_FIGURES: readonly (readonly [string, (s: Sample) => number | boolean | null])[] = [
  ['t', (s) => s.t],
  ['interval_ms', (s) => s.intervalMs],
  ['warmup', (s) => s.warmup],
  ['produced_records', (s) => s.producedRecords],
  ['produced_bytes', (s) => s.producedBytes],
  ['consumed_records', (s) => s.consumedRecords],
  ['consumed_bytes', (s) => s.consumedBytes],
  ['errors', (s) => s.errors],
  ['backlog', (s) => s.backlog],
  ['publish_p50_ms', (s) => s.publishP50Ms],
  ['publish_p99_ms', (s) => s.publishP99Ms],
  ['publish_max_ms', (s) => s.publishMaxMs],
  ['e2e_p50_ms', (s) => s.e2eP50Ms],
  ['e2e_p99_ms', (s) => s.e2eP99Ms],
  ['e2e_max_ms', (s) => s.e2eMaxMs],
  ['machine_cpu_busy', (s) => s.machineCpuBusy ?? null],
  ['machine_others_busy', (s) => s.machineOthersBusy ?? null],
  ['disk_written_bytes', (s) => s.diskWrittenBytes ?? null],
];

/** Columns of `samples`: the run, the figures, and the broker's per-node figures as JSON. */
export const SAMPLE_COLUMNS = ['run_id', ...SAMPLE_FIGURES.map(([column]) => column), 'broker'];

/** The headline figures copied out of the summary into their own columns, for sorting and filtering. */
export function headlineValues(summary: RunSummary | null): DuckDBValue[] {
  return [
    summary?.produced.recordsPerSec ?? null,
    summary?.produced.mbPerSec ?? null,
    summary?.publishLatencyMs?.p99 ?? null,
    summary?.endToEndLatencyMs?.p99 ?? null,
  ];
}

export function runValues(run: RunRecord, owner: { pid: number; host: string }): DuckDBValue[] {
  return [
    run.id,
    run.status,
    run.scenario.name,
    run.scenario.target,
    run.scenario.driver,
    run.source,
    JSON.stringify(run.scenario),
    JSON.stringify(run.environment),
    run.summary === null ? null : JSON.stringify(run.summary),
    ...headlineValues(run.summary),
    run.error,
    run.startedAt,
    run.finishedAt,
    JSON.stringify(run.tags),
    run.notes,
    owner.pid,
    owner.host,
    run.faults === undefined ? null : JSON.stringify(run.faults),
    run.sweepValue ?? null,
    run.series ?? null,
  ];
}

export function sampleValues(runId: string, s: Sample): DuckDBValue[] {
  return [
    runId,
    ...SAMPLE_FIGURES.map(([, get]) => get(s)),
    s.broker === undefined ? null : JSON.stringify(s.broker),
  ];
}

export function toRunListItem(row: Row): RunListItem {
  return {
    id: text(row.id),
    status: text(row.status) as RunStatus,
    name: text(row.name),
    target: text(row.target),
    driver: text(row.driver),
    source: textOrNull(row.source),
    summary: row.summary === null ? null : (JSON.parse(text(row.summary)) as RunSummary),
    error: textOrNull(row.error),
    startedAt: text(row.started_at),
    finishedAt: textOrNull(row.finished_at),
    tags: JSON.parse(text(row.tags)) as string[],
    notes: text(row.notes),
    ...concurrentWith(row),
    ...seriesFields(row),
  };
}

/** `{ sweepValue, series }` from a row, each only when the run has it. */
function seriesFields(row: Row): { sweepValue?: string; series?: string } {
  const sweepValue = textOrNull(row.sweep_value);
  const series = textOrNull(row.series);
  return { ...(sweepValue === null ? {} : { sweepValue }), ...(series === null ? {} : { series }) };
}

/** `{ concurrentWith }` from the CONCURRENT_WITH_COLUMN of a row, or nothing for a run alone. */
function concurrentWith(row: Row): { concurrentWith?: string[] } {
  const ids = textOrNull(row.concurrent_with);
  return ids === null || ids === '' ? {} : { concurrentWith: ids.split(',') };
}

export function toRunRecord(row: Row): RunRecord {
  const faults = row.faults === null || row.faults === undefined ? undefined : text(row.faults);
  return {
    id: text(row.id),
    status: text(row.status) as RunStatus,
    scenario: JSON.parse(text(row.scenario)) as RunRecord['scenario'],
    source: textOrNull(row.source),
    environment: JSON.parse(text(row.environment)) as RunRecord['environment'],
    summary: row.summary === null ? null : (JSON.parse(text(row.summary)) as RunSummary),
    error: textOrNull(row.error),
    startedAt: text(row.started_at),
    finishedAt: textOrNull(row.finished_at),
    tags: JSON.parse(text(row.tags)) as string[],
    notes: text(row.notes),
    ...(faults === undefined ? {} : { faults: JSON.parse(faults) as FaultEvent[] }),
    ...concurrentWith(row),
    ...seriesFields(row),
  };
}

export function toSample(row: Row): Sample {
  const broker = row.broker === null || row.broker === undefined ? undefined : text(row.broker);
  return {
    t: num(row.t),
    intervalMs: num(row.interval_ms),
    warmup: row.warmup === true,
    producedRecords: num(row.produced_records),
    producedBytes: num(row.produced_bytes),
    consumedRecords: num(row.consumed_records),
    consumedBytes: num(row.consumed_bytes),
    errors: num(row.errors),
    backlog: num(row.backlog),
    publishP50Ms: numOrNull(row.publish_p50_ms),
    publishP99Ms: numOrNull(row.publish_p99_ms),
    publishMaxMs: numOrNull(row.publish_max_ms),
    e2eP50Ms: numOrNull(row.e2e_p50_ms),
    e2eP99Ms: numOrNull(row.e2e_p99_ms),
    e2eMaxMs: numOrNull(row.e2e_max_ms),
    // Both absent where the machine was not read (older runs); the disk alone is null without one.
    ...(row.machine_cpu_busy === null || row.machine_cpu_busy === undefined
      ? {}
      : {
          machineCpuBusy: num(row.machine_cpu_busy),
          machineOthersBusy: numOrNull(row.machine_others_busy),
          diskWrittenBytes: numOrNull(row.disk_written_bytes),
        }),
    ...(broker === undefined ? {} : { broker: JSON.parse(broker) as Sample['broker'] }),
  };
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : String(value);
}

function textOrNull(value: unknown): string | null {
  return value === null || value === undefined ? null : text(value);
}

/** BIGINT columns come back as bigint; counts fit in a double. */
function num(value: unknown): number {
  return Number(value);
}

function numOrNull(value: unknown): number | null {
  return value === null || value === undefined ? null : num(value);
}
