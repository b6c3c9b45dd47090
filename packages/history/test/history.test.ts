import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  AmbiguousRunIdError,
  defaultHistoryPath,
  History,
  kbenchHome,
  LATEST_SCHEMA_VERSION,
  RunNotFoundError,
} from '../src/index.js';
import { makeRun, makeSample, makeSummary, tempDir } from './fixtures.js';

let dir: string;
let cleanup: () => Promise<void>;
let file: string;

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
  file = join(dir, 'nested', 'history.duckdb');
});
afterEach(() => cleanup());

describe('paths', () => {
  it('uses KBENCH_HOME when set', () => {
    const saved = process.env.KBENCH_HOME;
    process.env.KBENCH_HOME = '/tmp/somewhere';
    try {
      expect(kbenchHome()).toBe('/tmp/somewhere');
      expect(defaultHistoryPath()).toBe('/tmp/somewhere/history.duckdb');
    } finally {
      if (saved === undefined) delete process.env.KBENCH_HOME;
      else process.env.KBENCH_HOME = saved;
    }
  });
});

describe('migrations', () => {
  it('creates the file and its folder and applies every migration to an empty file', async () => {
    const history = await History.open(file);
    expect(history.path).toBe(file);
    expect(await history.schemaVersion()).toBe(LATEST_SCHEMA_VERSION);
    expect(await history.listRuns()).toEqual([]);
  });

  it('re-opening an up-to-date file changes nothing', async () => {
    const first = await History.open(file);
    await first.createRun(makeRun());
    const second = await History.open(file);
    expect(await second.schemaVersion()).toBe(LATEST_SCHEMA_VERSION);
    expect(await second.listRuns()).toHaveLength(1);
  });
});

describe('runs', () => {
  it('round-trips a run through create, append, finish and get with every field intact', async () => {
    const history = await History.open(file);
    const run = makeRun({ tags: ['baseline', 'acks=all'], notes: 'first, "quoted"' });
    await history.createRun(run);
    expect(await history.getRun(run.id)).toEqual(run);

    const samples = [
      makeSample(1),
      makeSample(2),
      makeSample(3, { e2eP50Ms: 2.5, e2eP99Ms: 7, e2eMaxMs: 9.75 }),
    ];
    await history.appendSamples(run.id, samples);
    const end = {
      status: 'completed' as const,
      summary: makeSummary(),
      error: null,
      finishedAt: '2025-01-02T03:05:05.000Z',
    };
    await history.finishRun(run.id, end);

    expect(await history.getRun(run.id)).toEqual({ ...run, ...end });
    expect(await history.getSamples(run.id)).toEqual(samples);
  });

  it('keeps a failed run with its error and no summary', async () => {
    const history = await History.open(file);
    await history.createRun(makeRun());
    await history.finishRun('run-0001', {
      status: 'failed',
      summary: null,
      error: 'broker unreachable',
      finishedAt: '2025-01-02T03:04:06.000Z',
    });
    const run = await history.getRun('run-0001');
    expect(run?.status).toBe('failed');
    expect(run?.summary).toBeNull();
    expect(run?.error).toBe('broker unreachable');
  });

  it('replaces the environment at the end when the run learned more of it', async () => {
    const history = await History.open(file);
    const run = makeRun();
    await history.createRun(run);
    const environment = { ...run.environment, bootstrap: '127.0.0.1:40123' };
    await history.finishRun(run.id, {
      status: 'completed',
      summary: null,
      error: null,
      finishedAt: 'x',
      environment,
    });
    expect((await history.getRun(run.id))?.environment).toEqual(environment);
  });

  it('returns samples in time order whatever order they were appended in', async () => {
    const history = await History.open(file);
    await history.createRun(makeRun());
    await history.appendSamples('run-0001', [makeSample(3), makeSample(1)]);
    await history.appendSamples('run-0001', [makeSample(2)]);
    expect((await history.getSamples('run-0001')).map((s) => s.t)).toEqual([1, 2, 3]);
  });

  it('appending a sample twice keeps one row, the later one', async () => {
    const history = await History.open(file);
    await history.createRun(makeRun());
    await history.appendSamples('run-0001', [makeSample(1), makeSample(2)]);
    await history.appendSamples('run-0001', [makeSample(2, { errors: 5 }), makeSample(2, { errors: 7 })]);
    const samples = await history.getSamples('run-0001');
    expect(samples.map((s) => [s.t, s.errors])).toEqual([
      [1, 0],
      [2, 7],
    ]);
  });

  it('appends many samples in one call', async () => {
    const history = await History.open(file);
    await history.createRun(makeRun());
    const samples = Array.from({ length: 1000 }, (_, i) => makeSample(i + 1));
    await history.appendSamples('run-0001', samples);
    expect(await history.getSamples('run-0001')).toHaveLength(1000);
  });

  it('refuses samples and endings for an unknown run', async () => {
    const history = await History.open(file);
    await expect(history.appendSamples('nope', [makeSample(1)])).rejects.toBeInstanceOf(RunNotFoundError);
    await expect(
      history.finishRun('nope', { status: 'completed', summary: null, error: null, finishedAt: 'x' }),
    ).rejects.toBeInstanceOf(RunNotFoundError);
    expect(await history.getSamples('nope')).toEqual([]);
  });

  it('rejects a second run with the same id', async () => {
    const history = await History.open(file);
    await history.createRun(makeRun());
    await expect(history.createRun(makeRun())).rejects.toThrow(/run-0001|[Dd]uplicate|constraint/);
  });
});

