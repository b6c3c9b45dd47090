import { readFileSync } from 'node:fs';
import { healthSchema } from '@kbench/schema';
import type { FastifyInstance } from 'fastify';
import { responseSchema } from '../route-schema.js';

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

export async function healthRoutes(app: FastifyInstance): Promise<void> {
  app.get(
    '/api/health',
    {
      schema: { response: { 200: responseSchema(healthSchema) } },
    },
    async () => ({ ok: true, version }),
  );
}
