// What every chart shares: the spec type, the palette, the base option, and how a run becomes line series.

import type { Sample } from '@kbench/schema';
import type { EChartsOption, LineSeriesOption, TitleComponentOption } from 'echarts';

/** A chart ready to draw: a stable id (for file names and React keys), its title, and the ECharts option. */
export interface ChartSpec {
  id: string;
  title: string;
  option: EChartsOption;
}

/** One run's samples; the label (a run's name or id) names its series in the legend. */
export interface RunSeries {
  label: string;
  /** The stored run's id: a chart of this run alone says "<label> (<id>)" under its title. */
  id?: string;
  samples: Sample[];
  /** Faults of the run's timeline, drawn as vertical markers at their time (seconds). */
  faults?: FaultMark[];
}

export interface FaultMark {
  t: number;
  label: string;
  /** The end of the fault's window (recovery, the next fault or the end of load), in seconds: drawn as a band from t. */
  until?: number;
}

/** The band from a fault's start to its recovery (docs/scenarios.md#recovery-figures). */
export const FAULT_BAND = 'rgba(220, 38, 38, 0.1)';

/** Every colour a chart uses. With one run each metric takes a colour; with several, each run does. */
export const PALETTE = [
  '#2563eb',
  '#ea580c',
  '#16a34a',
  '#9333ea',
  '#dc2626',
  '#0891b2',
  '#ca8a04',
  '#db2777',
] as const;

/** The shade behind warm-up seconds (left out of the summary). */
export const WARMUP_SHADE = 'rgba(148, 163, 184, 0.18)';

/** One line to draw per run: what it is called and how to read its value from a sample. */
export interface Metric {
  name: string;
  value: (sample: Sample) => number | null;
  lineType?: 'solid' | 'dashed' | 'dotted';
  width?: number;
  /** Drawn even when it is 0 throughout, where a 0 says something; a line with no value at all is not. */
  keepZero?: boolean;
}

export interface TimeChart {
  id: string;
  title: string;
  /** Name of the y axis, with its unit. */
  yName: string;
  yLog?: boolean;
}

/** Counts per second of an interval (null for an interval of no length). */
export function perSecond(count: number, intervalMs: number): number | null {
  return intervalMs > 0 ? (count * 1000) / intervalMs : null;
}

/**
 * Builds a chart of some metrics over time, one line per run and metric; lines that are all empty (or
 * all 0, unless the metric keeps zeros) are left out.
 */
export function timeChart(chart: TimeChart, runs: RunSeries[], metrics: Metric[]): ChartSpec {
  const only = runs.length === 1 ? runs[0] : undefined;
  const subtitle = only?.id ? runIdentity(only.label, only.id) : undefined;
  const withData = runs.filter((run) => run.samples.length > 0);
  if (withData.length === 0) return emptyChart(chart, subtitle);
  const series: LineSeriesOption[] = [];
  withData.forEach((run, runIndex) => {
    const drawn = metrics
      .map((metric, metricIndex) => ({ metric, metricIndex, data: points(run.samples, metric, chart.yLog) }))
      .filter(
        (line, i) => i === 0 || line.data.some(([, y]) => y !== null && (y !== 0 || line.metric.keepZero)),
      );
    for (const [i, { metric, metricIndex, data }] of drawn.entries()) {
      const color = PALETTE[(withData.length === 1 ? metricIndex : runIndex) % PALETTE.length];
      series.push({
        type: 'line',
        name: withData.length === 1 ? metric.name : `${run.label}: ${metric.name}`,
        data,
        // A line needs two points; show the dots while a run has too few to draw one.
        showSymbol: run.samples.length < 2,
        connectNulls: false,
        color,
        lineStyle: { color, type: metric.lineType ?? 'solid', width: metric.width ?? 2 },
        ...(i === 0 ? shadedAreas(run.samples, run.faults ?? []) : {}),
        // With several runs, each run's markers say whose fault they are.
        ...(i === 0 && run.faults?.length
          ? faultLines(
              withData.length === 1
                ? run.faults
                : run.faults.map((f) => ({ ...f, label: `${run.label}: ${f.label}` })),
            )
          : {}),
      });
    }
  });
  return {
    id: chart.id,
    title: chart.title,
    option: {
      ...baseOption(chart.title, chart, subtitle),
      // Many lines (a comparison) would wrap the legend over the plot: keep it to one scrolling row.
      legend: {
        top: heading(chart.title, subtitle).legendTop,
        type: series.length > 4 ? 'scroll' : 'plain',
        data: series.map((s) => String(s.name)),
      },
      series,
    },
  };
}

