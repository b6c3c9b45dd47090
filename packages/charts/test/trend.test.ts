import { buildTrend, type RunListItem, type RunSummary } from '@kbench/schema';
import type { LineSeriesOption } from 'echarts';
import { describe, expect, it } from 'vitest';
import { renderSvg, trendChart, trendChartId, trendCharts } from '../src/index.js';

function summary(rate: number): RunSummary {
  return {
    measuredSeconds: 5,
    produced: { records: rate * 5, recordsPerSec: rate, mbPerSec: rate / 1e4, wireMbPerSec: null, errors: 0 },
    consumed: { records: 0, recordsPerSec: 0, mbPerSec: 0 },
    publishLatencyMs: null,
    endToEndLatencyMs: null,
  };
}

const RATES = [1000, 1010, 990, 1004, 996, 1002, 600, 606, 594, 603, 597, 601];
const runs: RunListItem[] = RATES.map((rate, i) => ({
  id: `run-${i}`,
  status: 'completed',
  source: null,
  summary: summary(rate),
  error: null,
  startedAt: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString(),
  finishedAt: null,
  tags: [],
  notes: '',
  name: 'steady',
  target: 'bundled',
  driver: 'native',
  ...(i === 2 ? { concurrentWith: ['other'] } : {}),
}));
const trend = buildTrend('steady', 'bundled', runs);
const produced = trend.series.find((s) => s.metric === 'produced.recordsPerSec')!;

describe('trendChart', () => {
  const spec = trendChart(trend, produced);
  const [line, means] = spec.option.series as LineSeriesOption[];
  const points = line?.data as { name: string; value: [number, number]; symbol: string; label?: unknown }[];

  it('draws a point per run at its start time, named by its run id', () => {
    expect(spec.id).toBe('trend-produced-recordspersec');
    expect(points.map((p) => p.name)).toEqual(runs.map((r) => r.id));
    expect(points[0]?.value).toEqual([Date.parse(runs[0]!.startedAt), 1000]);
  });

  it('labels the best run, and draws a run that shared the machine hollow', () => {
    expect(points.filter((p) => p.label).map((p) => p.name)).toEqual(['run-1']);
    expect(points[2]?.symbol).toBe('emptyCircle');
  });

  it('draws the change point at its run with the change, and the means either side as steps', () => {
    const marks = (line?.markLine?.data ?? []) as { name: string; xAxis: number }[];
    expect(marks).toHaveLength(1);
    expect(marks[0]?.xAxis).toBe(Date.parse(runs[6]!.startedAt));
    // Run 2 shared the machine: the mean before is that of runs 0, 1, 3, 4 and 5.
    expect(marks[0]?.name).toBe('-40.1% (worse)\n1,002 → 600 rec/s');
    const steps = (means?.data ?? []) as [number, number][];
    expect(steps[0]?.[1]).toBeCloseTo(produced.changePoints[0]!.before);
    expect(steps.at(-1)?.[1]).toBeCloseTo(produced.changePoints[0]!.after);
  });

  it('says so when no run has the figure', () => {
    const e2e = trend.series.find((s) => s.metric === 'endToEndLatencyMs.p99')!;
    expect(trendChart(trend, e2e).title).toBe('end-to-end p99: no run has this figure');
  });

  it('renders to SVG with the title, the change and the best label', () => {
    const svg = renderSvg(spec.option);
    expect(svg).toContain('produced rec/s over time');
    expect(svg).toContain('(worse)');
    expect(svg).toContain('>best</text>');
  });

  it('gives one chart per figure, each with its own id', () => {
    expect(trendCharts(trend).map((c) => c.id)).toEqual(trend.series.map((s) => trendChartId(s.metric)));
  });
});
