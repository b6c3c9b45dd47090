// Charts that put finished runs side by side: the percentile ladder and the headline figures.
import {
  distinctNames,
  type FaultEvent,
  type LatencySummary,
  type RunSummary,
  type Sample,
  scenarioDifferences,
} from '@kbench/schema';
import type { BarSeriesOption, EChartsOption, LineSeriesOption } from 'echarts';
import { backlogChart, faultMarks, latencyChart, type TimelineFault, throughputChart } from './charts.js';
import { type ChartSpec, type FaultMark, PALETTE } from './common.js';

export interface RunResult {
  label: string;
  summary: RunSummary | null;
  samples: Sample[];
  /** The run's resolved scenario: when exactly one setting differs between runs (a sweep), a curve against it is drawn. */
  scenario?: unknown;
  /** The run's faults, marked on the time charts with the run's label. */
  faults?: FaultMark[];
}

const LADDER: { key: keyof LatencySummary; name: string }[] = [
  { key: 'p50', name: 'p50' },
  { key: 'p75', name: 'p75' },
  { key: 'p95', name: 'p95' },
  { key: 'p99', name: 'p99' },
  { key: 'p999', name: 'p99.9' },
  { key: 'p9999', name: 'p99.99' },
  { key: 'max', name: 'max' },
];

function base(title: string): EChartsOption {
  return {
    animation: false,
    color: [...PALETTE],
    title: { text: title, left: 'center', textStyle: { fontSize: 14 } },
    tooltip: { trigger: 'axis' },
    grid: { left: 72, right: 32, top: 72, bottom: 56 },
  };
}

const LEGEND_ROW = 22;

/** About how many rows a plain legend of these labels takes in a chart 480 px wide (12 px type). */
function legendRows(labels: string[], width = 480): number {
  let rows = 1;
  let x = 0;
  for (const label of labels) {
    const item = 25 + 5 + label.length * 6.6 + 10;
    if (x > 0 && x + item > width) {
      rows++;
      x = 0;
    }
    x += item;
  }
  return rows;
}

/** Latency percentiles p50 .. p99.99 and max, one line per run, on a log scale. */
export function percentileLadderChart(
  runs: RunResult[],
  which: 'publish' | 'endToEnd' = 'publish',
): ChartSpec {
  const title = which === 'publish' ? 'Publish latency percentiles' : 'End-to-end latency percentiles';
  const series: LineSeriesOption[] = runs.map((run, i) => {
    const latency = which === 'publish' ? run.summary?.publishLatencyMs : run.summary?.endToEndLatencyMs;
    const color = PALETTE[i % PALETTE.length];
    return {
      type: 'line',
      name: run.label,
      color,
      lineStyle: { color, width: 2 },
      data: LADDER.map(({ key }) => {
        const v = latency?.[key];
        return typeof v === 'number' && v > 0 ? v : null;
      }),
    };
  });
  return {
    id: which === 'publish' ? 'publish-percentiles' : 'e2e-percentiles',
    title,
    option: {
      ...base(title),
      // A legend of long labels wraps to more rows: the plot starts below the last.
      grid: {
        left: 72,
        right: 32,
        top: 72 + (legendRows(runs.map((r) => r.label)) - 1) * LEGEND_ROW,
        bottom: 56,
      },
      legend: { top: 28, data: runs.map((r) => r.label) },
      xAxis: {
        type: 'category',
        name: 'percentile',
        nameLocation: 'middle',
        nameGap: 30,
        data: LADDER.map((l) => l.name),
      },
      yAxis: { type: 'log', logBase: 10, name: 'ms', nameLocation: 'end' },
      series,
    },
  };
}

/** The plot width a bar chart's labels may share: a compare page's chart at its narrowest. */
const BARS_WIDTH = 420;

/** One bar per run for a headline figure. */
function barsChart(
  id: string,
  title: string,
  unit: string,
  runs: RunResult[],
  value: (s: RunSummary) => number | null,
) {
  const series: BarSeriesOption[] = [
    {
      type: 'bar',
      name: title,
      data: runs.map((run, i) => ({
        value: run.summary ? (value(run.summary) ?? 0) : 0,
        itemStyle: { color: PALETTE[i % PALETTE.length] },
      })),
      label: { show: true, position: 'top' },
    },
  ];
  return {
    id,
    title,
    option: {
      ...base(title),
      tooltip: { trigger: 'item' },
      // Every run's label under its bar, wrapped to the bar's share of the width rather than overlapping.
      grid: { left: 72, right: 32, top: 72, bottom: 72 },
      xAxis: {
        type: 'category',
        data: runs.map((r) => r.label),
        axisLabel: {
          interval: 0,
          width: Math.floor(BARS_WIDTH / runs.length),
          overflow: 'break',
          lineHeight: 13,
        },
      },
      yAxis: { type: 'value', name: unit, nameLocation: 'end', min: 0 },
      series,
    },
  } satisfies ChartSpec;
}

