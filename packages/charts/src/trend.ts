// A scenario's trend on a target: one chart per headline figure, a point per run over time (the
// point named by its run's id, so a page can open the run it is clicked on), the best run labelled,
// the change points as vertical lines with the change, and the mean between change points as steps.
import type { Trend, TrendSeries } from '@kbench/schema';
import type { EChartsOption, LineSeriesOption } from 'echarts';
import { type ChartSpec, heading, PALETTE } from './common.js';

const WORSE = '#dc2626';
const BETTER = '#16a34a';
/** A run that shared the machine: drawn hollow and grey, as it is left out of change points and best. */
const SHARED = '#94a3b8';

/** The chart id of a trend's figure: `trend-produced-recordspersec`. */
export function trendChartId(metric: string): string {
  return `trend-${metric.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
}

function figureText(series: TrendSeries, value: number): string {
  const digits = series.unit === 'ms' || series.unit === 'MB/s' ? 2 : 0;
  return `${value.toLocaleString('en-US', { maximumFractionDigits: digits })} ${series.unit}`;
}

/** The words of a change point: `-20.0%: 1,000 → 800 rec/s (worse)`. */
export function changeLabel(series: TrendSeries, change: TrendSeries['changePoints'][number]): string {
  const percent =
    change.changePercent === null
      ? ''
      : `${change.changePercent >= 0 ? '+' : ''}${change.changePercent.toFixed(1)}%: `;
  return `${percent}${figureText(series, change.before)} → ${figureText(series, change.after)} (${change.verdict})`;
}

/** A figure in few characters, for a label on the chart: `1.11 M`, `312 k`, `4.25`. */
function compact(value: number): string {
  const size = Math.abs(value);
  if (size >= 1e6) return `${(value / 1e6).toFixed(2)} M`;
  if (size >= 1e4) return `${(value / 1e3).toFixed(0)} k`;
  return value.toLocaleString('en-US', { maximumFractionDigits: size >= 100 ? 0 : 2 });
}

/** A change point's label on the chart, two short lines: `-72.0% (worse)` over `1.11 M → 312 k rec/s`. */
export function changeMarkLabel(series: TrendSeries, change: TrendSeries['changePoints'][number]): string {
  const percent =
    change.changePercent === null
      ? ''
      : `${change.changePercent >= 0 ? '+' : ''}${change.changePercent.toFixed(1)}% `;
  return `${percent}(${change.verdict})\n${compact(change.before)} → ${compact(change.after)} ${series.unit}`;
}

/** One figure of a trend over time. */
export function trendChart(trend: Trend, series: TrendSeries): ChartSpec {
  const id = trendChartId(series.metric);
  const at = trend.sweepValue === undefined ? '' : ` at sweep value ${trend.sweepValue}`;
  const subtitle = `${trend.scenario}${at} on ${trend.target}`;
  const times = trend.runs.map((run) => Date.parse(run.startedAt));
  const color = PALETTE[0];
  const points = trend.runs.flatMap((run, i) => {
    const value = series.values[i];
    if (value === null || value === undefined) return [];
    const best = series.best?.runId === run.id;
    const shared = run.concurrentWith !== undefined || run.machineShared !== undefined;
    return [
      {
        name: run.id,
        value: [times[i] as number, value],
        symbol: shared ? 'emptyCircle' : run.clientPaced ? 'triangle' : 'circle',
        symbolSize: best ? 12 : 7,
        itemStyle: { color: best ? BETTER : shared ? SHARED : color },
        ...(best
          ? { label: { show: true, formatter: 'best', position: 'top' as const, color: BETTER } }
          : {}),
      },
    ];
  });
  const title = points.length > 0 ? `${series.label} over time` : `${series.label}: no run has this figure`;
  const { title: titleOption, legendTop, gridTop: below } = heading(title, subtitle);
  // Room above the plot for the change points' labels, which sit over the top of their lines.
  const gridTop = series.changePoints.length > 0 ? below + 28 : below;
  const lines: LineSeriesOption[] = [];
  if (points.length > 0) {
    lines.push({
      type: 'line',
      name: series.label,
      data: points,
      color,
      lineStyle: { color, width: 2 },
      showAllSymbol: true,
      markLine: {
        symbol: 'none',
        silent: true,
        label: { formatter: '{b}', position: 'end', lineHeight: 14 },
        data: series.changePoints.map((change) => {
          const index = trend.runs.findIndex((run) => run.id === change.runId);
          const tint = change.verdict === 'worse' ? WORSE : BETTER;
          return {
            name: changeMarkLabel(series, change),
            xAxis: times[index] ?? 0,
            lineStyle: { color: tint, type: 'dashed' as const, width: 1.5 },
            label: { color: tint },
          };
        }),
      },
    });
    if (series.changePoints.length > 0) lines.push(segmentMeans(trend, series, times));
  }
  const option: EChartsOption = {
    animation: false,
    color: [...PALETTE],
    title: titleOption,
    tooltip: { trigger: 'item' },
    legend: { top: legendTop, data: lines.map((line) => String(line.name)) },
    grid: { left: 72, right: 32, top: gridTop, bottom: 56 },
    xAxis: { type: 'time', name: 'run started', nameLocation: 'middle', nameGap: 30 },
    yAxis: { type: 'value', name: series.unit, nameLocation: 'end', scale: true },
    series: lines,
  };
  return { id, title, option };
}

/** The mean of each stretch between change points, as a step line under the runs. */
function segmentMeans(trend: Trend, series: TrendSeries, times: number[]): LineSeriesOption {
  const starts = series.changePoints.map((c) => trend.runs.findIndex((run) => run.id === c.runId));
  const data = trend.runs.map((_, i) => {
    const segment = starts.filter((start) => start <= i).length;
    const mean = segment === 0 ? series.changePoints[0]?.before : series.changePoints[segment - 1]?.after;
    return [times[i] as number, mean ?? null];
  });
  return {
    type: 'line',
    name: 'mean between change points',
    data,
    step: 'end',
    showSymbol: false,
    silent: true,
    color: PALETTE[1],
    lineStyle: { color: PALETTE[1], type: 'dotted', width: 1.5 },
  };
}

/** Every figure of a trend, in the trend's order. */
export function trendCharts(trend: Trend): ChartSpec[] {
  return trend.series.map((series) => trendChart(trend, series));
}
