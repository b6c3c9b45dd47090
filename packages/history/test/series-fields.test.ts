// A run's sweep value and series are fields of the run (migration 4); older runs get them from the
// text they used to carry them in: the sweep's `[knob=value]` name suffix and the reproduction tag.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { History } from '../src/index.js';
import { MIGRATIONS } from '../src/migrations.js';
import { runValues } from '../src/rows.js';
import { makeRun, tempDir } from './fixtures.js';

let dir: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
});
afterEach(() => cleanup());

/** A history file at schema version 3 (before the fields), holding the given runs as they were stored then. */
async function version3File(runs: { id: string; name: string; tags: string[] }[]): Promise<string> {
  const file = join(dir, 'old', 'history.duckdb');
  await mkdir(join(dir, 'old'));
  const instance = await DuckDBInstance.create(file);
  const connection = await instance.connect();
  await connection.run(
    'CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at VARCHAR NOT NULL)',
  );
  for (const migration of MIGRATIONS.filter((m) => m.version <= 3)) {
    for (const statement of migration.statements) await connection.run(statement);
    await connection.run('INSERT INTO schema_migrations VALUES ($1, $2)', [migration.version, 'then']);
  }
  for (const { id, name, tags } of runs) {
    const run = makeRun({ id, tags, scenario: { ...makeRun().scenario, name } });
    // The columns of version 3: all of today's but the two the migration adds.
    const values = runValues(run, { pid: 1, host: 'h' }).slice(0, -2);
    await connection.run(`INSERT INTO runs VALUES (${values.map((_, i) => `$${i + 1}`).join(', ')})`, values);
  }
  connection.closeSync();
  instance.closeSync();
  return file;
}

describe('sweep value and series fields', () => {
  it('stores and reads back a run with its sweep value and series', async () => {
    const history = await History.open(join(dir, 'history.duckdb'));
    const run = makeRun({ sweepValue: '1000', series: 'reproduce:kreps-2014:2026-01-01T00-00-00Z' });
    await history.createRun(run);
    expect(await history.getRun(run.id)).toEqual(run);
    const [item] = await history.listRuns({ seriesPrefix: 'reproduce:kreps-2014:' });
    expect(item?.sweepValue).toBe('1000');
    expect(item?.series).toBe(run.series);
    expect(await history.listRuns({ seriesPrefix: 'reproduce:other:' })).toEqual([]);
  });

  it('derives them for runs stored before the migration from the name and the reproduction tag', async () => {
    const file = await version3File([
      { id: 'a', name: 'kreps [producers.messageSize=100]', tags: ['x', 'reproduce:kreps-2014:t1-quick'] },
      { id: 'b', name: 'alone', tags: ['baseline'] },
      { id: 'c', name: 'faults [faults=[{"at":"1s"}]]', tags: [] },
    ]);
    const history = await History.open(file);
    const a = await history.getRun('a');
    expect(a?.sweepValue).toBe('100');
    expect(a?.series).toBe('reproduce:kreps-2014:t1-quick');
    const b = await history.getRun('b');
    expect(b).not.toHaveProperty('sweepValue');
    expect(b).not.toHaveProperty('series');
    expect((await history.getRun('c'))?.sweepValue).toBe('[{"at":"1s"}]');
    expect((await history.listRuns({ seriesPrefix: 'reproduce:kreps-2014:' })).map((r) => r.id)).toEqual([
      'a',
    ]);
  });
});
