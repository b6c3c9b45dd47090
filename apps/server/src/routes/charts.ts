// Chart images, drawn on the server by the same @kbench/charts functions, with the same arguments,
// as the web page that shows them: one run's charts, or a comparison of 2 to 8 runs.
import {
  type ChartSpec,
  compareCharts,
  comparedRuns,
  compareReportHtml,
  faultMarks,
  heatmapCharts,
  renderSvg,
  runCharts,
} from '@kbench/charts';
import { renderPng } from '@kbench/charts/png';
import { runHeatmaps, storedIntervals } from '@kbench/engine';
import {
  CHART_FILE_PATTERN,
  type ChartParams,
  chartParamsSchema,
  type RunIdListQuery,
  runIdListQuerySchema,
} from '@kbench/schema';
import type { FastifyInstance } from 'fastify';
import { HttpError } from '../http-error.js';
import { errorResponses, requestSchema } from '../route-schema.js';

type ChartQuery = { Params: ChartParams; Querystring: RunIdListQuery };
const ids = requestSchema(runIdListQuerySchema);

export async function chartRoutes(app: FastifyInstance): Promise<void> {
  async function chartsFor(ids: string[]): Promise<{ charts: ChartSpec[]; prefix: string }> {
    const runs = [];
    for (const id of ids) {
      const run = await app.history.getRun(id);
      if (!run) throw new HttpError(404, `no run ${id}`);
      runs.push(run);
    }
    const samples = await Promise.all(runs.map((r) => app.history.getSamples(r.id)));
    const intervals = await storedIntervals(
      app.history,
      runs.map((r) => r.id),
    );
    const heatmaps = heatmapCharts(
      runs.map((run, i) => ({ label: run.scenario.name, id: run.id, ...runHeatmaps(intervals[i] ?? []) })),
    );
    const only = runs[0];
    if (runs.length === 1 && only) {
      return {
        charts: [...runCharts(samples[0] ?? [], only.scenario.name, faultMarks(only), only.id), ...heatmaps],
        prefix: `kbench-${only.id}`,
      };
    }
    return { charts: [...compareCharts(comparedRuns(runs, samples)), ...heatmaps], prefix: 'kbench-compare' };
  }

  app.get<ChartQuery>(
    '/api/charts/:name',
    {
      schema: {
        params: requestSchema(chartParamsSchema),
        querystring: ids,
        response: errorResponses,
      },
    },
    async (request, reply) => {
      const [, chartId, format] = CHART_FILE_PATTERN.exec(request.params.name) ?? [];
      const { charts, prefix } = await chartsFor(request.query.ids.split(','));
      const chart = charts.find((c) => c.id === chartId);
      if (!chart)
        throw new HttpError(404, `no chart ${chartId}; charts here: ${charts.map((c) => c.id).join(', ')}`);
      const file = `${prefix}-${chart.id}.${format}`;
      reply.header('content-disposition', `attachment; filename="${file}"`);
      if (format === 'png') return reply.type('image/png').send(renderPng(chart.option));
      return reply.type('image/svg+xml; charset=utf-8').send(renderSvg(chart.option));
    },
  );

  app.get<{ Querystring: RunIdListQuery }>(
    '/api/compare/report.html',
    {
      schema: {
        querystring: ids,
        response: errorResponses,
      },
    },
    async (request, reply) => {
      const entries = [];
      for (const id of request.query.ids.split(',')) {
        const run = await app.history.getRun(id);
        if (!run) throw new HttpError(404, `no run ${id}`);
        entries.push({ run, samples: await app.history.getSamples(run.id) });
      }
      reply.header('content-disposition', 'attachment; filename="kbench-comparison.html"');
      return reply
        .type('text/html; charset=utf-8')
        .send(compareReportHtml(entries, new Date().toISOString()));
    },
  );
}
