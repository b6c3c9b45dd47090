// Executed faults on a run and broker figures on samples (schema version 2), and files from version 1.
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import type { FaultEvent } from '@kbench/schema';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { History, LATEST_SCHEMA_VERSION, samplesToCsv } from '../src/index.js';
import { MIGRATIONS } from '../src/migrations.js';
import { makeRun, makeSample, makeSummary, tempDir } from './fixtures.js';

let cleanup: () => Promise<void>;
let file: string;

beforeEach(async () => {
  let dir: string;
  ({ dir, cleanup } = await tempDir());
  file = join(dir, 'history.duckdb');
});
afterEach(() => cleanup());

const faults: FaultEvent[] = [
  { t: 2.1, action: 'kill', target: 'leader:0-0', node: 3, durationMs: null, error: null },
  { t: 4, action: 'pause', target: 1, node: 1, durationMs: 500, error: 'node 1 is not running' },
];

const broker = [
  { node: 1, bytesInPerSec: 1000, bytesOutPerSec: 500, logSizeBytes: 4096, fsyncs: 3, fsyncMeanMs: 0.5 },
  { node: 2, bytesInPerSec: 900, bytesOutPerSec: 400, logSizeBytes: 2048 },
];

describe('faults and broker figures', () => {
  it('round-trip through the history', async () => {
    const history = await History.open(file);
    const run = makeRun();
    await history.createRun(run);
    await history.appendSamples(run.id, [makeSample(1, { broker }), makeSample(2)]);
    const end = {
      status: 'completed' as const,
      summary: makeSummary(),
      error: null,
      finishedAt: run.startedAt,
    };
    await history.finishRun(run.id, { ...end, faults });
    expect(await history.getRun(run.id)).toEqual({ ...run, ...end, faults });
    const samples = await history.getSamples(run.id);
    expect(samples[0]?.broker).toEqual(broker);
    expect(samples[1]).not.toHaveProperty('broker');
  });

  it("round-trip the machine's CPU and the data disk's writes, absent in samples without them", async () => {
    const history = await History.open(file);
    const run = makeRun();
    await history.createRun(run);
    await history.appendSamples(run.id, [
      makeSample(1, { machineCpuBusy: 0.875, machineOthersBusy: 0.125, diskWrittenBytes: 262144000 }),
      makeSample(2, { machineCpuBusy: 0.25, machineOthersBusy: null, diskWrittenBytes: null }),
      makeSample(3),
    ]);
    const samples = await history.getSamples(run.id);
    expect(samples[0]).toMatchObject({
      machineCpuBusy: 0.875,
      machineOthersBusy: 0.125,
      diskWrittenBytes: 262144000,
    });
    expect(samples[1]).toMatchObject({
      machineCpuBusy: 0.25,
      machineOthersBusy: null,
      diskWrittenBytes: null,
    });
    expect(samples[2]).not.toHaveProperty('machineCpuBusy');
    expect(samples[2]).not.toHaveProperty('diskWrittenBytes');
  });

  it('add per-node columns to the samples CSV', () => {
    const [header, first, second] = samplesToCsv([makeSample(1, { broker }), makeSample(2)]).split('\r\n');
    const columns = header?.split(',') ?? [];
    expect(columns).toContain('node1_bytes_in_per_sec');
    expect(columns).toContain('node2_log_size_bytes');
    const cells = first?.split(',') ?? [];
    expect(cells[columns.indexOf('node1_fsyncs')]).toBe('3');
    expect(cells[columns.indexOf('node2_fsyncs')]).toBe('');
    expect(second?.split(',')[columns.indexOf('node1_bytes_in_per_sec')]).toBe('');
  });

  it('upgrade a version 1 file, keeping its runs', async () => {
    const instance = await DuckDBInstance.create(file);
    const connection = await instance.connect();
    await connection.run(
      'CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at VARCHAR NOT NULL)',
    );
    for (const statement of MIGRATIONS[0]?.statements ?? []) await connection.run(statement);
    await connection.run("INSERT INTO schema_migrations VALUES (1, '2025-01-01T00:00:00.000Z')");
    const run = makeRun();
    await connection.run(
      `INSERT INTO runs (id, status, name, target, driver, source, scenario, environment, started_at, tags, notes)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [
        run.id,
        run.status,
        run.scenario.name,
        run.scenario.target,
        run.scenario.driver,
        run.source,
        JSON.stringify(run.scenario),
        JSON.stringify(run.environment),
        run.startedAt,
        JSON.stringify(run.tags),
        run.notes,
      ],
    );
    connection.closeSync();
    instance.closeSync();
    const history = await History.open(file);
    expect(await history.schemaVersion()).toBe(LATEST_SCHEMA_VERSION);
    const stored = await history.getRun(run.id);
    expect(stored?.id).toBe(run.id);
    expect(stored).not.toHaveProperty('faults');
  });
});
