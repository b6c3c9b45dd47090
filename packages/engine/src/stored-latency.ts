// Percentiles of any window of any runs, computed exactly from the latency histograms each sample
// stored (history migration 5) rather than by averaging percentiles; and the runs' histograms as
// an HdrHistogram interval log or as JSON.
import type { History, SampleHistograms } from '@kbench/history';
import type { AgentBreakdown, LatencySummary, RunRecord } from '@kbench/schema';
import { hdrIntervalLog, type LogInterval } from './hdr-log.js';
import { bucketTop, type HistogramBuckets, LatencyHistogram } from './histogram.js';
import { decodeHistogram } from './histogram-codec.js';

/** One sample's histograms, decoded. `t` is the end of its interval in seconds since load began. */
export interface IntervalHistograms {
  t: number;
  warmup: boolean;
  publish: HistogramBuckets | null;
  e2e: HistogramBuckets | null;
}

export function decodeStored(rows: SampleHistograms[]): IntervalHistograms[] {
  return rows.map((row) => ({
    t: row.t,
    warmup: row.warmup,
    publish: row.publish === null ? null : decodeHistogram(row.publish),
    e2e: row.e2e === null ? null : decodeHistogram(row.e2e),
  }));
}

/**
 * A window of a run in seconds since load began: the samples whose interval ends after `from` and
 * at or before `to`. Warm-up samples count only with `warmup: true` (the run's summary leaves them out).
 */
export interface LatencyWindow {
  from?: number;
  to?: number;
  warmup?: boolean;
}

export interface WindowLatency {
  /** Samples merged (of every run given). */
  samples: number;
  publishLatencyMs: LatencySummary | null;
  endToEndLatencyMs: LatencySummary | null;
  publish: LatencyHistogram;
  e2e: LatencyHistogram;
}

export function inWindow(interval: IntervalHistograms, window: LatencyWindow): boolean {
  if (interval.warmup && !window.warmup) return false;
  if (window.from !== undefined && !(interval.t > window.from)) return false;
  if (window.to !== undefined && !(interval.t <= window.to)) return false;
  return true;
}

/** The merge of the window of each run's intervals (pass several runs to merge runs). */
export function windowLatency(runs: IntervalHistograms[][], window: LatencyWindow = {}): WindowLatency {
  const publish = new LatencyHistogram();
  const e2e = new LatencyHistogram();
  let samples = 0;
  for (const intervals of runs) {
    for (const interval of intervals) {
      if (!inWindow(interval, window)) continue;
      samples += 1;
      if (interval.publish) publish.addBuckets(interval.publish);
      if (interval.e2e) e2e.addBuckets(interval.e2e);
    }
  }
  return {
    samples,
    publishLatencyMs: publish.count ? publish.summaryMs() : null,
    endToEndLatencyMs: e2e.count ? e2e.summaryMs() : null,
    publish,
    e2e,
  };
}

/** The stored intervals of runs, read and decoded, one list per run in the order given. */
export async function storedIntervals(history: History, runIds: string[]): Promise<IntervalHistograms[][]> {
  const out: IntervalHistograms[][] = [];
  for (const id of runIds) out.push(decodeStored(await history.getHistograms(id)));
  return out;
}

/** The merge of the measured-phase histograms of some of a run's agents (each agent keeps its own). */
export function agentsLatency(
  agents: AgentBreakdown[],
  names?: string[],
): { publishLatencyMs: LatencySummary | null; endToEndLatencyMs: LatencySummary | null } {
  const publish = new LatencyHistogram();
  const e2e = new LatencyHistogram();
  for (const agent of agents) {
    if (names && !names.includes(agent.name)) continue;
    publish.addBuckets(agent.produced.histogram);
    e2e.addBuckets(agent.consumed.histogram);
  }
  return {
    publishLatencyMs: publish.count ? publish.summaryMs() : null,
    endToEndLatencyMs: e2e.count ? e2e.summaryMs() : null,
  };
}

/** The interval length of each sample in seconds, from the gap to the one before (the first from 0). */
function withLengths(intervals: IntervalHistograms[]): { interval: IntervalHistograms; lengthSec: number }[] {
  let previous = 0;
  return intervals.map((interval) => {
    const lengthSec = Math.max(0, interval.t - previous);
    previous = interval.t;
    return { interval, lengthSec };
  });
}

/**
 * A run's histograms as an HdrHistogram interval log: tag `publish` for publish latency, `e2e` for
 * end-to-end latency, µs. Warm-up intervals are included (their timestamps say where they lie).
 */
export function runHlog(run: RunRecord, intervals: IntervalHistograms[]): string {
  const entries: LogInterval[] = [];
  for (const { interval, lengthSec } of withLengths(intervals)) {
    const startSec = interval.t - lengthSec;
    if (interval.publish) entries.push({ startSec, lengthSec, tag: 'publish', histogram: interval.publish });
    if (interval.e2e) entries.push({ startSec, lengthSec, tag: 'e2e', histogram: interval.e2e });
  }
  const comment = `[kbench run ${run.id}: ${run.scenario.name}; started ${run.startedAt}; timestamps from load start]`;
  // Load starts after setup: the run's start time is the closest stored moment.
  return hdrIntervalLog(entries, new Date(run.startedAt), comment);
}

/** A run's histograms as JSON: the engine's buckets (SUB_BITS 10, µs) per sample. */
export function runHistogramsJson(run: RunRecord, intervals: IntervalHistograms[]): object {
  return {
    run: run.id,
    unit: 'µs',
    bucketing:
      'log-linear, SUB_BITS 10: a value v < 1024 is bucket v; above, bucket e*1024 + floor(v / 2^e) with e = floor(log2 v) - 9; a bucket reports its highest value',
    samples: withLengths(intervals).map(({ interval, lengthSec }) => ({
      t: interval.t,
      intervalSec: Number(lengthSec.toFixed(3)),
      warmup: interval.warmup,
      publish: interval.publish,
      e2e: interval.e2e,
    })),
  };
}

/**
 * One side's intervals as the heatmap chart (@kbench/charts latencyHeatmapChart) takes them: each
 * bucket as its highest value in µs (never past the interval's max) and its count.
 */
export function heatmapInput(
  intervals: IntervalHistograms[],
  side: 'publish' | 'e2e',
): { side: 'publish' | 'e2e'; intervals: { t: number; warmup: boolean; buckets: [number, number][] }[] } {
  return {
    side,
    intervals: intervals.map((interval) => {
      const h = interval[side];
      const buckets: [number, number][] = h
        ? h.buckets.map((bucket, i) => [Math.min(bucketTop(bucket), h.max), h.counts[i] ?? 0])
        : [];
      return { t: interval.t, warmup: interval.warmup, buckets };
    }),
  };
}

/** Both sides' heatmap inputs of a run (GET /api/runs/:id/heatmap): null for a side without histograms. */
export function runHeatmaps(intervals: IntervalHistograms[]): {
  publish: ReturnType<typeof heatmapInput> | null;
  e2e: ReturnType<typeof heatmapInput> | null;
} {
  const side = (s: 'publish' | 'e2e') =>
    intervals.some((i) => i[s] !== null) ? heatmapInput(intervals, s) : null;
  return { publish: side('publish'), e2e: side('e2e') };
}
