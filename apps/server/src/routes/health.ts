import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

export async function healthRoutes(app: FastifyInstance): Promise<void> {
  app.get(
    '/api/health',
    {
      schema: {
        response: {
          200: {
            type: 'object',
            required: ['ok', 'version'],
            properties: { ok: { type: 'boolean' }, version: { type: 'string' } },
          },
        },
      },
    },
    async () => ({ ok: true, version }),
  );
}
