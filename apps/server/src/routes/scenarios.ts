import {
  type SaveScenarioBody,
  ScenarioError,
  savedScenarioSchema,
  saveScenarioBodySchema,
  scenarioEntrySchema,
  scenarioFileSchema,
  scenarioPathParamsSchema,
} from '@kbench/schema';
import type { FastifyInstance } from 'fastify';
import { invalidScenario } from '../http-error.js';
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
      const { file, yaml, overwrite } = request.body;
      try {
        return reply.code(201).send(await app.scenarios.save(file, yaml, overwrite ?? false));
      } catch (err) {
        if (err instanceof ScenarioError) throw invalidScenario(err.issues);
        throw err;
      }
    },
  );
}
