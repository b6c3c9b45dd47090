// The run history: one DuckDB file shared by the CLI and the server, opened only for the length of each call.
import { mkdir } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname, resolve } from 'node:path';
import { blobValue, DuckDBBlobValue, type DuckDBConnection, type DuckDBValue } from '@duckdb/node-api';
import type {
  Environment,
  FaultEvent,
  RunListItem,
  RunRecord,
  RunStatus,
  RunSummary,
  Sample,
} from '@kbench/schema';
import { AmbiguousRunIdError, HistoryFolderError, HistoryTooNewError, RunNotFoundError } from './errors.js';
import { currentVersion, LATEST_SCHEMA_VERSION, migrate } from './migrations.js';
import { defaultHistoryPath } from './paths.js';
import {
  CONCURRENT_WITH_COLUMN,
  headlineValues,
  type Row,
  RUN_COLUMNS,
  RUN_LIST_COLUMNS,
  runValues,
  SAMPLE_COLUMNS,
  sampleValues,
  toRunListItem,
  toRunRecord,
  toSample,
} from './rows.js';
import { DEFAULT_LOCK_TIMEOUT_MS, inTransaction, type SessionOptions, withConnection } from './session.js';

export interface HistoryOptions {
  /** How long a call waits while another process holds the file (default 15 s). */
  lockTimeoutMs?: number;
}

export interface RunFilter {
  status?: RunStatus;
  /** Case-insensitive substring of the name, id, target or tags. */
  search?: string;
  /** Runs of the series whose id starts with this (a reproduction's `reproduce:<folder>:`). */
  seriesPrefix?: string;
  limit?: number;
}

export interface RunEnd {
  status: RunStatus;
  summary: RunSummary | null;
  error: string | null;
  finishedAt: string;
  /** The environment as the run found it (bootstrap address, broker version), when known only at the end. */
  environment?: Environment;
  /** The faults the run executed. */
  faults?: FaultEvent[];
}

/**
 * A sample's latency histograms as stored: opaque bytes in the engine's compact encoding
 * (@kbench/engine histogram-codec), null when that side recorded nothing in the interval.
 */
export interface SampleHistograms {
  t: number;
  warmup: boolean;
  publish: Uint8Array | null;
  e2e: Uint8Array | null;
}

/** Rows per INSERT when appending samples (20 parameters each). */
const SAMPLE_ROWS_PER_INSERT = 256;

export class History {
  private readonly session: SessionOptions;

  private constructor(
    readonly path: string,
    options: HistoryOptions,
  ) {
    this.session = { lockTimeoutMs: options.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS };
  }

  /** Opens (creating if needed) the history at `path`, brings its schema up to date and marks abandoned runs. */
  static async open(path: string = defaultHistoryPath(), options: HistoryOptions = {}): Promise<History> {
    const absolute = resolve(path);
    await mkdir(dirname(absolute), { recursive: true }).catch((err: NodeJS.ErrnoException) => {
      // A file where the folder (or one above it) should be: say so, rather than EEXIST and a stack.
      if (err.code === 'EEXIST' || err.code === 'ENOTDIR') throw new HistoryFolderError(dirname(absolute));
      throw err;
    });
    const history = new History(absolute, options);
    await history.use(async (connection) => {
      const version = await currentVersion(connection);
      if (version > LATEST_SCHEMA_VERSION)
        throw new HistoryTooNewError(absolute, version, LATEST_SCHEMA_VERSION);
      await migrate(connection, () => new Date().toISOString());
      await markAbandoned(connection);
    });
    return history;
  }

  /**
   * Stores a new run (normally with status 'running'), owned by this process until it finishes. Its
   * `concurrentWith` is recorded on the other runs too.
   */
  createRun(run: RunRecord): Promise<void> {
    const placeholders = RUN_COLUMNS.map((_, i) => `$${i + 1}`).join(', ');
    return this.use((connection) =>
      inTransaction(connection, async () => {
        await connection.run(
          `INSERT INTO runs (${RUN_COLUMNS.join(', ')}) VALUES (${placeholders})`,
          runValues(run, { pid: process.pid, host: hostname() }),
        );
        await insertConcurrent(connection, run.id, run.concurrentWith ?? []);
      }),
    );
  }

