// The headline figures a comparison lines up, and each one's change against a baseline run: the same
// in `kbench compare` and the web's compare page.
import type { RunSummary } from './run.js';

export interface HeadlineFigure {
  label: string;
  /** How to print it: a rate, MB/s, milliseconds or cores. */
  unit: 'rec/s' | 'MB/s' | 'ms' | 'cores';
  value: (summary: RunSummary) => number | null | undefined;
  /** Which way is an improvement, where one is. */
  better?: 'higher' | 'lower';
}

export const HEADLINE_FIGURES: HeadlineFigure[] = [
  { label: 'produced rec/s', unit: 'rec/s', better: 'higher', value: (s) => s.produced.recordsPerSec },
  { label: 'produced MB/s', unit: 'MB/s', better: 'higher', value: (s) => s.produced.mbPerSec },
  { label: 'consumed rec/s', unit: 'rec/s', better: 'higher', value: (s) => s.consumed.recordsPerSec },
  { label: 'publish p50', unit: 'ms', better: 'lower', value: (s) => s.publishLatencyMs?.p50 },
  { label: 'publish p99', unit: 'ms', better: 'lower', value: (s) => s.publishLatencyMs?.p99 },
  { label: 'publish p99.9', unit: 'ms', better: 'lower', value: (s) => s.publishLatencyMs?.p999 },
  { label: 'publish max', unit: 'ms', better: 'lower', value: (s) => s.publishLatencyMs?.max },
  { label: 'end-to-end p50', unit: 'ms', better: 'lower', value: (s) => s.endToEndLatencyMs?.p50 },
  { label: 'end-to-end p99', unit: 'ms', better: 'lower', value: (s) => s.endToEndLatencyMs?.p99 },
  { label: 'client cores', unit: 'cores', value: (s) => s.client?.cpuCores },
];

/** A figure of a run, or null where the run has none (no summary, no consumers, ...). */
export function figureOf(figure: HeadlineFigure, summary: RunSummary | null): number | null {
  const value = summary ? figure.value(summary) : null;
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/** The change from the baseline's figure in percent, or null where either is missing or the baseline is 0. */
export function percentChange(value: number | null, baseline: number | null): number | null {
  if (value === null || baseline === null || baseline === 0) return null;
  return ((value - baseline) / Math.abs(baseline)) * 100;
}

/** `+12.3%`, `-4.0%`, `+250%`: one decimal below 10%, none above; null without a change to show. */
export function changeText(value: number | null, baseline: number | null): string | null {
  const change = percentChange(value, baseline);
  if (change === null) return null;
  const size = Math.abs(change);
  return `${change < 0 ? '-' : '+'}${size.toFixed(size < 10 ? 1 : 0)}%`;
}
