// Builds the Fastify app: guard, services, routes, web app. `server.ts` listens.
import { LibraryPathError } from '@kbench/app';
import { ProfileStore } from '@kbench/engine/profiles';
import type { History } from '@kbench/history';
import Fastify, { type FastifyError, type FastifyInstance } from 'fastify';
import { HttpError } from './http-error.js';
import { historyPlugin } from './plugins/history.js';
import { runManagerPlugin } from './plugins/run-manager.js';
import { scenarioLibraryPlugin } from './plugins/scenario-library.js';
import { chartRoutes } from './routes/charts.js';
import { healthRoutes } from './routes/health.js';
import { histogramRoutes } from './routes/histograms.js';
import { metricsRoutes } from './routes/metrics.js';
import { profileRoutes } from './routes/profiles.js';
import { reproductionRoutes } from './routes/reproductions.js';
import { runEventRoutes } from './routes/run-events.js';
import { runRoutes } from './routes/runs.js';
import { scenarioRoutes } from './routes/scenarios.js';
import { trendRoutes } from './routes/trends.js';
import { loopbackGuard } from './security.js';
import { webApp } from './web.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The target profiles runs may name. */
    profiles: ProfileStore;
  }
}

/** Errors the history throws on purpose, by name, and the answer each deserves. */
const HISTORY_ERROR_STATUS: Record<string, number> = { AmbiguousRunIdError: 400, RunNotFoundError: 404 };
/** A scenario library path that leads nowhere: bad as written, missing, or a save over an existing file. */
const LIBRARY_PATH_STATUS = { bad: 400, missing: 404, exists: 409 } as const;

export interface AppOptions {
  history: History;
  /** The scenario library (the repository's scenarios/ folder). */
  scenariosDir: string;
  /** A person's own scenarios, listed under user/. */
  userScenariosDir?: string;
  /** Where target profiles live; default $KBENCH_HOME/profiles. */
  profilesDir?: string;
  /** The built web app (apps/web/dist); without it only the API is served. */
  webDist?: string;
  /** The interface it listens on; informational, since startServer always binds 127.0.0.1. */
  host?: string;
  /** The port the server is reached on, for the Host check before it listens. */
  port?: number;
  logger?: boolean;
}

export async function buildApp(opts: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger: opts.logger ?? false,
    // Reject unknown body fields instead of silently dropping them.
    ajv: { customOptions: { removeAdditional: false } },
    forceCloseConnections: true,
  });

  app.setErrorHandler((error: FastifyError | HttpError, request, reply) => {
    const status =
      error.statusCode ??
      (error instanceof LibraryPathError ? LIBRARY_PATH_STATUS[error.kind] : undefined) ??
      HISTORY_ERROR_STATUS[error.name] ??
      500;
    if (status >= 500) {
      request.log.error(error);
      return reply.code(status).send({ error: 'Internal Server Error' });
    }
    const body: { error: string; issues?: unknown } = { error: error.message };
    if (error instanceof HttpError && error.issues) body.issues = error.issues;
    return reply.code(status).send(body);
  });

  await app.register(loopbackGuard, opts.port === undefined ? {} : { port: opts.port });
  await app.register(historyPlugin, { history: opts.history });
  app.decorate('profiles', new ProfileStore(opts.profilesDir));
  await app.register(runManagerPlugin);
  await app.register(scenarioLibraryPlugin, {
    scenariosDir: opts.scenariosDir,
    ...(opts.userScenariosDir ? { userScenariosDir: opts.userScenariosDir } : {}),
  });

  await app.register(healthRoutes);
  await app.register(scenarioRoutes);
  await app.register(runRoutes);
  await app.register(reproductionRoutes);
  await app.register(profileRoutes);
  await app.register(runEventRoutes);
  await app.register(chartRoutes);
  await app.register(histogramRoutes);
  await app.register(trendRoutes);
  await app.register(metricsRoutes);
  await app.register(webApp, opts.webDist ? { webDist: opts.webDist } : {});
  return app;
}
