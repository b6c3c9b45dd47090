// A write-up reproduced over HTTP: a tiny folder (a sweep, a steady run, one experiment the engine
// cannot run) run for real on the bundled broker, tagged in a real DuckDB history, and judged by the
// folder's rules; found again by a second app on the same history, as after a restart.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ReproductionInfo, ReproductionResults, ReproductionStarted } from '@kbench/schema';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../src/app.js';
import { makeWorkspace, type Workspace } from './fixtures.js';

const PORT = 7420;
const HOST = `127.0.0.1:${PORT}`;

const TINY: Record<string, string> = {
  'published.yaml': `title: A tiny write-up
url: https://example.com/tiny
setup: one laptop, one broker
experiments:
  - scenario: sizes.yaml
    title: Message size sweep
    published: { "10 B": "1,000 rec/s", "1000 B": "400 rec/s" }
    figures: [produced.recordsPerSec, produced.mbPerSec]
    checks:
      - expect: { metric: produced.mbPerSec, across: producers.messageSize, direction: increasing }
        says: MB/s rises with the message size
  - scenario: steady.yaml
    title: A steady producer
    published: { throughput: "1,000 rec/s" }
    checks:
      - expect: { metric: produced.recordsPerSec, across: time, direction: flat, tolerance: 0.99 }
        says: throughput holds over the run
      - compare: { a: steady.yaml, b: zstd.yaml, metric: produced.recordsPerSec, expect: higher }
        says: steady beats zstd
  - scenario: zstd.yaml
    title: zstd on kafkajs
    published: { throughput: "900 rec/s" }
`,
  'sizes.yaml':
    'name: tiny sizes\ndescription: a sweep of two sizes\ndriver: native\nduration: 2s\nproducers: { count: 1 }\nsweep: { knob: producers.messageSize, values: [10, 1000] }\n',
  'steady.yaml':
    'name: tiny steady\ndescription: one producer\ndriver: native\nduration: 3s\nproducers: { count: 1, rate: 2000 }\n',
  'zstd.yaml':
    'name: tiny zstd\ndescription: not runnable here\ndriver: kafkajs\nduration: 2s\nproducers: { compression: zstd }\n',
};

let ws: Workspace;
let app: FastifyInstance;
let userDir: string;

async function build(): Promise<FastifyInstance> {
  return buildApp({
    history: ws.history,
    scenariosDir: ws.scenariosDir,
    userScenariosDir: userDir,
    profilesDir: join(ws.dir, 'profiles'),
    port: PORT,
  });
}

beforeAll(async () => {
  ws = await makeWorkspace();
  userDir = join(ws.dir, 'user-scenarios');
  await mkdir(join(ws.scenariosDir, 'tiny-2020'), { recursive: true });
  for (const [file, text] of Object.entries(TINY))
    await writeFile(join(ws.scenariosDir, 'tiny-2020', file), text);
  await mkdir(join(userDir, 'mine'), { recursive: true });
  await writeFile(join(userDir, 'mine', 'broken.yaml'), 'name: mine\n');
  await writeFile(join(userDir, 'mine', 'published.yaml'), 'title: mine\nexperiments: []\n');
  app = await build();
});

afterAll(async () => {
  await app?.close();
  await ws?.remove();
});

function call(target: FastifyInstance, opts: InjectOptions & { url: string }) {
  return target.inject({ ...opts, headers: { host: HOST, ...opts.headers } });
}

const start = (payload: unknown) =>
  call(app, { method: 'POST', url: '/api/reproductions', payload: payload as object });
const results = async (target: FastifyInstance, query = 'folder=tiny-2020') => {
  const res = await call(target, { method: 'GET', url: `/api/reproductions/results?${query}` });
  expect(res.statusCode).toBe(200);
  return res.json() as ReproductionResults;
};

describe('GET /api/reproductions', () => {
  it('lists the write-up folders, the library and user/, with their experiments and rules', async () => {
    const res = await call(app, { method: 'GET', url: '/api/reproductions' });
    expect(res.statusCode).toBe(200);
    const list = res.json() as ReproductionInfo[];
    expect(list.map((r) => r.folder)).toEqual(['tiny-2020', 'user/mine']);
    const [tiny, mine] = list;
    expect(tiny).toMatchObject({
      title: 'A tiny write-up',
      url: 'https://example.com/tiny',
      setup: 'one laptop, one broker',
    });
    expect(tiny?.experiments.map((e) => [e.scenario, e.path, e.title])).toEqual([
      ['sizes.yaml', 'tiny-2020/sizes.yaml', 'Message size sweep'],
      ['steady.yaml', 'tiny-2020/steady.yaml', 'A steady producer'],
      ['zstd.yaml', 'tiny-2020/zstd.yaml', 'zstd on kafkajs'],
    ]);
    expect(tiny?.experiments[0]?.published).toEqual({ '10 B': '1,000 rec/s', '1000 B': '400 rec/s' });
    expect(tiny?.experiments[0]?.figures).toEqual(['produced.recordsPerSec', 'produced.mbPerSec']);
    expect(tiny?.experiments[1]?.says).toEqual(['throughput holds over the run', 'steady beats zstd']);
    // An invalid published.yaml is listed with its error, not dropped.
    expect(mine?.error).toContain('experiments: must list experiments');
  });

  it('keeps published.yaml out of the scenario list', async () => {
    const res = await call(app, { method: 'GET', url: '/api/scenarios' });
    const paths = (res.json() as { path: string }[]).map((s) => s.path);
    expect(paths).toContain('tiny-2020/sizes.yaml');
    expect(paths.some((p) => p.endsWith('published.yaml'))).toBe(false);
  });
});

