import {
  type SaveScenarioBody,
  savedScenarioSchema,
  saveScenarioBodySchema,
  scenarioEntrySchema,
  scenarioFileSchema,
  scenarioPathParamsSchema,
} from '@kbench/schema';
import type { FastifyInstance } from 'fastify';
import { errorResponses, requestSchema, responseSchema } from '../route-schema.js';

export async function scenarioRoutes(app: FastifyInstance): Promise<void> {
  app.get(
    '/api/scenarios',
    { schema: { response: { 200: responseSchema(scenarioEntrySchema.array()), ...errorResponses } } },
    async () => app.scenarios.list(),
  );

  app.get<{ Params: { '*': string } }>(
    '/api/scenarios/*',
    {
      schema: {
        params: requestSchema(scenarioPathParamsSchema),
        // The file's place on disk is not answered: it is not in the shape.
        response: { 200: responseSchema(scenarioFileSchema), ...errorResponses },
      },
    },
    async (request) => app.scenarios.read(request.params['*']),
  );

  app.post<{ Body: SaveScenarioBody }>(
    '/api/scenarios',
    {
      schema: {
        body: requestSchema(saveScenarioBodySchema),
        response: { 201: responseSchema(savedScenarioSchema), ...errorResponses },
      },
    },
    async (request, reply) => {
      const saved = await app.scenarios.save(
        request.body.file,
        request.body.yaml,
        request.body.overwrite ?? false,
      );
      return reply.code(201).send(saved);
    },
  );
}
