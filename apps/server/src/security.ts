// Loopback-only guard: refuse requests addressed to another host name (DNS rebinding)
// and requests sent by another site's pages (cross-origin), before any route runs.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { HttpError } from './http-error.js';

const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'];

export function isAllowedHost(host: string | undefined, port: number | undefined): boolean {
  if (!host || port === undefined) return false;
  return LOOPBACK_NAMES.some((name) => host.toLowerCase() === `${name}:${port}`);
}

/** The port the server answers on: the bound one once listening, else the one it was built for. */
function servingPort(app: FastifyInstance, configured: number | undefined): number | undefined {
  const address = app.server.address();
  if (address !== null && typeof address === 'object') return address.port;
  return configured;
}

export const loopbackGuard = fp<{ port?: number }>(
  async (app, opts) => {
    app.addHook('onRequest', async (request) => {
      const host = request.headers.host;
      if (!isAllowedHost(host, servingPort(app, opts.port))) {
        throw new HttpError(403, 'forbidden: address this server as 127.0.0.1 or localhost with its port');
      }
      const origin = request.headers.origin;
      if (origin !== undefined && origin !== `http://${host}`) {
        throw new HttpError(403, 'forbidden: cross-origin requests are refused');
      }
    });
  },
  { name: 'loopback-guard' },
);
