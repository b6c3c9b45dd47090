// The latency heatmap: records binned into log bands per sample interval, drawn on the server too.
import { describe, expect, it } from 'vitest';
import { type HeatmapInput, heatmapCharts, latencyHeatmapChart, renderSvg } from '../src/index.js';

const input: HeatmapInput = {
  side: 'publish',
  intervals: [
    { t: 0.5, warmup: true, buckets: [[900, 10]] },
    // 1 ms and 1.1 ms share a band (four bands a decade); 50 ms is its own, 0 µs the lowest.
    {
      t: 1,
      warmup: false,
      buckets: [
        [1000, 5],
        [1100, 7],
        [50_000, 1],
        [0, 2],
      ],
    },
    { t: 1.5, warmup: false, buckets: [] },
  ],
};

type Cell = [number, number, number, number];

describe('latencyHeatmapChart', () => {
  it('puts each interval in a column and sums the records of each band', () => {
    const chart = latencyHeatmapChart(input, 'a run', 'abc123');
    const series = (chart.option.series as { type: string; data: Cell[] }[])[0];
    expect(series?.type).toBe('heatmap');
    const yAxis = chart.option.yAxis as { data: string[] };
    const cells = (series?.data ?? []).map(([x, y, , count]) => [x, yAxis.data[y], count]);
    expect(cells).toEqual(
      expect.arrayContaining([
        [0, '0.56 ms', 10],
        [1, '1 ms', 12],
        [1, '32 ms', 1],
        [1, '0 ms', 2],
      ]),
    );
    expect(cells).toHaveLength(4);
    expect((chart.option.xAxis as { data: string[] }).data).toEqual(['0.5', '1', '1.5']);
  });

  it('labels 100 ms sample columns to a tenth of a second, not float noise', () => {
    const fine: HeatmapInput = {
      side: 'publish',
      intervals: [3.801, 4.302000001, 4.8].map((t) => ({ t, warmup: false, buckets: [[1000, 1]] })),
    };
    const chart = latencyHeatmapChart(fine, 'a run', 'abc123');
    expect((chart.option.xAxis as { data: string[] }).data).toEqual(['3.8', '4.3', '4.8']);
  });

  it('renders to SVG on the server with its cells and colour scale', () => {
    const svg = renderSvg(latencyHeatmapChart(input, 'a run', 'abc123').option);
    expect(svg).toContain('>Publish latency heatmap</text>');
    expect(svg).toContain('>a run (abc123)</text>');
    expect(svg).toContain('>records (log)</text>');
  });

  it('names each run’s heatmaps by id when several are drawn, and leaves out a side with no histograms', () => {
    const one = heatmapCharts([{ label: 'a', id: 'Run1', publish: input, e2e: null }]);
    expect(one.map((c) => c.id)).toEqual(['heatmap-publish']);
    const two = heatmapCharts([
      { label: 'a', id: 'Run1', publish: input, e2e: { ...input, side: 'e2e' } },
      { label: 'b', id: 'run2', publish: null, e2e: null },
    ]);
    expect(two.map((c) => c.id)).toEqual(['heatmap-publish-run1', 'heatmap-e2e-run1']);
  });
});