  /** The runs recorded as going on at the same time as this one, sorted (empty for a run alone). */
  concurrentWith(runId: string): Promise<string[]> {
    return this.use(async (connection) => {
      const reader = await connection.runAndReadAll(
        'SELECT other_id FROM concurrent_runs WHERE run_id = $1 ORDER BY other_id',
        [runId],
      );
      return (reader.getRowObjectsJS() as Row[]).map((row) => String(row.other_id));
    });
  }

  /** Adds samples to a run in one transaction. A sample whose t is already stored replaces it. */
  appendSamples(runId: string, samples: Sample[]): Promise<void> {
    if (samples.length === 0) return Promise.resolve();
    // The last sample for a given t wins, as it would across two calls.
    const byT = new Map<number, Sample>();
    for (const sample of samples) byT.set(sample.t, sample);
    const unique = [...byT.values()];
    return this.use((connection) =>
      inTransaction(connection, async () => {
        await requireRun(connection, runId);
        for (let start = 0; start < unique.length; start += SAMPLE_ROWS_PER_INSERT) {
          const chunk = unique.slice(start, start + SAMPLE_ROWS_PER_INSERT);
          const width = SAMPLE_COLUMNS.length;
          const rows = chunk.map(
            (_, r) => `(${SAMPLE_COLUMNS.map((_, c) => `$${r * width + c + 1}`).join(', ')})`,
          );
          await connection.run(
            `INSERT OR REPLACE INTO samples (${SAMPLE_COLUMNS.join(', ')}) VALUES ${rows.join(', ')}`,
            chunk.flatMap((sample) => sampleValues(runId, sample)),
          );
        }
      }),
    );
  }

  /** Adds samples' histograms to a run in one transaction; a t already stored is replaced. */
  appendHistograms(runId: string, rows: SampleHistograms[]): Promise<void> {
    if (rows.length === 0) return Promise.resolve();
    const byT = new Map<number, SampleHistograms>();
    for (const row of rows) byT.set(row.t, row);
    const unique = [...byT.values()];
    const blob = (bytes: Uint8Array | null) => (bytes === null ? null : blobValue(bytes));
    return this.use((connection) =>
      inTransaction(connection, async () => {
        await requireRun(connection, runId);
        for (let start = 0; start < unique.length; start += SAMPLE_ROWS_PER_INSERT) {
          const chunk = unique.slice(start, start + SAMPLE_ROWS_PER_INSERT);
          const placeholders = chunk.map(
            (_, r) => `(${[1, 2, 3, 4, 5].map((c) => `$${r * 5 + c}`).join(', ')})`,
          );
          await connection.run(
            `INSERT OR REPLACE INTO sample_histograms (run_id, t, warmup, publish, e2e) VALUES ${placeholders.join(', ')}`,
            chunk.flatMap((row) => [runId, row.t, row.warmup, blob(row.publish), blob(row.e2e)]),
          );
        }
      }),
    );
  }

  /** A run's stored sample histograms in time order (empty for a run stored without them). */
  getHistograms(runId: string): Promise<SampleHistograms[]> {
    return this.use(async (connection) => {
      const reader = await connection.runAndReadAll(
        'SELECT t, warmup, publish, e2e FROM sample_histograms WHERE run_id = $1 ORDER BY t',
        [runId],
      );
      return reader.getRows().map(([t, warmup, publish, e2e]) => ({
        t: Number(t),
        warmup: warmup === true,
        publish: blobBytes(publish),
        e2e: blobBytes(e2e),
      }));
    });
  }

