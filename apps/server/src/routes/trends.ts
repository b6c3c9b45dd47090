// GET /api/trends: a scenario's completed runs on one target, each headline figure with its change
// points and best run, as `kbench trend` prints them (both call @kbench/app's loadTrend).
import { loadTrend, TrendError, type TrendRequest } from '@kbench/app';
import { renderSvg, trendCharts } from '@kbench/charts';
import { renderPng } from '@kbench/charts/png';
import {
  CHART_FILE_PATTERN,
  type ChartParams,
  chartParamsSchema,
  type Trend,
  type TrendQuery,
  trendQuerySchema,
  trendSchema,
} from '@kbench/schema';
import type { FastifyInstance } from 'fastify';
import { HttpError } from '../http-error.js';
import { errorResponses, requestSchema, responseSchema } from '../route-schema.js';

/** No run of the scenario (or on the target) is 404; several targets and none named is 400. */
const TREND_ERROR_STATUS = { 'unknown-scenario': 404, 'unknown-target': 404, 'target-needed': 400 } as const;

export async function trendRoutes(app: FastifyInstance): Promise<void> {
  async function trendOf(query: TrendQuery): Promise<Trend> {
    const request: TrendRequest = {
      scenario: query.scenario,
      ...(query.target ? { target: query.target } : {}),
      ...(query.metric ? { metrics: [query.metric] } : {}),
      ...(query.sweepValue ? { sweepValue: query.sweepValue } : {}),
    };
    try {
      return await loadTrend(app.history, request);
    } catch (err) {
      if (err instanceof TrendError) throw new HttpError(TREND_ERROR_STATUS[err.kind], err.message);
      throw err;
    }
  }

  app.get<{ Querystring: TrendQuery }>(
    '/api/trends',
    {
      schema: {
        querystring: requestSchema(trendQuerySchema),
        response: { 200: responseSchema(trendSchema), ...errorResponses },
      },
    },
    async (request) => trendOf(request.query),
  );

  // A trend's chart as an image, drawn by the same trendChart the page draws.
  app.get<{ Params: ChartParams; Querystring: TrendQuery }>(
    '/api/trends/charts/:name',
    {
      schema: {
        params: requestSchema(chartParamsSchema),
        querystring: requestSchema(trendQuerySchema),
        response: errorResponses,
      },
    },
    async (request, reply) => {
      const [, chartId, format] = CHART_FILE_PATTERN.exec(request.params.name) ?? [];
      const charts = trendCharts(await trendOf(request.query));
      const chart = charts.find((c) => c.id === chartId);
      if (!chart)
        throw new HttpError(404, `no chart ${chartId}; charts here: ${charts.map((c) => c.id).join(', ')}`);
      reply.header('content-disposition', `attachment; filename="kbench-${chart.id}.${format}"`);
      if (format === 'png') return reply.type('image/png').send(renderPng(chart.option));
      return reply.type('image/svg+xml; charset=utf-8').send(renderSvg(chart.option));
    },
  );
}