describe('POST /api/reproductions', () => {
  it('refuses a bad body or folder, naming the field', async () => {
    for (const [body, words] of [
      [{}, 'folder'],
      [{ folder: 'tiny-2020', fast: true }, 'body must NOT have additional properties'],
      [{ folder: 'nope' }, 'folder: no write-up folder "nope"'],
      [{ folder: '../tiny-2020' }, 'folder: no write-up folder'],
      [{ folder: 'user/mine' }, 'folder: '],
    ] as const) {
      const res = await start(body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect((res.json() as { error: string }).error).toContain(words);
    }
  });

  it('answers 404 for the results of an unknown folder or reproduction', async () => {
    expect(
      (await call(app, { method: 'GET', url: '/api/reproductions/results?folder=nope' })).statusCode,
    ).toBe(404);
    const none = await results(app);
    expect(none).toMatchObject({ tag: null, progress: null, reproductions: [] });
    expect(none.experiments[0]?.verdicts[0]?.matches).toBeNull();
    const bogus = await call(app, {
      method: 'GET',
      url: '/api/reproductions/results?folder=tiny-2020&tag=reproduce:tiny-2020:20200101-000000',
    });
    expect(bogus.statusCode).toBe(404);
  });

  it('runs every runnable plan as one tagged series, refuses a second start, and judges the results', async () => {
    const res = await start({ folder: 'tiny-2020', quick: true });
    expect(res.statusCode).toBe(201);
    const started = res.json() as ReproductionStarted;
    expect(started).toMatchObject({ folder: 'tiny-2020', quick: true, total: 3 });
    expect(started.tag).toMatch(/^reproduce:tiny-2020:\d{8}-\d{6}-quick$/);
    expect(started.skipped).toHaveLength(1);
    expect(started.skipped[0]?.scenario).toBe('zstd.yaml');
    expect(started.skipped[0]?.reason).toContain('needs producers.compression');

    // One run at a time: another reproduction or a plain run waits.
    const again = await start({ folder: 'tiny-2020' });
    expect(again.statusCode).toBe(409);
    const run = await call(app, { method: 'POST', url: '/api/runs', payload: { path: 'quickstart.yaml' } });
    expect(run.statusCode).toBe(409);

    const during = await results(app);
    expect(during.tag).toBe(started.tag);
    expect(during.progress).toMatchObject({ total: 3, finished: false });
    expect(during.progress?.current).toBe(started.firstRunId);

    await vi.waitFor(
      async () => {
        expect((await results(app)).progress?.finished).toBe(true);
      },
      { timeout: 90_000, interval: 500 },
    );
    const done = await results(app);
    expect(done.progress).toMatchObject({ total: 3, started: 3, current: null, error: null });
    expect(done.quick).toBe(true);
    expect(done.reproductions).toEqual([
      { tag: started.tag, quick: true, startedAt: done.startedAt, runs: 3 },
    ]);
    const [sizes, steady, zstd] = done.experiments;
    expect(sizes?.runs.map((r) => [r.sweepValue, r.status])).toEqual([
      ['10', 'completed'],
      ['1000', 'completed'],
    ]);
    expect(sizes?.runs[0]?.id).toBe(started.firstRunId);
    expect(sizes?.runs[0]?.figures['produced.recordsPerSec']).toBeGreaterThan(0);
    expect(Object.keys(sizes?.runs[0]?.figures ?? {})).toEqual([
      'produced.recordsPerSec',
      'produced.mbPerSec',
    ]);
    expect(sizes?.verdicts).toEqual([
      {
        says: 'MB/s rises with the message size',
        matches: true,
        detail: expect.stringContaining('1 of 1 steps rise'),
      },
    ]);
    expect(steady?.runs).toHaveLength(1);
    expect(steady?.runs[0]?.sweepValue).toBeNull();
    expect(typeof steady?.verdicts[0]?.matches).toBe('boolean');
    expect(steady?.verdicts[0]?.detail).toContain('samples');
    expect(steady?.verdicts[1]).toMatchObject({ matches: null, detail: 'not checked: zstd.yaml not run' });
    expect(zstd?.runs).toEqual([]);
    expect(zstd?.notRun[0]).toContain('needs producers.compression');

    // Every run carries the tag in the history.
    for (const r of [...(sizes?.runs ?? []), ...(steady?.runs ?? [])]) {
      const stored = await call(app, { method: 'GET', url: `/api/runs/${r.id}` });
      expect((stored.json() as { tags: string[] }).tags).toEqual([started.tag]);
    }

    // Another server on the same history finds it again by its tag, without its progress.
    const restarted = await build();
    try {
      const again = await results(restarted, `folder=tiny-2020&tag=${encodeURIComponent(started.tag)}`);
      expect(again.progress).toBeNull();
      expect(again.tag).toBe(started.tag);
      expect(again.experiments.map((e) => e.verdicts)).toEqual(done.experiments.map((e) => e.verdicts));
    } finally {
      await restarted.close();
    }
  }, 150_000);
});
