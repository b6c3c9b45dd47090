import { stat } from 'node:fs/promises';
import { rawScenario, resolveScenario, sweepSeries } from '@kbench/app';
import { samplesToCsv } from '@kbench/history';
import {
  deletedSchema,
  historyVersionSchema,
  type RunChange,
  type RunIdParams,
  type RunQuery,
  readScenarioText,
  runChangeSchema,
  runIdBodySchema,
  runIdParamsSchema,
  runListItemSchema,
  runOwnerSchema,
  runQuerySchema,
  runRecordSchema,
  type Scenario,
  ScenarioError,
  type StartRunBody,
  sampleSchema,
  startRunBodySchema,
  sweepInfoSchema,
} from '@kbench/schema';
import type { FastifyInstance } from 'fastify';
import { HttpError, invalidScenario } from '../http-error.js';
import { errorResponses, requestSchema, responseSchema } from '../route-schema.js';

type IdParams = { Params: RunIdParams };
const runIdParams = requestSchema(runIdParamsSchema);
const runRecord = responseSchema(runRecordSchema);
const runId = responseSchema(runIdBodySchema);

/** Turns a start request into a validated scenario; any problem is a 400 naming the field. */
async function scenarioFromBody(
  app: FastifyInstance,
  body: StartRunBody,
): Promise<{ scenario: Scenario; source: string | null }> {
  const given = (['scenario', 'yaml', 'path'] as const).filter((k) => body[k] !== undefined);
  if (given.length !== 1) {
    throw new HttpError(
      400,
      'give exactly one of scenario (an object), yaml (text) or path (a file in scenarios/)',
    );
  }
  let raw: unknown;
  let source: string | null = null;
  try {
    if (body.scenario !== undefined) raw = body.scenario;
    else if (body.yaml !== undefined) raw = readScenarioText(body.yaml);
    else if (body.path !== undefined) {
      const file = await app.scenarios.read(body.path);
      // A relative payloadFile is relative to the scenario file, as on the command line.
      raw = rawScenario(file.text, file.file, body.path);
      source = file.file;
    }
    return { scenario: resolveScenario(raw, body.set ? { set: body.set } : {}), source };
  } catch (err) {
    if (err instanceof ScenarioError) throw invalidScenario(err.issues);
    throw err;
  }
}

