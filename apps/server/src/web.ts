// Serves the built web app and answers client routes with its index.html.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import fastifyStatic from '@fastify/static';
import fp from 'fastify-plugin';

export const webApp = fp<{ webDist?: string }>(
  async (app, opts) => {
    const dist = opts.webDist;
    const hasIndex = dist !== undefined && existsSync(join(dist, 'index.html'));
    if (hasIndex) {
      await app.register(fastifyStatic, {
        root: dist,
        wildcard: true,
        // Our own cache headers below, not send's default max-age=0.
        cacheControl: false,
        setHeaders(res, path) {
          // Vite names assets by content hash; index.html must always be fetched fresh.
          res.setHeader(
            'cache-control',
            path.endsWith('index.html') ? 'no-cache' : 'public, max-age=31536000, immutable',
          );
        },
      });
    }
    app.setNotFoundHandler(async (request, reply) => {
      const url = request.url;
      if (
        url.startsWith('/api/') ||
        url === '/api' ||
        (request.method !== 'GET' && request.method !== 'HEAD')
      ) {
        return reply.code(404).send({ error: `not found: ${request.method} ${url.split('?')[0]}` });
      }
      if (!hasIndex) {
        return reply
          .code(404)
          .type('text/plain; charset=utf-8')
          .send('The web app is not built: run `npm run build` at the repository root.');
      }
      // A path with a file extension is a missing asset, not a client route.
      if (/\.[a-z0-9]+$/i.test(url.split('?')[0] ?? '')) return reply.code(404).send({ error: 'not found' });
      return reply.header('cache-control', 'no-cache').sendFile('index.html');
    });
  },
  { name: 'web-app' },
);
