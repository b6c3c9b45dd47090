// Listens on the loopback interface only: the workbench is a local tool with no authentication.
import type { FastifyInstance } from 'fastify';
import { type AppOptions, buildApp } from './app.js';

export const DEFAULT_PORT = 7420;
const LOOPBACK = '127.0.0.1';

export interface RunningServer {
  url: string;
  port: number;
  app: FastifyInstance;
  close(): Promise<void>;
}

export async function startServer(opts: AppOptions & { port?: number }): Promise<RunningServer> {
  const requested = opts.port ?? DEFAULT_PORT;
  const app = await buildApp({ ...opts, host: LOOPBACK, port: requested });
  await app.listen({ host: LOOPBACK, port: requested });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : requested;
  return { url: `http://${LOOPBACK}:${port}`, port, app, close: () => app.close() };
}
