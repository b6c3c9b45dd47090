// The figures of a run's summary by their dotted names (`produced.recordsPerSec`,
// `publishLatencyMs.p99`), and which way each one is better: the one rule the gate, the repeats'
// statistics and the trends page share.
import type { RunSummary } from './run.js';
import { didYouMean } from './words.js';

/** Which way a figure improves: a rate up, a latency down. */
export type Better = 'higher' | 'lower';

export interface Metric {
  /** The dotted path into a run's summary, as `--metric` takes it. */
  name: string;
  label: string;
  unit: 'rec/s' | 'MB/s' | 'ms' | 'records' | 'cores';
  better: Better;
  value: (summary: RunSummary) => number | null | undefined;
}

const LATENCY_FIELDS = ['p50', 'p75', 'p95', 'p99', 'p999', 'p9999', 'max', 'mean', 'worst10Mean'] as const;
const LATENCY_WORDS: Record<(typeof LATENCY_FIELDS)[number], string> = {
  p50: 'p50',
  p75: 'p75',
  p95: 'p95',
  p99: 'p99',
  p999: 'p99.9',
  p9999: 'p99.99',
  max: 'max',
  mean: 'mean',
  worst10Mean: 'worst 10% mean',
};

function latencyMetrics(side: 'publishLatencyMs' | 'endToEndLatencyMs', word: string): Metric[] {
  return LATENCY_FIELDS.map((field) => ({
    name: `${side}.${field}`,
    label: `${word} ${LATENCY_WORDS[field]}`,
    unit: 'ms',
    better: 'lower',
    value: (s: RunSummary) => s[side]?.[field],
  }));
}

function rateMetrics(side: 'produced' | 'consumed'): Metric[] {
  return (['recordsPerSec', 'mbPerSec'] as const).map((field) => ({
    name: `${side}.${field}`,
    label: `${side} ${field === 'recordsPerSec' ? 'rec/s' : 'MB/s'}`,
    unit: field === 'recordsPerSec' ? 'rec/s' : 'MB/s',
    better: 'higher',
    value: (s: RunSummary) => s[side][field],
  }));
}

/** Every figure a run can be judged by, rates first, then latencies. */
export const RUN_METRICS: readonly Metric[] = [
  ...rateMetrics('produced'),
  ...rateMetrics('consumed'),
  {
    name: 'produced.errors',
    label: 'produce errors',
    unit: 'records',
    better: 'lower',
    value: (s) => s.produced.errors,
  },
  ...latencyMetrics('publishLatencyMs', 'publish'),
  ...latencyMetrics('endToEndLatencyMs', 'end-to-end'),
  {
    name: 'client.cpuCores',
    label: 'client cores',
    unit: 'cores',
    better: 'lower',
    value: (s) => s.client?.cpuCores,
  },
];

/** The figures a series' statistics are printed for. */
export const HEADLINE_METRIC_NAMES: readonly string[] = [
  'produced.recordsPerSec',
  'produced.mbPerSec',
  'consumed.recordsPerSec',
  'publishLatencyMs.p50',
  'publishLatencyMs.p99',
  'publishLatencyMs.p999',
  'endToEndLatencyMs.p50',
  'endToEndLatencyMs.p99',
];

/** The figures the gate judges when `--metric` is not given (those a run has). */
export const DEFAULT_GATE_METRIC_NAMES: readonly string[] = [
  'produced.recordsPerSec',
  'consumed.recordsPerSec',
  'publishLatencyMs.p99',
  'endToEndLatencyMs.p99',
];

export const METRIC_NAMES: readonly string[] = RUN_METRICS.map((m) => m.name);

const BY_NAME = new Map(RUN_METRICS.map((m) => [m.name, m]));

/** A metric by its dotted name, or undefined. */
export function findMetric(name: string): Metric | undefined {
  return BY_NAME.get(name);
}

/** A metric by its dotted name; an unknown name throws, naming it, the nearest name and the valid ones. */
export function metricNamed(name: string): Metric {
  const metric = BY_NAME.get(name);
  if (metric) return metric;
  throw new Error(
    `unknown metric ${JSON.stringify(name)}${didYouMean(name, METRIC_NAMES)}; valid metrics: ${METRIC_NAMES.join(', ')}`,
  );
}

/** Which way the named figure is better ('higher' for rates, 'lower' for latencies, errors and cores). */
export function metricDirection(name: string): Better {
  return metricNamed(name).better;
}

/** A run's figure, or null where the run has none (no summary, no consumers, ...). */
export function runMetricValue(metric: Metric, summary: RunSummary | null | undefined): number | null {
  const value = summary ? metric.value(summary) : null;
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/** True when `a` is strictly better than `b` for a figure that is better `better`. */
export function isBetter(better: Better, a: number, b: number): boolean {
  return better === 'higher' ? a > b : a < b;
}

/** The index of the best of the values (the first of equals), or -1 for none; nulls never win. */
export function bestValueIndex(better: Better, values: readonly (number | null)[]): number {
  let best = -1;
  for (const [i, v] of values.entries()) {
    if (v === null || !Number.isFinite(v)) continue;
    const current = values[best];
    if (best === -1 || current === null || current === undefined || isBetter(better, v, current)) best = i;
  }
  return best;
}

/**
 * A change in percent as a reader takes it: positive is worse for this figure (a rate that fell,
 * a latency that rose), negative is better.
 */
export function worseningPercent(better: Better, changePercent: number): number {
  return better === 'higher' ? -changePercent : changePercent;
}