export async function runRoutes(app: FastifyInstance): Promise<void> {
  app.post<{ Body: StartRunBody }>(
    '/api/runs',
    {
      schema: {
        body: requestSchema(startRunBodySchema),
        response: { 201: runId, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { scenario, source } = await scenarioFromBody(app, request.body);
      // Every run of a series is checked before the first starts (a sweep over targets, say).
      const items = sweepSeries(scenario, source);
      const plans = items.map((i) => i.scenario);
      const { unsupportedIssues } = await import('@kbench/engine');
      const issues = plans.flatMap((plan, i) =>
        unsupportedIssues(plan, { profiles: app.profiles }).map((issue) =>
          plans.length > 1
            ? { ...issue, message: `${issue.message} (in run ${i + 1}, ${plan.name})` }
            : issue,
        ),
      );
      if (issues.length > 0) throw invalidScenario(issues);
      const concurrent = request.body.concurrent === true ? { concurrent: true } : {};
      let run: Awaited<ReturnType<typeof app.runs.start>>;
      try {
        run = scenario.sweep
          ? await app.runs.startSweep(scenario.sweep.knob, items, concurrent)
          : await app.runs.start(scenario, source, concurrent);
      } catch (err) {
        if (err instanceof ScenarioError) throw invalidScenario(err.issues);
        throw err;
      }
      return reply.code(201).send({ id: run.id });
    },
  );

  app.get<IdParams>(
    '/api/runs/:id/sweep',
    {
      schema: {
        params: runIdParams,
        response: { 200: responseSchema(sweepInfoSchema), ...errorResponses },
      },
    },
    async (request) => {
      const sweep = app.runs.sweepOf(request.params.id);
      if (!sweep)
        throw new HttpError(
          404,
          `run ${request.params.id} is not part of a sweep this server is running or ran`,
        );
      return sweep;
    },
  );

  app.get<{ Querystring: RunQuery }>(
    '/api/runs',
    {
      schema: {
        querystring: requestSchema(runQuerySchema),
        response: { 200: responseSchema(runListItemSchema.array()), ...errorResponses },
      },
    },
    async (request) => {
      const { status, search, limit } = request.query;
      return app.history.listRuns({
        ...(status ? { status } : {}),
        ...(search ? { search } : {}),
        ...(limit ? { limit } : {}),
      });
    },
  );

  // A token that changes whenever the history file does (a run stored or updated by this server or
  // by the CLI), read from the file's metadata without opening DuckDB, so the web can poll it cheaply.
  app.get(
    '/api/runs/version',
    {
      schema: {
        response: { 200: responseSchema(historyVersionSchema), ...errorResponses },
      },
    },
    async () => {
      const files = await Promise.all(
        [app.history.path, `${app.history.path}.wal`].map((file) => stat(file).catch(() => null)),
      );
      return { version: files.map((f) => (f ? `${f.mtimeMs}:${f.size}` : '-')).join('/') };
    },
  );

  /** Finds a run by id or unique id prefix, or answers 404. */
  async function findRun(id: string) {
    const record = await app.history.getRun(id);
    if (!record) throw new HttpError(404, `no run ${id}`);
    return record;
  }

  app.get<IdParams>(
    '/api/runs/:id',
    { schema: { params: runIdParams, response: { 200: runRecord, ...errorResponses } } },
    async (request) => findRun(request.params.id),
  );

  app.get<IdParams>(
    '/api/runs/:id/samples',
    {
      schema: {
        params: runIdParams,
        response: { 200: responseSchema(sampleSchema.array()), ...errorResponses },
      },
    },
    async (request) => {
      const record = await findRun(request.params.id);
      // A live run writes its samples to the history every few seconds; its own list is current.
      return app.runs.get(record.id)?.samples() ?? app.history.getSamples(record.id);
    },
  );

  app.get<IdParams>(
    '/api/runs/:id/samples.csv',
    { schema: { params: runIdParams, response: { 200: { type: 'string' }, ...errorResponses } } },
    async (request, reply) => {
      const record = await findRun(request.params.id);
      const csv = samplesToCsv(await app.history.getSamples(record.id));
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="kbench-${record.id}.csv"`)
        .send(csv);
    },
  );

  app.patch<IdParams & { Body: RunChange }>(
    '/api/runs/:id',
    {
      schema: {
        params: runIdParams,
        body: requestSchema(runChangeSchema),
        response: { 200: runRecord, ...errorResponses },
      },
    },
    async (request) => {
      const record = await findRun(request.params.id);
      if (request.body.tags !== undefined)
        await app.history.setTags(record.id, [...new Set(request.body.tags.map((t) => t.trim()))]);
      if (request.body.notes !== undefined) await app.history.setNotes(record.id, request.body.notes);
      return findRun(record.id);
    },
  );

  app.delete<IdParams>(
    '/api/runs/:id',
    {
      schema: {
        params: runIdParams,
        response: { 200: responseSchema(deletedSchema), ...errorResponses },
      },
    },
    async (request) => {
      const record = await findRun(request.params.id);
      if (app.runs.get(record.id))
        throw new HttpError(409, `run ${record.id} is still running; stop it first`);
      if (!(await app.history.deleteRun(record.id))) throw new HttpError(404, `no run ${request.params.id}`);
      return { deleted: record.id };
    },
  );

  app.post<IdParams>(
    '/api/runs/:id/stop',
    {
      schema: {
        params: runIdParams,
        response: { 202: runId, ...errorResponses },
      },
    },
    async (request, reply) => {
      const record = await findRun(request.params.id);
      const run = app.runs.get(record.id);
      if (run) {
        run.stop();
        return reply.code(202).send({ id: run.id });
      }
      if (record.status !== 'running')
        throw new HttpError(409, `run ${record.id} is not running (status ${record.status})`);
      // Another kbench process runs it (the CLI): SIGINT to the pid the run slot names, as Ctrl-C.
      const result = app.runs.stopElsewhere(record.id);
      if (!result.stopped)
        throw new HttpError(409, `run ${record.id} cannot be stopped from here: ${result.reason}`);
      return reply.code(202).send({ id: record.id });
    },
  );

  app.get<IdParams>(
    '/api/runs/:id/owner',
    {
      schema: {
        params: runIdParams,
        response: { 200: responseSchema(runOwnerSchema), ...errorResponses },
      },
    },
    async (request) => {
      const record = await findRun(request.params.id);
      return app.runs.owner(record.id, record.status);
    },
  );
}
