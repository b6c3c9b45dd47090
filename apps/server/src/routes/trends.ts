// GET /api/trends: a scenario's completed runs on one target, each headline figure with its change
// points and best run, as `kbench trend` prints them (both call @kbench/app's loadTrend).
import { loadTrend, TrendError } from '@kbench/app';
import { type TrendQuery, trendQuerySchema, trendSchema } from '@kbench/schema';
import type { FastifyInstance } from 'fastify';
import { HttpError } from '../http-error.js';
import { errorResponses, requestSchema, responseSchema } from '../route-schema.js';

/** No run of the scenario (or on the target) is 404; several targets and none named is 400. */
const TREND_ERROR_STATUS = { 'unknown-scenario': 404, 'unknown-target': 404, 'target-needed': 400 } as const;

export async function trendRoutes(app: FastifyInstance): Promise<void> {
  app.get<{ Querystring: TrendQuery }>(
    '/api/trends',
    {
      schema: {
        querystring: requestSchema(trendQuerySchema),
        response: { 200: responseSchema(trendSchema), ...errorResponses },
      },
    },
    async (request) => {
      const { scenario, target, metric } = request.query;
      try {
        return await loadTrend(app.history, {
          scenario,
          ...(target ? { target } : {}),
          ...(metric ? { metrics: [metric] } : {}),
        });
      } catch (err) {
        if (err instanceof TrendError) throw new HttpError(TREND_ERROR_STATUS[err.kind], err.message);
        throw err;
      }
    },
  );
}
