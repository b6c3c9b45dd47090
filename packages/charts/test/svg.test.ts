import type { LineSeriesOption } from 'echarts';
import { describe, expect, it } from 'vitest';
import { latencyChart, renderSvg, runCharts, throughputChart } from '../src/index.js';
import { samples } from './fixtures.js';

describe('renderSvg', () => {
  it('renders an SVG document with the title and a path stroked in each series colour', () => {
    const spec = throughputChart([
      { label: 'a', samples: samples(10, 2) },
      { label: 'b', samples: samples(10, 2, { producedRecords: 70_000 }) },
    ]);
    const svg = renderSvg(spec.option);
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg).toContain('Throughput');
    expect(svg).toContain('rec/s');
    for (const series of spec.option.series as LineSeriesOption[]) {
      expect(svg).toMatch(new RegExp(`<path d="M[^"]*L[^"]*"[^>]*stroke="${String(series.color)}"`));
    }
  });

  it('uses the size it is given', () => {
    const svg = renderSvg(throughputChart([{ label: 'a', samples: samples(3) }]).option, {
      width: 400,
      height: 200,
    });
    expect(svg).toContain('width="400"');
    expect(svg).toContain('height="200"');
  });

  it('renders a latency chart with gaps on its log axis', () => {
    const data = samples(5).map((s, i) => (i === 2 ? { ...s, publishP50Ms: null } : s));
    expect(renderSvg(latencyChart([{ label: 'a', samples: data }]).option)).toContain('Latency');
  });

  it('renders the empty charts with their message', () => {
    for (const spec of runCharts([])) expect(renderSvg(spec.option)).toContain('no samples yet');
  });

  it('renders the same SVG for the same input', () => {
    const option = runCharts(samples(10, 2))[0]!.option;
    expect(renderSvg(option)).toBe(renderSvg(option));
  });
});

describe('renderSvg ids', () => {
  it('gives different charts different clip-path ids, so several can share one HTML page', () => {
    const [throughput, bandwidth] = runCharts(samples(10, 2));
    const ids = (svg: string) => [...svg.matchAll(/id="([^"]+)"/g)].map((m) => m[1]);
    const first = ids(renderSvg(throughput!.option));
    expect(first.length).toBeGreaterThan(0);
    expect(ids(renderSvg(bandwidth!.option)).filter((id) => first.includes(id))).toEqual([]);
  });
});
