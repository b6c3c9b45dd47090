// The history's schema, as an ordered list of migrations. Append new ones; never edit an applied one.
import type { DuckDBConnection } from '@duckdb/node-api';
import { inTransaction } from './session.js';

export interface Migration {
  version: number;
  description: string;
  statements: string[];
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'runs and their per-second samples',
    statements: [
      // Timestamps are ISO 8601 text as the engine wrote them; JSON columns hold the schema's objects as-is.
      `CREATE TABLE runs (
        id VARCHAR PRIMARY KEY,
        status VARCHAR NOT NULL,
        name VARCHAR NOT NULL,
        target VARCHAR NOT NULL,
        driver VARCHAR NOT NULL,
        source VARCHAR,
        scenario VARCHAR NOT NULL,
        environment VARCHAR NOT NULL,
        summary VARCHAR,
        produced_rps DOUBLE,
        produced_mbps DOUBLE,
        publish_p99_ms DOUBLE,
        e2e_p99_ms DOUBLE,
        error VARCHAR,
        started_at VARCHAR NOT NULL,
        finished_at VARCHAR,
        tags VARCHAR NOT NULL,
        notes VARCHAR NOT NULL,
        owner_pid INTEGER,
        owner_host VARCHAR
      )`,
      `CREATE TABLE samples (
        run_id VARCHAR NOT NULL,
        t DOUBLE NOT NULL,
        interval_ms DOUBLE NOT NULL,
        warmup BOOLEAN NOT NULL,
        produced_records BIGINT NOT NULL,
        produced_bytes BIGINT NOT NULL,
        consumed_records BIGINT NOT NULL,
        consumed_bytes BIGINT NOT NULL,
        errors BIGINT NOT NULL,
        backlog BIGINT NOT NULL,
        publish_p50_ms DOUBLE,
        publish_p99_ms DOUBLE,
        publish_max_ms DOUBLE,
        e2e_p50_ms DOUBLE,
        e2e_p99_ms DOUBLE,
        e2e_max_ms DOUBLE,
        PRIMARY KEY (run_id, t)
      )`,
    ],
  },
  {
    version: 2,
    description: 'executed faults of a run, broker figures of a sample',
    statements: [
      // JSON: the run's FaultEvent[] (null without a fault timeline) and a sample's BrokerNodeSample[].
      'ALTER TABLE runs ADD COLUMN faults VARCHAR',
      'ALTER TABLE samples ADD COLUMN broker VARCHAR',
    ],
  },
  {
    version: 3,
    description: 'runs that went on at the same time on one machine',
    statements: [
      // One row per direction, so each run lists the other; a row may name a run stored later (or
      // deleted since), so no foreign key.
      `CREATE TABLE concurrent_runs (
        run_id VARCHAR NOT NULL,
        other_id VARCHAR NOT NULL,
        PRIMARY KEY (run_id, other_id)
      )`,
    ],
  },
  {
    version: 4,
    description: "a run's sweep value and series as fields",
    statements: [
      'ALTER TABLE runs ADD COLUMN sweep_value VARCHAR',
      'ALTER TABLE runs ADD COLUMN series VARCHAR',
      // Older runs carried them as text: a sweep's run is named `<name> [<knob>=<value>]`, and a
      // reproduction's runs are tagged `reproduce:<folder>:<time>[-quick]`.
      String.raw`UPDATE runs SET sweep_value = regexp_extract(name, '\[([^=\]]+)=(.*)\]$', 2)
        WHERE regexp_matches(name, '\[([^=\]]+)=(.*)\]$')`,
      `UPDATE runs SET series = list_filter(from_json(tags, '["VARCHAR"]'), t -> starts_with(t, 'reproduce:'))[1]`,
    ],
  },
  {
    version: 5,
    description: "each sample's latency histograms",
    statements: [
      // One row per sample: the interval's publish and end-to-end histograms in the engine's
      // compact encoding (histogram-codec.ts: varint bucket deltas and counts, then sum and max),
      // null when that side recorded nothing. The whole-run summary is
      // their merge, so percentiles of any window are computed from these, exactly.
      `CREATE TABLE sample_histograms (
        run_id VARCHAR NOT NULL,
        t DOUBLE NOT NULL,
        warmup BOOLEAN NOT NULL,
        publish BLOB,
        e2e BLOB,
        PRIMARY KEY (run_id, t)
      )`,
    ],
  },
  {
    version: 6,
    description: "the machine's CPU and disk in each sample",
    statements: [
      // Null in samples stored before they were read, or where /proc could not be.
      'ALTER TABLE samples ADD COLUMN machine_cpu_busy DOUBLE',
      'ALTER TABLE samples ADD COLUMN machine_others_busy DOUBLE',
      'ALTER TABLE samples ADD COLUMN disk_written_bytes DOUBLE',
    ],
  },
];

export const LATEST_SCHEMA_VERSION = MIGRATIONS.reduce((max, m) => Math.max(max, m.version), 0);

export async function currentVersion(connection: DuckDBConnection): Promise<number> {
  const exists = await connection.runAndReadAll(
    "SELECT count(*) AS n FROM information_schema.tables WHERE table_name = 'schema_migrations'",
  );
  if (Number(exists.getRowObjectsJS()[0]?.n ?? 0) === 0) return 0;
  const reader = await connection.runAndReadAll('SELECT max(version) AS version FROM schema_migrations');
  return Number(reader.getRowObjectsJS()[0]?.version ?? 0);
}

/** Applies the migrations the file lacks, each in its own transaction. Returns the versions applied. */
export async function migrate(connection: DuckDBConnection, now: () => string): Promise<number[]> {
  await connection.run(
    'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at VARCHAR NOT NULL)',
  );
  const from = await currentVersion(connection);
  const applied: number[] = [];
  for (const migration of MIGRATIONS) {
    if (migration.version <= from) continue;
    await inTransaction(connection, async () => {
      for (const statement of migration.statements) await connection.run(statement);
      await connection.run('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)', [
        migration.version,
        now(),
      ]);
    });
    applied.push(migration.version);
  }
  return applied;
}
