import { join } from 'node:path';
import type { RunSummary, Trend } from '@kbench/schema';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { makeWorkspace, storeFinishedRun, type Workspace } from './fixtures.js';

const PORT = 7420;
let ws: Workspace;
let app: FastifyInstance;

function summary(rate: number, p99: number): RunSummary {
  const latency = {
    count: 10,
    p50: p99 / 2,
    p75: p99,
    p95: p99,
    p99,
    p999: p99,
    p9999: p99,
    max: p99,
    mean: 1,
    worst10Mean: p99,
  };
  return {
    measuredSeconds: 5,
    produced: { records: rate * 5, recordsPerSec: rate, mbPerSec: rate / 1e4, wireMbPerSec: null, errors: 0 },
    consumed: { records: 0, recordsPerSec: 0, mbPerSec: 0 },
    publishLatencyMs: latency,
    endToEndLatencyMs: null,
  };
}

// Ten runs at about 1000 rec/s, then ten at about 600: one change point, at run s10.
const RATES = [
  1000, 1010, 990, 1004, 996, 1002, 998, 1006, 994, 1000, 600, 606, 594, 603, 597, 601, 599, 605, 595, 600,
];

beforeAll(async () => {
  ws = await makeWorkspace();
  for (const [i, rate] of RATES.entries()) {
    await storeFinishedRun(ws.history, `s${i}`, 'steady', { summary: summary(rate, 4 + (i % 3)) });
  }
  await storeFinishedRun(ws.history, 'unfinished', 'steady', { finish: false });
  await storeFinishedRun(ws.history, 'twice-1', 'on two targets', { target: 'bundled' });
  await storeFinishedRun(ws.history, 'twice-2', 'on two targets', { target: 'kafka' });
  app = await buildApp({
    history: ws.history,
    scenariosDir: ws.scenariosDir,
    profilesDir: join(ws.dir, 'profiles'),
    port: PORT,
  });
});

afterAll(async () => {
  await app?.close();
  await ws?.remove();
});

function get(url: string) {
  return app.inject({ method: 'GET', url, headers: { host: `127.0.0.1:${PORT}` } } satisfies InjectOptions);
}

describe('GET /api/trends', () => {
  it('answers the completed runs in time order with each figure, its change point and best run', async () => {
    const res = await get('/api/trends?scenario=steady&target=bundled');
    expect(res.statusCode).toBe(200);
    const trend = res.json() as Trend;
    expect(trend.runs.map((r) => r.id)).toEqual(RATES.map((_, i) => `s${i}`));
    const produced = trend.series.find((s) => s.metric === 'produced.recordsPerSec');
    expect(produced?.values).toEqual(RATES);
    expect(produced?.changePoints).toHaveLength(1);
    expect(produced?.changePoints[0]).toMatchObject({ runId: 's10', verdict: 'worse' });
    expect(produced?.changePoints[0]?.before).toBeCloseTo(1000, 0);
    expect(produced?.best).toEqual({ runId: 's1', value: 1010 });
    expect(trend.series.find((s) => s.metric === 'publishLatencyMs.p99')?.best).toEqual({
      runId: 's0',
      value: 4,
    });
  });

  it('answers one figure when asked for one', async () => {
    const res = await get('/api/trends?scenario=steady&metric=publishLatencyMs.p50');
    expect(res.statusCode).toBe(200);
    expect((res.json() as Trend).series.map((s) => s.metric)).toEqual(['publishLatencyMs.p50']);
  });

  it('refuses an unknown metric with a 400 naming its path', async () => {
    const res = await get('/api/trends?scenario=steady&metric=produced.rate');
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatch(/querystring\/metric must be equal to one of the allowed values/);
  });

  it('refuses a request without a scenario, naming it', async () => {
    const res = await get('/api/trends');
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatch(/scenario/);
  });

  it('answers 400 naming the targets when the scenario ran on several and none is named', async () => {
    const res = await get(`/api/trends?scenario=${encodeURIComponent('on two targets')}`);
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatch(/ran on 2 targets; name one with target: bundled, kafka/);
    const one = await get(`/api/trends?scenario=${encodeURIComponent('on two targets')}&target=kafka`);
    expect(one.statusCode).toBe(200);
    expect((one.json() as Trend).runs.map((r) => r.id)).toEqual(['twice-2']);
  });

  it('answers 404 naming an unknown scenario or target', async () => {
    const unknown = await get('/api/trends?scenario=nothing');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error).toMatch(/no completed run of scenario "nothing"/);
    const elsewhere = await get('/api/trends?scenario=steady&target=prod');
    expect(elsewhere.statusCode).toBe(404);
    expect(elsewhere.json().error).toMatch(/no completed run on target "prod"; its targets: bundled/);
  });

  it('draws a figure of the trend as SVG and PNG, as the page draws it', async () => {
    const svg = await get('/api/trends/charts/trend-produced-recordspersec.svg?scenario=steady');
    expect(svg.statusCode).toBe(200);
    expect(svg.headers['content-disposition']).toBe(
      'attachment; filename="kbench-trend-produced-recordspersec.svg"',
    );
    expect(svg.body).toContain('produced rec/s over time');
    expect(svg.body).toContain('(worse)');
    const png = await get('/api/trends/charts/trend-publishlatencyms-p99.png?scenario=steady');
    expect(png.statusCode).toBe(200);
    expect(png.rawPayload.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
  });

  it('answers 404 naming the charts there are for an unknown chart', async () => {
    const res = await get('/api/trends/charts/trend-nothing.svg?scenario=steady');
    expect(res.statusCode).toBe(404);
    expect(res.json().error).toMatch(/no chart trend-nothing; charts here: trend-produced-recordspersec, /);
  });
});
