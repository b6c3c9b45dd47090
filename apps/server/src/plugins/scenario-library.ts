// The scenario files the workbench lists, reads and saves: @kbench/app's library, the one the CLI
// resolves scenario names with. Its path errors are answered by kind in app.ts (400, 404, 409).
import { ScenarioLibrary } from '@kbench/app';
import fp from 'fastify-plugin';

declare module 'fastify' {
  interface FastifyInstance {
    scenarios: ScenarioLibrary;
  }
}

export const scenarioLibraryPlugin = fp<{ scenariosDir: string; userScenariosDir?: string }>(
  async (app, opts) => {
    app.decorate('scenarios', new ScenarioLibrary(opts.scenariosDir, opts.userScenariosDir));
  },
  { name: 'scenario-library' },
);
