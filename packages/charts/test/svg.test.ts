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

describe('renderSvg draws what the page draws', () => {
  it('draws the fault markers', () => {
    const [throughput] = runCharts(samples(10, 2), 'run', [{ t: 5, label: 'kill node 2' }]);
    expect(renderSvg(throughput!.option)).toContain('>kill node 2</text>');
  });

  it("names the run and its id under a single-run chart's title", () => {
    for (const chart of runCharts(samples(10, 2), 'quickstart', [], '0123456789ab'))
      expect(renderSvg(chart.option), chart.id).toContain('>quickstart (0123456789ab)</text>');
  });

  it('shows every legend entry, without paging, and makes the picture taller rather than cover the plot', () => {
    const runs = Array.from({ length: 5 }, (_, i) => ({
      label: `run ${i} with a long name that takes most of a legend row`,
      samples: samples(10),
    }));
    const spec = throughputChart(runs);
    expect((spec.option.legend as { type: string }).type).toBe('scroll');
    const svg = renderSvg(spec.option);
    expect(svg).not.toMatch(/>\d+\/\d+<\/text>/);
    for (const run of runs) expect(svg).toContain(`>${run.label}: consumed</text>`);
    expect(Number(/height="(\d+)"/.exec(svg)?.[1])).toBeGreaterThan(420);
  });
});
