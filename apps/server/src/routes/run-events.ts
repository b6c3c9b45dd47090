// Server-sent events for one run: `sample`, `progress`, then `end` with the stored record.
import { type RunIdParams, type RunRecord, runIdParamsSchema } from '@kbench/schema';
import type { FastifyInstance } from 'fastify';
import { HttpError } from '../http-error.js';
import { errorResponses, requestSchema } from '../route-schema.js';

const HEARTBEAT_MS = 15_000;
/** How often a run recorded by another process is re-read (the engine stores samples every few seconds). */
const FOLLOW_POLL_MS = 2000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function runEventRoutes(app: FastifyInstance): Promise<void> {
  app.get<{ Params: RunIdParams }>(
    '/api/runs/:id/events',
    { schema: { params: requestSchema(runIdParamsSchema), response: errorResponses } },
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

      const heartbeat = setInterval(() => {
        if (!out.writableEnded) out.write(': heartbeat\n\n');
      }, HEARTBEAT_MS);
      let closed = false;
      let detach = () => {};
      const cleanup = () => {
        closed = true;
        clearInterval(heartbeat);
        detach();
      };
      request.raw.on('close', cleanup);
      const finish = (stored: RunRecord) => {
        send('end', stored);
        cleanup();
        out.end();
      };

      if (!live) {
        // Not running in this process: replay what is stored; a run another process (the CLI) is
        // recording is followed through the history until it ends.
        let sent = 0;
        let current = record!;
        try {
          while (!closed) {
            const samples = await app.history.getSamples(current.id);
            for (const s of samples.slice(sent)) send('sample', s);
            sent = Math.max(sent, samples.length);
            if (current.status !== 'running') return finish(current);
            await sleep(FOLLOW_POLL_MS);
            const next = await app.history.getRun(current.id);
            if (!next) return finish({ ...current, status: 'failed', error: 'the run was deleted' });
            current = next;
          }
        } catch (err) {
          // The stream has begun, so the error cannot become a status code: log it and close.
          request.log.error(err);
          cleanup();
          out.end();
        }
        return;
      }

      send('progress', live.progress());
      for (const s of live.samples()) send('sample', s);
      detach = app.runs.subscribe(live, {
        sample: (s) => send('sample', s),
        progress: (p) => send('progress', p),
        end: finish,
      });
    },
  );
}
