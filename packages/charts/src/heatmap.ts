// A latency heatmap: time on x, latency bands on y (a log scale, four bands a decade), the records
// of each band in each sample interval as colour. Built from the histograms each sample stores.
import type { EChartsOption, HeatmapSeriesOption } from 'echarts';
import { type ChartSpec, heading, runIdentity } from './common.js';

/**
 * One side's histograms over time, as the server and the CLI hand them over: for each sample its
 * time and its histogram as [highest value of a bucket in µs, count] pairs.
 */
export interface HeatmapInput {
  side: 'publish' | 'e2e';
  intervals: { t: number; warmup: boolean; buckets: [number, number][] }[];
}

const BANDS_PER_DECADE = 4;

function bandOf(micros: number): number {
  return Math.floor(Math.log10(Math.max(1, micros)) * BANDS_PER_DECADE + 1e-9);
}

function bandLabel(band: number): string {
  // The lowest band also holds latencies measured as 0 (end-to-end latency from millisecond timestamps).
  if (band <= 0) return '0 ms';
  const ms = 10 ** (band / BANDS_PER_DECADE) / 1000;
  return ms >= 1000 ? `${Number((ms / 1000).toPrecision(2))} s` : `${Number(ms.toPrecision(2))} ms`;
}

/** The heatmap of one run's publish or end-to-end latency. */
export function latencyHeatmapChart(input: HeatmapInput, label = 'run', id?: string): ChartSpec {
  const what = input.side === 'publish' ? 'Publish latency' : 'End-to-end latency';
  const title = `${what} heatmap`;
  const chartId = `heatmap-${input.side}`;
  const layout = heading(title, id === undefined ? undefined : runIdentity(label, id));
  const cells = new Map<string, number>();
  let low = Number.POSITIVE_INFINITY;
  let high = Number.NEGATIVE_INFINITY;
  input.intervals.forEach((interval, x) => {
    for (const [micros, count] of interval.buckets) {
      if (count <= 0) continue;
      const band = bandOf(micros);
      low = Math.min(low, band);
      high = Math.max(high, band);
      cells.set(`${x}:${band}`, (cells.get(`${x}:${band}`) ?? 0) + count);
    }
  });
  const bands = Number.isFinite(low) ? Array.from({ length: high - low + 1 }, (_, i) => low + i) : [];
  const data: [number, number, number, number][] = [];
  for (const [key, count] of cells) {
    const [x, band] = key.split(':').map(Number) as [number, number];
    data.push([x, band - low, Math.log10(count), count]);
  }
  const top = data.reduce((m, d) => Math.max(m, d[2]), 0);
  const series: HeatmapSeriesOption = {
    type: 'heatmap',
    name: what,
    data,
    progressive: 0,
    emphasis: { disabled: true },
  };
  const option: EChartsOption = {
    animation: false,
    title: bands.length === 0 ? { ...layout.title, text: `${title}: no histograms stored` } : layout.title,
    tooltip: {
      position: 'top',
      formatter: (params: unknown) => {
        const p = params as { value: [number, number, number, number] };
        const [x, y, , count] = p.value;
        const t = Math.round((input.intervals[x]?.t ?? 0) * 1000) / 1000;
        return `${t} s: ${count} records at ${bandLabel(low + y)} to ${bandLabel(low + y + 1)}`;
      },
    },
    grid: { left: 84, right: 84, top: layout.gridTop, bottom: 56 },
    xAxis: {
      type: 'category',
      name: 'time (s)',
      nameLocation: 'middle',
      nameGap: 30,
      // Sample ends to a tenth of a second (the finest sample interval), not float noise like 4.302.
      data: input.intervals.map((i) => String(Math.round(i.t * 10) / 10)),
      splitArea: { show: false },
    },
    yAxis: {
      type: 'category',
      name: 'latency (log bands)',
      nameLocation: 'end',
      data: bands.map((b) => bandLabel(b)),
      splitArea: { show: false },
    },
    visualMap: {
      type: 'continuous',
      min: 0,
      max: Math.max(1, top),
      calculable: false,
      orient: 'vertical',
      right: 8,
      top: layout.gridTop,
      dimension: 2,
      text: ['records (log)', ''],
      // One ramp, light to dark (YlOrRd): more records, darker.
      inRange: { color: ['#ffeda0', '#fed976', '#fd8d3c', '#e31a1c', '#800026'] },
      formatter: (value: unknown) => String(Math.round(10 ** Number(value))),
    },
    series: [series],
  };
  return { id: chartId, title, option };
}

/** A run's heatmap inputs, as GET /api/runs/:id/heatmap answers them. */
export interface RunHeatmapInputs {
  label: string;
  id: string;
  publish: HeatmapInput | null;
  e2e: HeatmapInput | null;
}

/**
 * The heatmaps of one run (ids heatmap-publish, heatmap-e2e) or of several, each run's named by its
 * id (heatmap-publish-<id>); a side a run stored no histograms of is left out.
 */
export function heatmapCharts(runs: RunHeatmapInputs[]): ChartSpec[] {
  return runs.flatMap((run) =>
    [run.publish, run.e2e]
      .filter((input): input is HeatmapInput => input !== null && input.intervals.length > 0)
      .map((input) => {
        const chart = latencyHeatmapChart(input, run.label, run.id);
        return runs.length === 1 ? chart : { ...chart, id: `${chart.id}-${run.id.toLowerCase()}` };
      }),
  );
}
