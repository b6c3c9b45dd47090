import type { FastifyInstance } from 'fastify';
import { errorBody, errorResponses } from '../schemas.js';

const issues = errorBody.properties.issues;

export async function scenarioRoutes(app: FastifyInstance): Promise<void> {
  app.get(
    '/api/scenarios',
    {
      schema: {
        response: {
          200: {
            type: 'array',
            items: {
              type: 'object',
              required: ['path', 'folder', 'name', 'description', 'valid'],
              properties: {
                path: { type: 'string' },
                folder: { type: 'string' },
                name: { type: 'string' },
                description: { type: 'string' },
                valid: { type: 'boolean' },
                issues,
                outline: {
                  type: 'object',
                  properties: {
                    target: { type: 'string' },
                    driver: { type: 'string' },
                    nodes: { type: 'integer' },
                    partitions: { type: 'integer' },
                    producers: { type: 'integer' },
                    consumers: { type: 'integer' },
                    // A size in bytes, or a { min, max } range.
                    messageSize: {},
                    length: { type: 'string' },
                    sweep: { type: 'boolean' },
                  },
                },
              },
            },
          },
          ...errorResponses,
        },
      },
    },
    async () => app.scenarios.list(),
  );

  app.get<{ Params: { '*': string } }>(
    '/api/scenarios/*',
    {
      schema: {
        params: { type: 'object', properties: { '*': { type: 'string', maxLength: 1000 } } },
        response: {
          200: {
            type: 'object',
            required: ['path', 'text'],
            properties: {
              path: { type: 'string' },
              text: { type: 'string' },
              scenario: { type: 'object', additionalProperties: true },
              issues,
            },
          },
          ...errorResponses,
        },
      },
    },
    async (request) => app.scenarios.read(request.params['*']),
  );

  app.post<{ Body: { file: string; yaml: string; overwrite?: boolean } }>(
    '/api/scenarios',
    {
      schema: {
        body: {
          type: 'object',
          required: ['file', 'yaml'],
          additionalProperties: false,
          properties: {
            file: { type: 'string', minLength: 1, maxLength: 100 },
            yaml: { type: 'string', maxLength: 1_000_000 },
            overwrite: { type: 'boolean' },
          },
        },
        response: {
          201: { type: 'object', required: ['path'], properties: { path: { type: 'string' } } },
          ...errorResponses,
        },
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
