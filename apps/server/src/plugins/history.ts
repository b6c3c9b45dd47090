// The run history, shared by every route.
import type { History } from '@kbench/history';
import fp from 'fastify-plugin';

declare module 'fastify' {
  interface FastifyInstance {
    history: History;
  }
}

export const historyPlugin = fp<{ history: History }>(
  async (app, opts) => {
    app.decorate('history', opts.history);
  },
  { name: 'history' },
);
