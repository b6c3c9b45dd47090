import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { startBundledCluster } from '@kbench/apache-kafka';
import { startBroker, startCluster } from '@kbench/broker-native';
import { kbenchHome } from '@kbench/history';
import { intOption, parseCommandArgs } from '../args.js';
import { UsageError } from '../usage.js';

const FSYNC = /^(none|batch|interval:[1-9]\d*)$/;

/**
 * Runs the bundled broker in the foreground until SIGINT or SIGTERM: one node, a cluster of
 * `--nodes` in this process, or (`--processes`) one OS process per node. Node i listens on
 * port + i - 1 and gets a `node <id> <host>:<port> pid <pid>` line.
 */
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
  const fsync = values.fsync ?? 'none';
  if (!FSYNC.test(fsync))
    throw new UsageError(
      `kbench broker: --fsync must be one of none, batch, interval:<ms> (got ${JSON.stringify(fsync)})`,
    );
  const dataDir = path.resolve(values['data-dir'] ?? path.join(kbenchHome(), 'broker'));
  await mkdir(dataDir, { recursive: true });
  const stopped = new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  const announce = (id: number, host: string, p: number, pid: number) =>
    process.stdout.write(`node ${id} ${host}:${p} pid ${pid}\n`);

  if (values.processes) {
    const cluster = await startBundledCluster({ dataDir, nodes, basePort: port, fsync });
    for (const n of cluster.nodes()) announce(n.id, '127.0.0.1', n.port, n.pid ?? 0);
    process.stderr.write(`${nodes} node process(es), data in ${dataDir}; Ctrl-C to stop\n`);
    await stopped;
    await cluster.stop();
    return 0;
  }
  if (nodes > 1 || fsync !== 'none') {
    const cluster = await startCluster({ nodes, dataDir, basePort: port, fsync });
    for (const n of await cluster.nodes()) announce(n.id, n.host, n.port, process.pid);
    process.stderr.write(`${nodes} node(s) in this process, data in ${dataDir}; Ctrl-C to stop\n`);
    await stopped;
    await cluster.stop();
    return 0;
  }
  const broker = await startBroker({ dataDir, port });
  announce(broker.nodeId, broker.host, broker.port, process.pid);
  process.stderr.write(`data in ${dataDir}; Ctrl-C to stop\n`);
  await stopped;
  await broker.stop();
  return 0;
}