export function recordsPerSecChart(runs: RunResult[]): ChartSpec {
  return barsChart('records-per-sec', 'Produced records/s (measured)', 'rec/s', runs, (s) =>
    Math.round(s.produced.recordsPerSec),
  );
}

export function publishP99Chart(runs: RunResult[]): ChartSpec {
  return barsChart('publish-p99', 'Publish latency p99', 'ms', runs, (s) => s.publishLatencyMs?.p99 ?? null);
}

/**
 * Records/s and publish p99 against the one setting the runs differ in (a sweep's knob), in the
 * runs' order: the sweep's answer at a glance.
 */
export function knobChart(runs: RunResult[], knob: string, values: string[]): ChartSpec {
  const title = `Against ${knob}`;
  return {
    id: 'knob-curve',
    title,
    option: {
      ...base(title),
      legend: { top: 28, data: ['produced rec/s', 'publish p99'] },
      grid: { left: 72, right: 72, top: 72, bottom: 56 },
      xAxis: { type: 'category', name: knob, nameLocation: 'middle', nameGap: 30, data: values },
      yAxis: [
        { type: 'value', name: 'rec/s', nameLocation: 'end', min: 0 },
        { type: 'value', name: 'ms', nameLocation: 'end', min: 0, splitLine: { show: false } },
      ],
      series: [
        {
          type: 'line',
          name: 'produced rec/s',
          color: PALETTE[0],
          data: runs.map((r) => (r.summary ? Math.round(r.summary.produced.recordsPerSec) : null)),
        },
        {
          type: 'line',
          name: 'publish p99',
          yAxisIndex: 1,
          color: PALETTE[1],
          lineStyle: { type: 'dashed' },
          data: runs.map((r) => r.summary?.publishLatencyMs?.p99 ?? null),
        },
      ],
    },
  };
}

/** Legend labels for runs compared: each id prefix and the part of each name that differs from the others'. */
export function runLabels(runs: { id: string; scenario: { name: string } }[]): string[] {
  const names = distinctNames(
    runs.map((r) => r.scenario.name),
    33,
  );
  return runs.map((r, i) => `${r.id.slice(0, 6)} ${names[i]}`);
}

/** Stored runs and their samples as a comparison draws them: labelled apart, each with its scenario. */
export function comparedRuns(
  runs: {
    id: string;
    scenario: { name: string; faults?: TimelineFault[] };
    summary: RunSummary | null;
    faults?: FaultEvent[];
  }[],
  samples: Sample[][],
): RunResult[] {
  const labels = runLabels(runs);
  return runs.map((run, i) => {
    const faults = faultMarks(run);
    return {
      label: labels[i] ?? run.id,
      summary: run.summary,
      samples: samples[i] ?? [],
      scenario: run.scenario,
      ...(faults.length > 0 ? { faults } : {}),
    };
  });
}

/** The set a comparison shows, in order. */
export function compareCharts(runs: RunResult[]): ChartSpec[] {
  const series = runs.map((r) => ({
    label: r.label,
    samples: r.samples,
    ...(r.faults ? { faults: r.faults } : {}),
  }));
  const charts = [
    recordsPerSecChart(runs),
    publishP99Chart(runs),
    percentileLadderChart(runs, 'publish'),
    throughputChart(series),
    latencyChart(series),
  ];
  if (runs.some((r) => r.summary?.endToEndLatencyMs))
    charts.splice(3, 0, percentileLadderChart(runs, 'endToEnd'));
  if (runs.some((r) => r.samples.some((s) => s.backlog > 0))) charts.push(backlogChart(series));
  if (runs.every((r) => r.scenario !== undefined)) {
    const differences = scenarioDifferences(runs.map((r) => r.scenario));
    const only = differences.length === 1 ? differences[0] : undefined;
    if (only) charts.unshift(knobChart(runs, only.path, only.values));
  }
  return charts;
}
