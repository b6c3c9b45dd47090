import path from 'node:path';
import { History, kbenchHome } from '@kbench/history';
import { startServer } from '@kbench/server';
import { intOption, parseCommandArgs } from '../args.js';
import { defaultScenariosDir, webDistDir } from '../paths.js';
import { CommandError, isPortInUse, UsageError } from '../usage.js';

export async function serveCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('serve', argv, {
    port: { type: 'string' },
    scenarios: { type: 'string' },
  });
  if (positionals.length > 0)
    throw new UsageError(`kbench serve: unexpected argument ${JSON.stringify(positionals[0])}`);
  const port = intOption('serve', 'port', values.port, 0, 65535) ?? 7420;
  const history = await History.open();
  const webDist = webDistDir();
  const server = await startServer({
    history,
    port,
    scenariosDir: values.scenarios ? path.resolve(values.scenarios) : defaultScenariosDir(),
    webDist,
    // Scenarios saved from the composer land here, listed under user/.
    userScenariosDir: path.join(kbenchHome(), 'scenarios'),
  }).catch((err: unknown) => {
    if (isPortInUse(err))
      throw new CommandError(
        `kbench serve: port ${port} on 127.0.0.1 is already in use (another kbench serve?); choose another with --port`,
      );
    throw err;
  });
  process.stdout.write(`kbench workbench at ${server.url} (history: ${history.path})\n`);
  if (!webDist) process.stderr.write('the web app is not built: run npm run build (the API is up)\n');
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await server.close();
  return 0;
}
