// `kbench trend` spawned as a user runs it, over a history written by @kbench/history as runs write it.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { History } from '@kbench/history';
import { parseScenario, type RunSummary, type Trend } from '@kbench/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKbench } from './helpers.js';

let home: string;

function summary(rate: number, p99: number): RunSummary {
  const l = {
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
    publishLatencyMs: l,
    endToEndLatencyMs: null,
  };
}

// Ten runs near 50,000 rec/s, then ten near 40,000: one change point, at r10. One more on kafka.
const RATES = [50_000, 50_400, 49_600, 50_200, 49_800, 50_100, 49_900, 50_300, 49_700, 50_000];
const SLOWER = RATES.map((r) => r - 10_000);

beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'kbench-trend-test-'));
  const history = await History.open(path.join(home, 'history.duckdb'));
  const runs = [...RATES, ...SLOWER].map((rate, i) => ({ id: `r${i}`, target: 'bundled', rate }));
  runs.push({ id: 'k0', target: 'kafka', rate: 1 }, { id: 'w0', target: 'bundled', rate: 7 });
  for (const [i, run] of runs.entries()) {
    const startedAt = new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString();
    await history.createRun({
      id: run.id,
      status: 'running',
      scenario: parseScenario({ name: 'steady producer', target: run.target }),
      source: null,
      environment: {
        cores: 2,
        cpuModel: 'cpu',
        memoryBytes: 1,
        os: 'linux',
        hostname: 'h',
        versions: {},
        target: run.target,
        bootstrap: '127.0.0.1:9092',
        driver: 'native',
      },
      summary: null,
      error: null,
      startedAt,
      finishedAt: null,
      tags: [],
      notes: '',
      ...(run.id === 'r3' ? { concurrentWith: ['other'] } : {}),
      ...(run.id === 'w0' ? { sweepValue: '1KB', series: 'sweep:test' } : {}),
    });
    const s = summary(run.rate, 3 + (i % 2));
    await history.finishRun(run.id, { status: 'completed', summary: s, error: null, finishedAt: startedAt });
  }
});

afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

describe('kbench trend', () => {
  it('prints every run oldest first, the best run marked, the change point and the marks explained', async () => {
    const out = await runKbench(home, ['trend', 'steady producer', '--target', 'bundled']);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toMatch(/trend of "steady producer" on bundled: 20 completed runs, oldest first/);
    const rows = out.stdout.split('\n').filter((line) => /^r\d+/.test(line));
    expect(rows.map((line) => line.split(/\s+/)[0])).toEqual([...RATES, ...SLOWER].map((_, i) => `r${i}`));
    // r1 is the fastest alone on the machine; r3 shared it.
    expect(rows[1]).toMatch(/50,400 </);
    expect(rows[3]).toMatch(/^r3 \*/);
    expect(out.stdout).toMatch(/produced rec\/s at r10: 49,978 -> 40,000, -20\.0%, worse \(p = 0\.\d+\)/);
    expect(out.stdout).toMatch(/\* shared the machine with another run/);
  });

  it('writes a chart per figure with --svg, the change point drawn', async () => {
    const dir = path.join(home, 'charts');
    const out = await runKbench(home, ['trend', 'steady producer', '--target', 'bundled', '--svg', dir]);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stderr).toContain(`wrote 6 SVG charts to ${dir}`);
    const svg = await readFile(path.join(dir, 'kbench-trend-produced-recordspersec.svg'), 'utf8');
    expect(svg).toContain('produced rec/s over time');
    expect(svg).toContain('-20.0% (worse)');
    expect(svg).toContain('50 k → 40 k rec/s');
  });

  it('answers --json with the trend of one --metric', async () => {
    const out = await runKbench(home, [
      'trend',
      'steady producer',
      '--target',
      'bundled',
      '--metric',
      'publishLatencyMs.p99',
      '--json',
    ]);
    expect(out.code, out.stderr).toBe(0);
    const trend = JSON.parse(out.stdout) as Trend;
    expect(trend.series.map((s) => s.metric)).toEqual(['publishLatencyMs.p99']);
    expect(trend.series[0]?.best).toEqual({ runId: 'r0', value: 3 });
  });

  it("--sweep-value gives a sweep point's runs alone", async () => {
    const out = await runKbench(home, [
      'trend',
      'steady producer',
      '--target',
      'bundled',
      '--sweep-value',
      '1KB',
    ]);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toMatch(/trend of "steady producer" at sweep value 1KB on bundled: 1 completed run,/);
    expect(out.stdout.split('\n').filter((line) => /^w0\s/.test(line))).toHaveLength(1);
  });

  it('exits 2 naming the targets when the scenario ran on several and none is given', async () => {
    const out = await runKbench(home, ['trend', 'steady producer']);
    expect(out.code).toBe(2);
    expect(out.stderr).toMatch(/ran on 2 targets; name one with target: bundled, kafka/);
  });

  it('exits 2 naming an unknown scenario, and an unknown --metric with the metrics there are', async () => {
    const unknown = await runKbench(home, ['trend', 'steady']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no completed run of scenario "steady".*steady producer/);
    const metric = await runKbench(home, ['trend', 'steady producer', '--metric', 'rate']);
    expect(metric.code).toBe(2);
    expect(metric.stderr).toMatch(/--metric must be one of produced\.recordsPerSec, .* \(got "rate"\)/);
  });

  it('--help lists its options', async () => {
    const out = await runKbench(home, ['trend', '--help']);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain('kbench trend <scenario>');
    for (const option of ['Options of trend:', '--target T', '--metric M', '--svg DIR, --png DIR']) {
      expect(out.stdout).toContain(option);
    }
  });
});