  /** Records how a run ended and its summary. */
  finishRun(runId: string, end: RunEnd): Promise<void> {
    return this.use((connection) =>
      inTransaction(connection, async () => {
        await requireRun(connection, runId);
        await connection.run(
          `UPDATE runs SET status = $1, summary = $2, produced_rps = $3, produced_mbps = $4,
             publish_p99_ms = $5, e2e_p99_ms = $6, error = $7, finished_at = $8,
             environment = coalesce($10, environment), faults = coalesce($11, faults)
           WHERE id = $9`,
          [
            end.status,
            end.summary === null ? null : JSON.stringify(end.summary),
            ...headlineValues(end.summary),
            end.error,
            end.finishedAt,
            runId,
            end.environment === undefined ? null : JSON.stringify(end.environment),
            end.faults === undefined ? null : JSON.stringify(end.faults),
          ],
        );
      }),
    );
  }

  /** Runs, newest first. */
  listRuns(filter: RunFilter = {}): Promise<RunListItem[]> {
    const where: string[] = [];
    const values: DuckDBValue[] = [];
    if (filter.status !== undefined) {
      values.push(filter.status);
      where.push(`status = $${values.length}`);
    }
    if (filter.search !== undefined && filter.search !== '') {
      values.push(filter.search.toLowerCase());
      const p = `$${values.length}`;
      where.push(
        `(contains(lower(name), ${p}) OR contains(lower(id), ${p}) OR contains(lower(target), ${p}) OR contains(lower(tags), ${p}))`,
      );
    }
    if (filter.seriesPrefix !== undefined) {
      values.push(filter.seriesPrefix);
      where.push(`starts_with(series, $${values.length})`);
    }
    let sql = `SELECT ${RUN_LIST_COLUMNS.join(', ')}, ${CONCURRENT_WITH_COLUMN} FROM runs`;
    if (where.length > 0) sql += ` WHERE ${where.join(' AND ')}`;
    sql += ' ORDER BY started_at DESC, id DESC';
    if (filter.limit !== undefined) {
      values.push(Math.max(0, Math.floor(filter.limit)));
      sql += ` LIMIT $${values.length}`;
    }
    return this.use(async (connection) => {
      const reader = await connection.runAndReadAll(sql, values);
      return (reader.getRowObjectsJS() as Row[]).map(toRunListItem);
    });
  }

  /**
   * The run with this id, or with an id starting with this prefix. Null when none matches; throws
   * AmbiguousRunIdError when the prefix matches several runs (however short it is: `d0e` matching
   * two runs says so rather than "no run").
   */
  getRun(idOrPrefix: string): Promise<RunRecord | null> {
    const columns = `${RUN_COLUMNS.join(', ')}, ${CONCURRENT_WITH_COLUMN}`;
    return this.use(async (connection) => {
      const exact = await connection.runAndReadAll(`SELECT ${columns} FROM runs WHERE id = $1`, [idOrPrefix]);
      const exactRow = (exact.getRowObjectsJS() as Row[])[0];
      if (exactRow !== undefined) return toRunRecord(exactRow);
      if (idOrPrefix.length === 0) return null;
      const byPrefix = await connection.runAndReadAll(
        `SELECT ${columns} FROM runs WHERE starts_with(id, $1) ORDER BY id LIMIT 10`,
        [idOrPrefix],
      );
      const rows = byPrefix.getRowObjectsJS() as Row[];
      if (rows.length > 1) {
        throw new AmbiguousRunIdError(
          idOrPrefix,
          rows.map((row) => String(row.id)),
        );
      }
      const only = rows[0];
      return only === undefined ? null : toRunRecord(only);
    });
  }

  /** A run's samples in time order (empty for an unknown run). */
  getSamples(runId: string): Promise<Sample[]> {
    return this.use(async (connection) => {
      const reader = await connection.runAndReadAll(
        `SELECT ${SAMPLE_COLUMNS.join(', ')} FROM samples WHERE run_id = $1 ORDER BY t`,
        [runId],
      );
      return (reader.getRowObjectsJS() as Row[]).map(toSample);
    });
  }

