// The API's shapes for a run's stored latency histograms: the percentiles of a window of runs, and
// the heatmap of a run (GET /api/latency, GET /api/runs/:id/heatmap).
import { z } from 'zod';
import { RUN_ID_LIST_PATTERN } from './api.js';
import { latencySummarySchema } from './run.js';

/** GET /api/latency: the runs to merge and the window, in seconds since load began. */
export const latencyWindowQuerySchema = z.strictObject({
  ids: z.string().regex(RUN_ID_LIST_PATTERN),
  /** Samples whose interval ends after `from` and at or before `to`. */
  from: z.number().min(0).optional(),
  to: z.number().min(0).optional(),
  /** Count warm-up samples too (the run's summary leaves them out). */
  warmup: z.boolean().optional(),
});
export type LatencyWindowQuery = z.infer<typeof latencyWindowQuerySchema>;

/** The percentiles of a window, computed exactly from the merged histograms of its samples. */
export const latencyWindowSchema = z.object({
  ids: z.array(z.string()),
  from: z.number().nullable(),
  to: z.number().nullable(),
  warmup: z.boolean(),
  /** Samples merged, over all the runs. */
  samples: z.number().int(),
  publishLatencyMs: latencySummarySchema.nullable(),
  endToEndLatencyMs: latencySummarySchema.nullable(),
});
export type LatencyWindowAnswer = z.infer<typeof latencyWindowSchema>;

/** One side's histograms over time, as the heatmap chart takes them: [bucket's highest µs, count]. */
export const heatmapInputSchema = z.object({
  side: z.enum(['publish', 'e2e']),
  intervals: z.array(
    z.object({
      t: z.number(),
      warmup: z.boolean(),
      buckets: z.array(z.tuple([z.number(), z.number()])),
    }),
  ),
});

/** GET /api/runs/:id/heatmap: each side, null when the run stored no histogram of it. */
export const runHeatmapsSchema = z.object({
  publish: heatmapInputSchema.nullable(),
  e2e: heatmapInputSchema.nullable(),
});
export type RunHeatmaps = z.infer<typeof runHeatmapsSchema>;
