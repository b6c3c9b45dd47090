// A scenario's history on one target as a trend: each headline figure run by run, its change points
// (e-divisive means) and its best run. The server answers GET /api/trends with it, `kbench trend`
// prints it, and the web's Trends page and @kbench/charts' trendChart draw it.
import { z } from 'zod';
import { changePoints, MAX_CHANGE_POINT_SERIES } from './change-points.js';
import { figureOf, HEADLINE_FIGURES, type HeadlineFigure } from './headline.js';
import type { RunListItem } from './run.js';
import { clientPaceWarning } from './run-text.js';

/** The figures a trend follows, by the summary field each comes from, with the headline figure's label. */
const TREND_FIGURES = [
  ['produced.recordsPerSec', 'produced rec/s'],
  ['produced.mbPerSec', 'produced MB/s'],
  ['publishLatencyMs.p50', 'publish p50'],
  ['publishLatencyMs.p99', 'publish p99'],
  ['endToEndLatencyMs.p99', 'end-to-end p99'],
  ['consumed.recordsPerSec', 'consumed rec/s'],
] as const;

export const TREND_METRICS = TREND_FIGURES.map(([id]) => id);
export type TrendMetric = (typeof TREND_METRICS)[number];

function headlineFigure(label: string): HeadlineFigure & { better: 'higher' | 'lower' } {
  const figure = HEADLINE_FIGURES.find((f) => f.label === label);
  if (!figure?.better) throw new Error(`no headline figure ${label} with a better direction`);
  return figure as HeadlineFigure & { better: 'higher' | 'lower' };
}

/** GET /api/trends: a scenario by its stored name, on one target (optional when it ran on one only). */
export const trendQuerySchema = z.strictObject({
  scenario: z.string().min(1).max(300),
  target: z.string().min(1).max(300).optional(),
  metric: z.enum(TREND_METRICS).optional(),
});
export type TrendQuery = z.infer<typeof trendQuerySchema>;

export const trendRunSchema = z.object({
  id: z.string(),
  startedAt: z.string(),
  driver: z.string(),
  /** The other runs that shared the machine; such a run is shown but left out of change points and best. */
  concurrentWith: z.array(z.string()).optional(),
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
  /** Completed runs, oldest first (at most MAX_CHANGE_POINT_SERIES, the newest). */
  runs: z.array(trendRunSchema),
  series: z.array(trendSeriesSchema),
});
export type Trend = z.infer<typeof trendSchema>;

/**
 * The index of the best value by a figure's direction (the lowest latency, the highest rate), the
 * earliest of equal ones; null values and indices in `skip` are passed over. Null without a candidate.
 */
export function bestIndex(
  values: readonly (number | null)[],
  better: 'higher' | 'lower',
  skip: ReadonlySet<number> = new Set(),
): number | null {
  let best: number | null = null;
  values.forEach((value, i) => {
    if (value === null || skip.has(i)) return;
    const current = best === null ? null : (values[best] ?? null);
    if (current === null || (better === 'lower' ? value < current : value > current)) best = i;
  });
  return best;
}

/** Whether a change from `before` to `after` is an improvement for a figure whose `better` is this. */
export function isImprovement(before: number, after: number, better: 'higher' | 'lower'): boolean {
  return better === 'higher' ? after > before : after < before;
}

/**
 * The trend of completed runs of one scenario on one target, given oldest first. Runs that shared
 * the machine are kept in the series (marked) but left out of change points and the best pick.
 */
export function buildTrend(
  scenario: string,
  target: string,
  runs: readonly RunListItem[],
  metrics: readonly TrendMetric[] = TREND_METRICS,
): Trend {
  const kept = runs.slice(Math.max(0, runs.length - MAX_CHANGE_POINT_SERIES));
  const shared = new Set(kept.flatMap((run, i) => ((run.concurrentWith?.length ?? 0) > 0 ? [i] : [])));
  const series = TREND_FIGURES.filter(([id]) => metrics.includes(id)).map(([metric, label]) => {
    const figure = headlineFigure(label);
    const values = kept.map((run) => figureOf(figure, run.summary));
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
        verdict: isImprovement(change.before, change.after, figure.better) ? 'better' : 'worse',
      } as const;
    });
    const best = bestIndex(values, figure.better, shared);
    return {
      metric,
      label,
      unit: figure.unit,
      better: figure.better,
      values,
      changePoints: found,
      best: best === null ? null : { runId: (kept[best] as RunListItem).id, value: values[best] as number },
    };
  });
  return {
    scenario,
    target,
    runs: kept.map((run) => {
      const paced = run.summary ? clientPaceWarning(run.summary.client) : null;
      return {
        id: run.id,
        startedAt: run.startedAt,
        driver: run.driver,
        ...(run.concurrentWith?.length ? { concurrentWith: run.concurrentWith } : {}),
        ...(paced ? { clientPaced: paced } : {}),
      };
    }),
    series,
  };
}
