// `kbench export --format hlog|histograms-json` and the heatmaps in --svg, spawned as a user runs
// them after a real run: the interval log is read back by an HdrHistogram reader (hdr-histogram-js)
// and holds every record the run measured; the JSON's buckets merge into the run's summary.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { LatencyHistogram } from '@kbench/engine';
import type { RunRecord } from '@kbench/schema';
import { HistogramLogReader } from 'hdr-histogram-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKbench } from './helpers.js';

let home: string;
let record: RunRecord;

beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'kbench-export-histograms-'));
  const file = path.join(home, 'short.yaml');
  await writeFile(
    file,
    'name: short\nduration: 3s\nwarmup: 1s\nsampleIntervalMs: 500\nproducers: { count: 1, rate: 5000 }\nconsumers: { count: 1 }\n',
  );
  const run = await runKbench(home, ['run', file, '--json']);
  expect(run.code, run.stderr).toBe(0);
  record = JSON.parse(run.stdout) as RunRecord;
}, 180_000);
afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

describe('kbench export of the latency histograms', () => {
  it('writes an .hlog an HdrHistogram reader reads, with every measured record', async () => {
    const out = path.join(home, 'hlog');
    const r = await runKbench(home, ['export', record.id, '--format', 'hlog', '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    const log = await readFile(path.join(out, `kbench-${record.id}.hlog`), 'utf8');
    expect(log).toContain('#[StartTime: ');
    expect(log).toContain('#[BaseTime: ');
    expect(log).toContain(
      '"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"',
    );
    const reader = new HistogramLogReader(log);
    const totals = { publish: 0, e2e: 0 };
    let intervals = 0;
    for (let h = reader.nextIntervalHistogram(); h; h = reader.nextIntervalHistogram()) {
      intervals += 1;
      // Warm-up is in the log too: count what the summary counts, from 1 s on.
      if (h.startTimeStampMsec - reader.baseTimeSec * 1000 < 999) continue;
      totals[h.tag as 'publish' | 'e2e'] += h.totalCount;
    }
    expect(intervals).toBeGreaterThanOrEqual(8);
    expect(totals.publish).toBe(record.summary?.publishLatencyMs?.count);
    expect(totals.e2e).toBe(record.summary?.endToEndLatencyMs?.count);
  });

  it('writes the raw histograms as JSON, whose measured buckets merge into the summary', async () => {
    const out = path.join(home, 'json');
    const r = await runKbench(home, ['export', record.id, '--histograms-json', '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    const json = JSON.parse(await readFile(path.join(out, `kbench-${record.id}-histograms.json`), 'utf8'));
    expect(json.run).toBe(record.id);
    const publish = new LatencyHistogram();
    for (const s of json.samples) if (!s.warmup && s.publish) publish.addBuckets(s.publish);
    expect(publish.summaryMs()).toEqual(record.summary?.publishLatencyMs);
  });

  it('draws the latency heatmaps among the SVG charts', async () => {
    const out = path.join(home, 'svg');
    const r = await runKbench(home, ['export', record.id, '--svg', '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    const svg = await readFile(path.join(out, `kbench-${record.id}-heatmap-publish.svg`), 'utf8');
    expect(svg).toContain('>Publish latency heatmap</text>');
    // The cells: one filled rectangle per (interval, band) that holds records.
    expect((svg.match(/<path d="M\d/g) ?? []).length).toBeGreaterThan(5);
    expect(r.stdout).toContain(`kbench-${record.id}-heatmap-e2e.svg`);
  });

  it('refuses a format it does not know, naming the ones it does (exit 2)', async () => {
    const r = await runKbench(home, ['export', record.id, '--format', 'hdr']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      '--format "hdr" is not one of csv, svg, png, json, omb, hlog, histograms-json',
    );
  });
});
