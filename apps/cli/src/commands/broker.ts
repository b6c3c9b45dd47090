import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { startBundledCluster } from '@kbench/broker-launcher';
import { type BrokerSecurity, startBroker, startCluster } from '@kbench/broker-native';
import { kbenchHome } from '@kbench/history';
import { intOption, parseCommandArgs } from '../args.js';
import { CommandError, isPortInUse, UsageError } from '../usage.js';

const FSYNC = /^(none|batch|interval:[1-9]\d*)$/;
/** HOST:PORT, the host a name, an IPv4 address or a bracketed IPv6 one. */
const METRICS_ADDRESS = /^(\[[0-9a-fA-F:.]+\]|[^\s:[\]]+):(\d{1,5})$/;

/**
 * Runs the bundled broker in the foreground until SIGINT or SIGTERM: one node, a cluster of
 * `--nodes` in this process, or (`--processes`) one OS process per node. Node i listens on
 * port + i - 1 and gets a `node <id> <host>:<port> pid <pid>` line. Topics are created on first
 * use (Kafka's auto.create.topics.enable) unless `--no-auto-create-topics`. `--tls-cert/--tls-key
 * [--tls-ca]` and `--sasl MECHANISM --user NAME:PASSWORD` make the listener SSL, SASL_PLAINTEXT or
 * SASL_SSL (kbench-broker's flags of the same names). `--metrics HOST:PORT` serves every node's figures
 * at `GET /metrics` (Prometheus text), printed as `metrics <host>:<port>` after the node lines.
 */
export async function brokerCommand(argv: string[]): Promise<number> {
  try {
    return await serveBroker(argv);
  } catch (err) {
    if (isPortInUse(err))
      throw new CommandError(
        `kbench broker: a port the broker needs is already in use (${portsOf(argv)}); is another broker running? choose another with --port`,
      );
    throw err;
  }
}

function portsOf(argv: string[]): string {
  const at = argv.indexOf('--port');
  const port = at >= 0 ? Number(argv[at + 1]) : 9092;
  const nodesAt = argv.indexOf('--nodes');
  const nodes = nodesAt >= 0 ? Number(argv[nodesAt + 1]) : 1;
  return nodes > 1 ? `ports ${port} to ${port + nodes - 1}` : `port ${port}`;
}

async function serveBroker(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('broker', argv, {
    port: { type: 'string' },
    'data-dir': { type: 'string' },
    nodes: { type: 'string' },
    fsync: { type: 'string' },
    processes: { type: 'boolean' },
    'no-auto-create-topics': { type: 'boolean' },
    'tls-cert': { type: 'string' },
    'tls-key': { type: 'string' },
    'tls-ca': { type: 'string' },
    sasl: { type: 'string' },
    user: { type: 'string', multiple: true },
    metrics: { type: 'string' },
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
  const autoCreateTopics = !values['no-auto-create-topics'];
  const security = securityOptions(values);
  const metrics = metricsOption(values.metrics, values.processes === true);
  // The broker runs on the addon's own threads, which do not keep Node's event loop alive: this
  // timer does, until a signal comes (without it a lone broker exited as soon as it started).
  const keepAlive = setInterval(() => {}, 1 << 30);
  const stopped = new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  }).finally(() => clearInterval(keepAlive));
  const announce = (id: number, host: string, p: number, pid: number) =>
    process.stdout.write(`node ${id} ${host}:${p} pid ${pid}\n`);

  if (values.processes) {
    const cluster = await startBundledCluster({
      dataDir,
      nodes,
      basePort: port,
      fsync,
      autoCreateTopics,
      extraArgs: securityArgs(security),
    });
    for (const n of cluster.nodes()) announce(n.id, '127.0.0.1', n.port, n.pid ?? 0);
    process.stderr.write(`${nodes} node process(es), data in ${dataDir}; Ctrl-C to stop\n`);
    await stopped;
    await cluster.stop();
    return 0;
  }
  if (nodes > 1 || fsync !== 'none') {
    const cluster = await startCluster({
      nodes,
      dataDir,
      basePort: port,
      fsync,
      autoCreateTopics,
      security,
      metrics,
    });
    for (const n of await cluster.nodes()) announce(n.id, n.host, n.port, process.pid);
    announceMetrics(cluster.metricsAddress);
    process.stderr.write(`${nodes} node(s) in this process, data in ${dataDir}; Ctrl-C to stop\n`);
    await stopped;
    await cluster.stop();
    return 0;
  }
  const broker = await startBroker({ dataDir, port, autoCreateTopics, security, metrics });
  announce(broker.nodeId, broker.host, broker.port, process.pid);
  announceMetrics(broker.metricsAddress);
  process.stderr.write(`data in ${dataDir}; Ctrl-C to stop\n`);
  await stopped;
  await broker.stop();
  return 0;
}

function announceMetrics(address: string | null | undefined): void {
  if (address) process.stdout.write(`metrics ${address}\n`);
}

/** `--metrics HOST:PORT`, checked before anything starts. */
function metricsOption(value: string | undefined, processes: boolean): string | undefined {
  if (value === undefined) return undefined;
  if (processes)
    throw new UsageError(
      'kbench broker: --metrics serves the nodes of this process; with --processes, run kbench-broker --metrics per node',
    );
  const match = METRICS_ADDRESS.exec(value);
  if (!match || Number(match[2]) > 65535)
    throw new UsageError(
      `kbench broker: --metrics must be HOST:PORT, such as 127.0.0.1:9644 (got ${JSON.stringify(value)})`,
    );
  return value;
}

interface SecurityFlags {
  'tls-cert'?: string;
  'tls-key'?: string;
  'tls-ca'?: string;
  sasl?: string;
  user?: string[];
}

/** The listener's TLS and SASL from the flags (the broker checks the files and names). */
function securityOptions(flags: SecurityFlags): BrokerSecurity | undefined {
  const { 'tls-cert': tlsCert, 'tls-key': tlsKey, 'tls-ca': tlsCa, sasl, user } = flags;
  if ((tlsCert === undefined) !== (tlsKey === undefined) || (tlsCa !== undefined && tlsCert === undefined))
    throw new UsageError('kbench broker: --tls-cert and --tls-key go together (and --tls-ca needs both)');
  if ((sasl === undefined) !== (user === undefined))
    throw new UsageError('kbench broker: --sasl MECHANISM and --user NAME:PASSWORD go together');
  if (tlsCert === undefined && sasl === undefined) return undefined;
  const resolve = (file: string | undefined) => (file === undefined ? undefined : path.resolve(file));
  return {
    tlsCert: resolve(tlsCert),
    tlsKey: resolve(tlsKey),
    tlsCa: resolve(tlsCa),
    saslMechanisms: sasl?.split(','),
    users: user,
  };
}

/** The same options as kbench-broker flags, for node processes. */
function securityArgs(security: BrokerSecurity | undefined): string[] {
  if (!security) return [];
  const args: string[] = [];
  if (security.tlsCert && security.tlsKey)
    args.push('--tls-cert', security.tlsCert, '--tls-key', security.tlsKey);
  if (security.tlsCa) args.push('--tls-ca', security.tlsCa);
  if (security.saslMechanisms) args.push('--sasl', security.saslMechanisms.join(','));
  for (const user of security.users ?? []) args.push('--user', user);
  return args;
}
