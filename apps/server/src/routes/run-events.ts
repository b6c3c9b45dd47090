// Server-sent events for one run: `sample`, `progress`, then `end` with the stored record.
import type { FastifyInstance } from 'fastify';
import { HttpError } from '../http-error.js';
import { errorResponses, runIdParams } from '../schemas.js';

const HEARTBEAT_MS = 15_000;

export async function runEventRoutes(app: FastifyInstance): Promise<void> {
  app.get<{ Params: { id: string } }>(
    '/api/runs/:id/events',
    { schema: { params: runIdParams, response: errorResponses } },
    async (request, reply) => {
      const record = await app.history.getRun(request.params.id);
      const live = app.runs.get(request.params.id) ?? (record ? app.runs.get(record.id) : undefined);
      if (!record && !live) throw new HttpError(404, `no run ${request.params.id}`);

      reply.hijack();
      const out = reply.raw;
      out.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      const send = (event: string, data: unknown) => {
        if (!out.writableEnded) out.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      };
      // Tell the browser to wait a little before reconnecting after a dropped connection.
      out.write('retry: 2000\n\n');

      if (!live) {
        // Not running here: replay what is stored, then end.
        const stored = record!;
        for (const s of await app.history.getSamples(stored.id)) send('sample', s);
        send('end', stored);
        out.end();
        return;
      }

      const heartbeat = setInterval(() => {
        if (!out.writableEnded) out.write(': heartbeat\n\n');
      }, HEARTBEAT_MS);
      let detach = () => {};
      const cleanup = () => {
        clearInterval(heartbeat);
        detach();
      };
      request.raw.on('close', cleanup);

      send('progress', live.progress());
      for (const s of live.samples()) send('sample', s);
      detach = app.runs.subscribe(live, {
        sample: (s) => send('sample', s),
        progress: (p) => send('progress', p),
        end: (stored) => {
          send('end', stored);
          cleanup();
          out.end();
        },
      });
    },
  );
}
