// A scenario's history on one target as a trend: each headline figure run by run, its change points
// (e-divisive means) and its best run. The server answers GET /api/trends with it, `kbench trend`
// prints it, and the web's Trends page and @kbench/charts' trendChart draw it.
import { z } from 'zod';
import { runCaveats } from './caveats.js';
import { changePoints, MAX_CHANGE_POINT_SERIES } from './change-points.js';
import { bestValueIndex, isBetter, type Metric, metricNamed, runMetricValue } from './metrics.js';
import type { RunListItem, RunSummary } from './run.js';
import { clientPaceWarning } from './run-text.js';

/** The figures a trend follows, by their dotted names in a run's summary (RUN_METRICS). */
export const TREND_METRICS = [
  'produced.recordsPerSec',
  'produced.mbPerSec',
  'publishLatencyMs.p50',
  'publishLatencyMs.p99',
  'endToEndLatencyMs.p99',
  'consumed.recordsPerSec',
] as const;
export type TrendMetric = (typeof TREND_METRICS)[number];

/** A run's figure; a consumed figure of a run whose consumers read nothing (it had none) is null, not 0. */
function trendValue(metric: Metric, summary: RunSummary | null): number | null {
  if (metric.name.startsWith('consumed.') && summary?.consumed.records === 0) return null;
  return runMetricValue(metric, summary);
}

/** GET /api/trends: a scenario by its stored name, on one target (optional when it ran on one only). */
export const trendQuerySchema = z.strictObject({
  scenario: z.string().min(1).max(300),
  target: z.string().min(1).max(300).optional(),
  metric: z.enum(TREND_METRICS).optional(),
  /** A sweep's point: the runs that measured this value of the sweep's knob (a trend takes no sweep runs without it). */
  sweepValue: z.string().min(1).max(300).optional(),
});
export type TrendQuery = z.infer<typeof trendQuerySchema>;

export const trendRunSchema = z.object({
  id: z.string(),
  startedAt: z.string(),
  driver: z.string(),
  /** The other runs that shared the machine; such a run is shown but left out of change points and best. */
  concurrentWith: z.array(z.string()).optional(),
  /**
   * What else kept the machine's cores busy while the run was measured (processes kbench did not
   * start), or absent; such a run is shown but left out of change points and best while some runs
   * of the trend had a quiet machine (when none had, they are all used).
   */
  machineShared: z.string().optional(),
  /** Why the client, not the target, set the pace (a load thread near 100% busy), or absent. */
  clientPaced: z.string().optional(),
});
export type TrendRun = z.infer<typeof trendRunSchema>;

export const trendChangePointSchema = z.object({
  /** The first run after the change. */
  runId: z.string(),
  before: z.number(),
  after: z.number(),
  changePercent: z.number().nullable(),
  pValue: z.number(),
  /** Whether the change made the figure better or worse, by the figure's direction. */
  verdict: z.enum(['better', 'worse']),
});
export type TrendChangePoint = z.infer<typeof trendChangePointSchema>;

export const trendSeriesSchema = z.object({
  metric: z.enum(TREND_METRICS),
  label: z.string(),
  unit: z.string(),
  better: z.enum(['higher', 'lower']),
  /** One value per run of the trend, in its order; null where the run has none (no consumers, say). */
  values: z.array(z.number().nullable()),
  changePoints: z.array(trendChangePointSchema),
  /** The best run alone on the machine, by the figure's direction; null without one. */
  best: z.object({ runId: z.string(), value: z.number() }).nullable(),
});
export type TrendSeries = z.infer<typeof trendSeriesSchema>;

export const trendSchema = z.object({
  scenario: z.string(),
  target: z.string(),
  /** The sweep value the runs measured, for a trend of a sweep's point. */
  sweepValue: z.string().optional(),
  /** Completed runs, oldest first (at most MAX_CHANGE_POINT_SERIES, the newest). */
  runs: z.array(trendRunSchema),
  series: z.array(trendSeriesSchema),
});
export type Trend = z.infer<typeof trendSchema>;

/**
 * The trend of completed runs of one scenario on one target, given oldest first. Runs that shared
 * the machine (with other kbench runs, or with other busy processes while some runs had a quiet
 * machine) are kept in the series (marked) but left out of change points and the best pick.
 */
export function buildTrend(
  scenario: string,
  target: string,
  runs: readonly RunListItem[],
  metrics: readonly TrendMetric[] = TREND_METRICS,
): Trend {
  const kept = runs.slice(Math.max(0, runs.length - MAX_CHANGE_POINT_SERIES));
  const caveats = kept.map((run) => runCaveats({ summary: run.summary, concurrentWith: run.concurrentWith }));
  const has = (i: number, kind: string) => caveats[i]?.some((c) => c.kind === kind) === true;
  // Runs beside another kbench run are always left out; runs beside other busy processes while
  // some runs had a quiet machine (on a CI runner that is always busy, every run is such a run,
  // and leaving them all out would leave no best and no change points at all).
  const busy = kept.flatMap((_, i) => (has(i, 'machine-shared') && !has(i, 'concurrent') ? [i] : []));
  const concurrent = kept.flatMap((_, i) => (has(i, 'concurrent') ? [i] : []));
  const quiet = kept.length - busy.length - concurrent.length;
  const shared = new Set([...concurrent, ...(quiet > 0 ? busy : [])]);
  const series = TREND_METRICS.filter((name) => metrics.includes(name)).map((name) => {
    const metric = metricNamed(name);
    const values = kept.map((run) => trendValue(metric, run.summary));
    // Change points over the runs alone on the machine that have the figure.
    const used = values.flatMap((v, i) => (v === null || shared.has(i) ? [] : [i]));
    const found = changePoints(used.map((i) => values[i] as number)).map((change) => {
      const run = kept[used[change.index] ?? 0] as RunListItem;
      return {
        runId: run.id,
        before: change.before,
        after: change.after,
        changePercent: change.changePercent,
        pValue: change.pValue,
        verdict: isBetter(metric.better, change.after, change.before) ? 'better' : 'worse',
      } as const;
    });
    // The shared rule (lowest latency, highest rate, earliest of equals) over the runs alone.
    const best = bestValueIndex(
      metric.better,
      values.map((v, i) => (shared.has(i) ? null : v)),
    );
    return {
      metric: name,
      label: metric.label,
      unit: metric.unit,
      better: metric.better,
      values,
      changePoints: found,
      best: best < 0 ? null : { runId: (kept[best] as RunListItem).id, value: values[best] as number },
    };
  });
  return {
    scenario,
    target,
    runs: kept.map((run, i) => {
      const paced = run.summary ? clientPaceWarning(run.summary.client) : null;
      const busy = caveats[i]?.find((c) => c.kind === 'machine-shared');
      return {
        id: run.id,
        startedAt: run.startedAt,
        driver: run.driver,
        ...(run.concurrentWith?.length ? { concurrentWith: run.concurrentWith } : {}),
        ...(busy ? { machineShared: busy.text } : {}),
        ...(paced ? { clientPaced: paced } : {}),
      };
    }),
    series,
  };
}
