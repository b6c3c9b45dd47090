import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { startBroker } from '@kbench/broker-native';
import { kbenchHome } from '@kbench/history';
import { intOption, parseCommandArgs } from '../args.js';
import { UsageError } from '../usage.js';

/** Runs the bundled broker in the foreground until SIGINT or SIGTERM. */
export async function brokerCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('broker', argv, {
    port: { type: 'string' },
    'data-dir': { type: 'string' },
    nodes: { type: 'string' },
    fsync: { type: 'string' },
    processes: { type: 'boolean' },
  });
  if (positionals.length > 0)
    throw new UsageError(`kbench broker: unexpected argument ${JSON.stringify(positionals[0])}`);
  const port = intOption('broker', 'port', values.port, 0, 65535) ?? 9092;
  const nodes = intOption('broker', 'nodes', values.nodes, 1, 5) ?? 1;
  if (nodes !== 1 || values.processes)
    throw new UsageError('kbench broker: this version runs a single node (--nodes 1, no --processes)');
  if (values.fsync !== undefined && values.fsync !== 'none')
    throw new UsageError('kbench broker: --fsync supports none in this version');
  const dataDir = path.resolve(values['data-dir'] ?? path.join(kbenchHome(), 'broker'));
  await mkdir(dataDir, { recursive: true });
  const broker = await startBroker({ dataDir, port });
  process.stdout.write(`node ${broker.nodeId} ${broker.host}:${broker.port} pid ${process.pid}\n`);
  process.stderr.write(`data in ${dataDir}; Ctrl-C to stop\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await broker.stop();
  return 0;
}