function emptyChart(chart: TimeChart, subtitle?: string): ChartSpec {
  const title = `${chart.title}: no samples yet`;
  return { id: chart.id, title, option: { ...baseOption(title, chart, subtitle), series: [] } };
}

/** How a chart of one stored run names it: as the run page and the history do. */
export function runIdentity(name: string, id: string): string {
  return `${name} (${id})`;
}

/**
 * A chart's title, with an optional second line under it (the run a single-run chart shows), and where
 * the legend and the plot start below them.
 */
export function heading(
  text: string,
  subtitle?: string,
): { title: TitleComponentOption; legendTop: number; gridTop: number } {
  // top: 5 as ECharts 5 placed titles (6 moved them 15 px down, onto the legend).
  const title: TitleComponentOption = { text, left: 'center', top: 5, textStyle: { fontSize: 14 } };
  if (subtitle === undefined) return { title, legendTop: 28, gridTop: 72 };
  return {
    title: { ...title, subtext: subtitle, itemGap: 4, subtextStyle: { fontSize: 12, color: '#64748b' } },
    legendTop: 48,
    gridTop: 92,
  };
}

function baseOption(text: string, chart: TimeChart, subtitle?: string): EChartsOption {
  const { title, gridTop } = heading(text, subtitle);
  return {
    animation: false,
    color: [...PALETTE],
    title,
    tooltip: { trigger: 'axis' },
    grid: { left: 72, right: 32, top: gridTop, bottom: 56 },
    xAxis: { type: 'value', name: 'time (s)', nameLocation: 'middle', nameGap: 30, min: 0 },
    yAxis: chart.yLog
      ? { type: 'log', logBase: 10, name: chart.yName, nameLocation: 'end' }
      : { type: 'value', name: chart.yName, nameLocation: 'end', min: 0 },
  };
}

/** [seconds, value] pairs; a null value leaves a gap. A log axis cannot show 0, so 0 becomes a gap there too. */
function points(samples: Sample[], metric: Metric, log = false): [number, number | null][] {
  return samples.map((sample) => {
    const value = metric.value(sample);
    return [sample.t, value === null || !Number.isFinite(value) || (log && value <= 0) ? null : value];
  });
}

/** A dashed vertical line per fault, labelled with what it was. */
function faultLines(faults: FaultMark[]): Pick<LineSeriesOption, 'markLine'> {
  return {
    markLine: {
      silent: true,
      symbol: 'none',
      lineStyle: { color: '#dc2626', type: 'dashed', width: 1 },
      label: { formatter: '{b}', color: '#dc2626', position: 'insideEndTop' },
      data: faults.map((f) => ({ name: f.label, xAxis: f.t })),
    },
  };
}

/**
 * Shaded areas: over the warm-up seconds (from the start of the first warm-up interval to the end of
 * the last), and a band over each fault's window, from its start to its recovery.
 */
function shadedAreas(samples: Sample[], faults: FaultMark[]): Pick<LineSeriesOption, 'markArea'> {
  type Area = [{ name?: string; xAxis: number; itemStyle?: { color: string } }, { xAxis: number }];
  const data: Area[] = [];
  const warm = samples.filter((s) => s.warmup);
  const first = warm[0];
  const last = warm.at(-1);
  if (first !== undefined && last !== undefined)
    data.push([
      { name: 'warm-up', xAxis: Math.max(0, first.t - first.intervalMs / 1000) },
      { xAxis: last.t },
    ]);
  for (const f of faults)
    if (f.until !== undefined && f.until > f.t)
      data.push([{ xAxis: f.t, itemStyle: { color: FAULT_BAND } }, { xAxis: f.until }]);
  if (data.length === 0) return {};
  return {
    markArea: {
      silent: true,
      itemStyle: { color: WARMUP_SHADE },
      label: { show: true, position: 'insideTop', color: '#64748b' },
      data,
    },
  };
}