describe('listRuns', () => {
  async function seeded(): Promise<History> {
    const history = await History.open(file);
    await history.createRun(
      makeRun({ id: 'aaaa1111', startedAt: '2025-01-01T00:00:00.000Z', tags: ['nightly'] }),
    );
    await history.createRun(
      makeRun({
        id: 'bbbb2222',
        startedAt: '2025-01-03T00:00:00.000Z',
        scenario: { ...makeRun().scenario, name: 'Fsync Batch', target: 'redpanda-lab' },
      }),
    );
    await history.createRun(makeRun({ id: 'cccc3333', startedAt: '2025-01-02T00:00:00.000Z' }));
    await history.finishRun('cccc3333', {
      status: 'completed',
      summary: makeSummary(),
      error: null,
      finishedAt: '2025-01-02T00:01:00.000Z',
    });
    return history;
  }

  it('lists newest first with the list fields', async () => {
    const history = await seeded();
    const runs = await history.listRuns();
    expect(runs.map((r) => r.id)).toEqual(['bbbb2222', 'cccc3333', 'aaaa1111']);
    expect(runs[0]).toMatchObject({ name: 'Fsync Batch', target: 'redpanda-lab', driver: 'kafkajs' });
    expect(runs[1]?.summary).toEqual(makeSummary());
    expect(runs[0]).not.toHaveProperty('scenario');
  });

  it('filters by status', async () => {
    const history = await seeded();
    expect((await history.listRuns({ status: 'completed' })).map((r) => r.id)).toEqual(['cccc3333']);
  });

  it('searches name, id, target and tags case-insensitively', async () => {
    const history = await seeded();
    const ids = async (search: string) => (await history.listRuns({ search })).map((r) => r.id);
    expect(await ids('fsync')).toEqual(['bbbb2222']);
    expect(await ids('CCCC')).toEqual(['cccc3333']);
    expect(await ids('redpanda')).toEqual(['bbbb2222']);
    expect(await ids('nightly')).toEqual(['aaaa1111']);
    expect(await ids("'; DROP TABLE runs; --")).toEqual([]);
  });

  it('limits the number of runs', async () => {
    const history = await seeded();
    expect((await history.listRuns({ limit: 2 })).map((r) => r.id)).toEqual(['bbbb2222', 'cccc3333']);
  });
});

describe('getRun by prefix', () => {
  it('finds a run by a unique prefix', async () => {
    const history = await History.open(file);
    await history.createRun(makeRun({ id: 'abcd1234' }));
    await history.createRun(makeRun({ id: 'abce5678' }));
    expect((await history.getRun('abcd'))?.id).toBe('abcd1234');
    expect((await history.getRun('abce5'))?.id).toBe('abce5678');
    expect(await history.getRun('zzzz')).toBeNull();
  });

  it('says a short prefix matches several runs instead of finding none', async () => {
    const history = await History.open(file);
    await history.createRun(makeRun({ id: 'abcd1234' }));
    await history.createRun(makeRun({ id: 'abce5678' }));
    await expect(history.getRun('abc')).rejects.toThrow(
      /abc matches more than one run \(abcd1234, abce5678\)/,
    );
  });

  it('throws a clear error for a prefix that matches several runs', async () => {
    const history = await History.open(file);
    await history.createRun(makeRun({ id: 'abcd1234' }));
    await history.createRun(makeRun({ id: 'abcd5678' }));
    const attempt = history.getRun('abcd');
    await expect(attempt).rejects.toBeInstanceOf(AmbiguousRunIdError);
    await expect(attempt).rejects.toThrow(/abcd1234, abcd5678/);
  });

  it('prefers an exact id over a prefix match', async () => {
    const history = await History.open(file);
    await history.createRun(makeRun({ id: 'abcd' }));
    await history.createRun(makeRun({ id: 'abcdef' }));
    expect((await history.getRun('abcd'))?.id).toBe('abcd');
  });
});

describe('editing runs', () => {
  it('deletes a run and its samples', async () => {
    const history = await History.open(file);
    await history.createRun(makeRun());
    await history.createRun(makeRun({ id: 'other' }));
    await history.appendSamples('run-0001', [makeSample(1)]);
    await history.appendSamples('other', [makeSample(1)]);
    expect(await history.deleteRun('run-0001')).toBe(true);
    expect(await history.getRun('run-0001')).toBeNull();
    expect(await history.getSamples('run-0001')).toEqual([]);
    expect(await history.getSamples('other')).toHaveLength(1);
    expect(await history.deleteRun('run-0001')).toBe(false);
  });

  it('sets tags and notes', async () => {
    const history = await History.open(file);
    await history.createRun(makeRun());
    await history.setTags('run-0001', ['a', 'b c']);
    await history.setNotes('run-0001', 'line one\nline two');
    const run = await history.getRun('run-0001');
    expect(run?.tags).toEqual(['a', 'b c']);
    expect(run?.notes).toBe('line one\nline two');
    await expect(history.setTags('missing', [])).rejects.toBeInstanceOf(RunNotFoundError);
  });
});

describe('within one process', () => {
  it('serializes concurrent calls instead of failing on the lock', async () => {
    const history = await History.open(file);
    const other = await History.open(file);
    await history.createRun(makeRun());
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        (i % 2 === 0 ? history : other).appendSamples('run-0001', [makeSample(i + 1)]),
      ),
    );
    expect(await history.getSamples('run-0001')).toHaveLength(40);
  });

  it('does not mark its own running runs as abandoned', async () => {
    const history = await History.open(file);
    await history.createRun(makeRun());
    expect(await history.markAbandonedRuns()).toBe(0);
    expect((await history.getRun('run-0001'))?.status).toBe('running');
  });
});