  /**
   * Deletes a run and its samples. False if there was no such run. The runs it went on with keep
   * naming it: their figures were still shared.
   */
  deleteRun(runId: string): Promise<boolean> {
    return this.use((connection) =>
      inTransaction(connection, async () => {
        await connection.run('DELETE FROM samples WHERE run_id = $1', [runId]);
        await connection.run('DELETE FROM sample_histograms WHERE run_id = $1', [runId]);
        await connection.run('DELETE FROM concurrent_runs WHERE run_id = $1', [runId]);
        const result = await connection.run('DELETE FROM runs WHERE id = $1', [runId]);
        return result.rowsChanged > 0;
      }),
    );
  }

  setTags(runId: string, tags: string[]): Promise<void> {
    return this.updateRun(runId, 'tags', JSON.stringify(tags));
  }

  setNotes(runId: string, notes: string): Promise<void> {
    return this.updateRun(runId, 'notes', notes);
  }

  /**
   * Marks 'running' runs whose owning process is gone (same host, pid not alive) as 'aborted',
   * finished at the time of their last sample. Returns how many it marked.
   */
  markAbandonedRuns(): Promise<number> {
    return this.use((connection) => markAbandoned(connection));
  }

  schemaVersion(): Promise<number> {
    return this.use((connection) => currentVersion(connection));
  }

  private updateRun(runId: string, column: 'tags' | 'notes', value: string): Promise<void> {
    return this.use(async (connection) => {
      const result = await connection.run(`UPDATE runs SET ${column} = $1 WHERE id = $2`, [value, runId]);
      if (result.rowsChanged === 0) throw new RunNotFoundError(runId);
    });
  }

  private use<T>(work: (connection: DuckDBConnection) => Promise<T>): Promise<T> {
    return withConnection(this.path, this.session, work);
  }
}

function blobBytes(value: DuckDBValue | undefined): Uint8Array | null {
  if (value === null || value === undefined) return null;
  if (value instanceof DuckDBBlobValue) return value.bytes;
  throw new Error(`a stored histogram is not a BLOB: ${String(value)}`);
}

/** Both directions of each pair; a pair already stored stays as it is. */
async function insertConcurrent(
  connection: DuckDBConnection,
  runId: string,
  others: string[],
): Promise<void> {
  for (const other of new Set(others)) {
    if (other === runId) continue;
    await connection.run(
      'INSERT OR IGNORE INTO concurrent_runs (run_id, other_id) VALUES ($1, $2), ($2, $1)',
      [runId, other],
    );
  }
}

async function requireRun(connection: DuckDBConnection, runId: string): Promise<void> {
  const reader = await connection.runAndReadAll('SELECT 1 FROM runs WHERE id = $1', [runId]);
  if (reader.currentRowCount === 0) throw new RunNotFoundError(runId);
}

async function markAbandoned(connection: DuckDBConnection): Promise<number> {
  const reader = await connection.runAndReadAll(
    `SELECT r.id, r.started_at, r.owner_pid, max(s.t) AS last_t
     FROM runs r LEFT JOIN samples s ON s.run_id = r.id
     WHERE r.status = 'running' AND r.owner_host = $1
     GROUP BY r.id, r.started_at, r.owner_pid`,
    [hostname()],
  );
  const abandoned = (reader.getRowObjectsJS() as Row[]).filter(
    (row) => row.owner_pid !== null && !processAlive(Number(row.owner_pid)),
  );
  if (abandoned.length === 0) return 0;
  await inTransaction(connection, async () => {
    for (const row of abandoned) {
      const startedAt = String(row.started_at);
      const lastT = row.last_t === null ? 0 : Number(row.last_t);
      await connection.run(
        `UPDATE runs SET status = 'aborted', finished_at = $1, error = coalesce(error, $2)
         WHERE id = $3 AND status = 'running'`,
        [
          offsetIso(startedAt, lastT),
          `The process running it (pid ${String(row.owner_pid)}) ended without finishing the run`,
          String(row.id),
        ],
      );
    }
  });
  return abandoned.length;
}

/** startedAt plus some seconds, as ISO text (startedAt itself if it does not parse). */
function offsetIso(startedAt: string, seconds: number): string {
  const ms = Date.parse(startedAt);
  return Number.isNaN(ms) ? startedAt : new Date(ms + Math.round(seconds * 1000)).toISOString();
}

function processAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
