// A run's stored latency histograms (one per sample and side): the percentiles of any window of
// any runs, merged exactly; a run's heatmap; and the histograms as an HdrHistogram interval log or
// raw JSON, for download.
import { runHeatmaps, runHistogramsJson, runHlog, storedIntervals, windowLatency } from '@kbench/engine';
import {
  type LatencyWindowQuery,
  latencyWindowQuerySchema,
  latencyWindowSchema,
  type RunIdParams,
  runHeatmapsSchema,
  runIdParamsSchema,
} from '@kbench/schema';
import type { FastifyInstance } from 'fastify';
import { HttpError } from '../http-error.js';
import { errorResponses, requestSchema, responseSchema } from '../route-schema.js';

type IdParams = { Params: RunIdParams };
const runIdParams = requestSchema(runIdParamsSchema);

export async function histogramRoutes(app: FastifyInstance): Promise<void> {
  async function findRun(id: string) {
    const record = await app.history.getRun(id);
    if (!record) throw new HttpError(404, `no run ${id}`);
    return record;
  }

  app.get<{ Querystring: LatencyWindowQuery }>(
    '/api/latency',
    {
      schema: {
        querystring: requestSchema(latencyWindowQuerySchema),
        response: { 200: responseSchema(latencyWindowSchema), ...errorResponses },
      },
    },
    async (request) => {
      const { from, to, warmup = false } = request.query;
      if (from !== undefined && to !== undefined && to <= from)
        throw new HttpError(400, `querystring/to: must be after from (${from}), got ${to}`);
      const runs = [];
      for (const id of request.query.ids.split(',')) runs.push(await findRun(id));
      const ids = runs.map((r) => r.id);
      const merged = windowLatency(await storedIntervals(app.history, ids), {
        ...(from === undefined ? {} : { from }),
        ...(to === undefined ? {} : { to }),
        warmup,
      });
      return {
        ids,
        from: from ?? null,
        to: to ?? null,
        warmup,
        samples: merged.samples,
        publishLatencyMs: merged.publishLatencyMs,
        endToEndLatencyMs: merged.endToEndLatencyMs,
      };
    },
  );

  app.get<IdParams>(
    '/api/runs/:id/heatmap',
    {
      schema: {
        params: runIdParams,
        response: { 200: responseSchema(runHeatmapsSchema), ...errorResponses },
      },
    },
    async (request) => {
      const record = await findRun(request.params.id);
      const [intervals = []] = await storedIntervals(app.history, [record.id]);
      return runHeatmaps(intervals);
    },
  );

  app.get<IdParams>(
    '/api/runs/:id/export.hlog',
    { schema: { params: runIdParams, response: { 200: { type: 'string' }, ...errorResponses } } },
    async (request, reply) => {
      const record = await findRun(request.params.id);
      const [intervals = []] = await storedIntervals(app.history, [record.id]);
      return reply
        .type('text/plain; charset=utf-8')
        .header('content-disposition', `attachment; filename="kbench-${record.id}.hlog"`)
        .send(runHlog(record, intervals));
    },
  );

  app.get<IdParams>(
    '/api/runs/:id/histograms.json',
    { schema: { params: runIdParams, response: errorResponses } },
    async (request, reply) => {
      const record = await findRun(request.params.id);
      const [intervals = []] = await storedIntervals(app.history, [record.id]);
      return reply
        .type('application/json; charset=utf-8')
        .header('content-disposition', `attachment; filename="kbench-${record.id}-histograms.json"`)
        .send(JSON.stringify(runHistogramsJson(record, intervals)));
    },
  );
}
