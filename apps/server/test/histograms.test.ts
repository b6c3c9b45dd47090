// The routes over a run's stored latency histograms: a window's percentiles merged exactly from
// them, a run's heatmap, the interval log and JSON downloads, and the heatmap as a chart image.
import { join } from 'node:path';
import { encodeHistogram, LatencyHistogram } from '@kbench/engine';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { HistogramLogReader } from 'hdr-histogram-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { makeWorkspace, storeFinishedRun, type Workspace } from './fixtures.js';

const PORT = 7420;
let ws: Workspace;
let app: FastifyInstance;

/** Sample t of run `seed` recorded these publish latencies (µs); e2e twice as long. */
function latencies(seed: number, t: number): number[] {
  return Array.from({ length: 50 + 10 * t }, (_, i) => 100 + ((i * 7919 + seed * 104729 + t * 31) % 20_000));
}

function histogram(values: number[]): LatencyHistogram {
  const h = new LatencyHistogram();
  for (const v of values) h.record(v);
  return h;
}

beforeAll(async () => {
  ws = await makeWorkspace();
  for (const [seed, id] of ['aaa111', 'bbb222'].entries()) {
    await storeFinishedRun(ws.history, id, `run ${id}`);
    await ws.history.appendHistograms(
      id,
      [1, 2, 3].map((t) => ({
        t,
        warmup: t <= 1,
        publish: encodeHistogram(histogram(latencies(seed, t)).toBuckets()),
        e2e: encodeHistogram(histogram(latencies(seed, t).map((v) => 2 * v)).toBuckets()),
      })),
    );
  }
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

describe('GET /api/latency', () => {
  it("merges a window of several runs exactly: the percentiles of that window's raw values", async () => {
    const res = await get('/api/latency?ids=aaa111,bbb222&from=1&to=3');
    expect(res.statusCode, res.body).toBe(200);
    const raw = [0, 1].flatMap((seed) => [2, 3].flatMap((t) => latencies(seed, t)));
    expect(res.json()).toMatchObject({
      ids: ['aaa111', 'bbb222'],
      from: 1,
      to: 3,
      warmup: false,
      samples: 4,
    });
    expect(res.json().publishLatencyMs).toEqual(histogram(raw).summaryMs());
    expect(res.json().endToEndLatencyMs).toEqual(histogram(raw.map((v) => 2 * v)).summaryMs());
    // Warm-up counts only when asked for.
    const all = (await get('/api/latency?ids=aaa111&warmup=true')).json();
    expect(all.samples).toBe(3);
    expect(all.publishLatencyMs).toEqual(histogram([1, 2, 3].flatMap((t) => latencies(0, t))).summaryMs());
  });

  it('refuses a bad window naming the field, and an unknown run', async () => {
    const bad = await get('/api/latency?ids=aaa111&from=-1');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toMatch(/querystring\/from/);
    const backwards = await get('/api/latency?ids=aaa111&from=3&to=2');
    expect(backwards.statusCode).toBe(400);
    expect(backwards.json().error).toMatch(/querystring\/to: must be after from/);
    expect((await get('/api/latency?ids=nope99')).statusCode).toBe(404);
  });
});

describe("a run's histograms", () => {
  it('as the heatmap input of each side', async () => {
    const res = await get('/api/runs/aaa111/heatmap');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.publish.side).toBe('publish');
    expect(body.publish.intervals.map((i: { t: number }) => i.t)).toEqual([1, 2, 3]);
    const counted = body.publish.intervals[1].buckets.reduce(
      (n: number, [, c]: [number, number]) => n + c,
      0,
    );
    expect(counted).toBe(latencies(0, 2).length);
    expect(body.e2e.side).toBe('e2e');
  });

  it('as an .hlog download an HdrHistogram reader reads', async () => {
    const res = await get('/api/runs/aaa111/export.hlog');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-disposition']).toBe('attachment; filename="kbench-aaa111.hlog"');
    const reader = new HistogramLogReader(res.body);
    const counts: number[] = [];
    for (let h = reader.nextIntervalHistogram(); h; h = reader.nextIntervalHistogram())
      if (h.tag === 'publish') counts.push(h.totalCount);
    expect(counts).toEqual([1, 2, 3].map((t) => latencies(0, t).length));
  });

  it('as a JSON download of the raw buckets', async () => {
    const res = await get('/api/runs/aaa111/histograms.json');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-disposition']).toBe('attachment; filename="kbench-aaa111-histograms.json"');
    const body = res.json();
    expect(body.samples).toHaveLength(3);
    expect(body.samples[2].publish.count).toBe(latencies(0, 3).length);
  });

  it('as a heatmap image among the chart downloads, alone and compared', async () => {
    const one = await get('/api/charts/heatmap-publish.svg?ids=aaa111');
    expect(one.statusCode, one.body).toBe(200);
    expect(one.body).toContain('>Publish latency heatmap</text>');
    const compared = await get('/api/charts/heatmap-e2e-bbb222.svg?ids=aaa111,bbb222');
    expect(compared.statusCode, compared.body).toBe(200);
    expect(compared.body).toContain('>End-to-end latency heatmap</text>');
    expect(compared.body).toContain('run bbb222 (bbb222)');
  });
});
