// A real Apache Kafka 4.3.1 cluster on loopback: 1..N KRaft nodes, each broker and controller in one JVM.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { KafkaToolError, tail } from './errors.js';
import { javaArgs, type LogLevel, runKafkaTool } from './java.js';
import { answersApiVersions, freePort, metadataBrokerIds } from './ports.js';

/** SASL mechanisms the managed Apache Kafka can offer on its SASL_PLAINTEXT listener. */
export type ManagedSaslMechanism = 'PLAIN' | 'SCRAM-SHA-256' | 'SCRAM-SHA-512';

export interface ManagedSasl {
  /** Offered on the SASL_PLAINTEXT listener; default SCRAM-SHA-256 only. */
  mechanisms?: ManagedSaslMechanism[];
  /**
   * The users the listener accepts: SCRAM credentials are written into the cluster metadata when the
   * storage is formatted (`kafka-storage format --add-scram`), PLAIN users into server.properties.
   */
  users: { username: string; password: string }[];
}

export interface StartApacheKafkaOptions {
  /**
   * Holds server.properties, the log dirs (`logs/`) and the JVM's output (`server.log`) of a one-node
   * cluster, or one `node-<id>/` folder of those per node. Reused if already formatted.
   */
  dataDir: string;
  /** Nodes, each broker and controller in one JVM, all of them voters of the controller quorum. Default 1. */
  nodes?: number;
  /** Node 1's PLAINTEXT port for clients (node i gets port + i - 1); 0 or absent picks free ones. */
  port?: number;
  /** Node 1's CONTROLLER port (node i gets controllerPort + i - 1); 0 or absent picks free ones. */
  controllerPort?: number;
  /**
   * Adds a SASL_PLAINTEXT listener on every node (`saslBootstrap`) with these mechanisms and users;
   * the PLAINTEXT listener stays for the brokers among themselves and for tools.
   */
  sasl?: ManagedSasl;
  /** Extra or overriding server configs, Kafka names, for every node. */
  serverProps?: Record<string, string | number | boolean>;
  /** JVM options of each node; default those of bin/kafka-server-start.sh (1 GB heap) and kafka-run-class.sh. */
  jvmArgs?: string[];
  logLevel?: LogLevel;
  /** How long to wait for every node to answer requests and the brokers to register. Default 90 s (plus 30 s a node). */
  startTimeoutMs?: number;
}

export interface ApacheKafkaNode {
  id: number;
  /** PLAINTEXT, `127.0.0.1:<port>`. */
  bootstrap: string;
  port: number;
  controllerPort: number;
  /** The SASL_PLAINTEXT port, when started with `sasl`. */
  saslPort: number | null;
  pid: number;
  dataDir: string;
  /** The JVM's stdout and stderr. */
  logFile: string;
}

export interface ApacheKafka {
  /** Every node's PLAINTEXT listener, `127.0.0.1:<port>[,127.0.0.1:<port>]...`. */
  bootstrap: string;
  /** Every node's SASL_PLAINTEXT listener, or null when started without `sasl`. */
  saslBootstrap: string | null;
  /** Node 1's PLAINTEXT port. */
  port: number;
  /** Node 1's CONTROLLER port. */
  controllerPort: number;
  /** Node 1's JVM. */
  pid: number;
  /** Node 1's JVM output. */
  logFile: string;
  nodes: ApacheKafkaNode[];
  /** SIGTERM to every node's process group, then SIGKILL to those still up after `graceMs` (default 10 s). */
  stop(graceMs?: number): Promise<void>;
}

export const SERVER_JVM_ARGS = [
  '-Xmx1G',
  '-Xms1G',
  '-XX:+UseG1GC',
  '-XX:MaxGCPauseMillis=20',
  '-XX:InitiatingHeapOccupancyPercent=35',
  '-XX:+ExplicitGCInvokesConcurrent',
  '-Djava.awt.headless=true',
];

/** Where one node of the cluster listens and keeps its files. */
export interface NodeLayout {
  id: number;
  dataDir: string;
  port: number;
  controllerPort: number;
  saslPort: number | null;
}

/** The server.properties of one node of a KRaft cluster on 127.0.0.1 whose nodes are all broker and controller. */
export function serverProperties(
  node: NodeLayout,
  cluster: NodeLayout[],
  options: { sasl?: ManagedSasl; extra?: Record<string, string | number | boolean> } = {},
): string {
  const internalRf = Math.min(3, cluster.length);
  const { sasl } = options;
  const listeners = [`PLAINTEXT://127.0.0.1:${node.port}`, `CONTROLLER://127.0.0.1:${node.controllerPort}`];
  if (sasl && node.saslPort !== null) listeners.push(`SASL_PLAINTEXT://127.0.0.1:${node.saslPort}`);
  const props: Record<string, string | number | boolean> = {
    'process.roles': 'broker,controller',
    'node.id': node.id,
    'controller.quorum.voters': cluster.map((n) => `${n.id}@127.0.0.1:${n.controllerPort}`).join(','),
    listeners: listeners.join(','),
    'advertised.listeners': listeners.join(','),
    'controller.listener.names': 'CONTROLLER',
    'inter.broker.listener.name': 'PLAINTEXT',
    'listener.security.protocol.map':
      'PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT',
    'log.dirs': join(node.dataDir, 'logs'),
    'num.partitions': 1,
    'offsets.topic.replication.factor': internalRf,
    'transaction.state.log.replication.factor': internalRf,
    'transaction.state.log.min.isr': Math.min(2, internalRf),
    'share.coordinator.state.topic.replication.factor': internalRf,
    'share.coordinator.state.topic.min.isr': Math.min(2, internalRf),
    // One member groups should not wait 3 s for others.
    'group.initial.rebalance.delay.ms': 0,
    ...(sasl ? saslProperties(sasl) : {}),
    ...options.extra,
  };
  const lines = Object.entries(props).map(([key, value]) => `${key}=${value}`);
  return `# Written by @kbench/apache-kafka startApacheKafka\n${lines.join('\n')}\n`;
}

function saslMechanisms(sasl: ManagedSasl): ManagedSaslMechanism[] {
  return sasl.mechanisms && sasl.mechanisms.length > 0 ? sasl.mechanisms : ['SCRAM-SHA-256'];
}

/** A JAAS string value: quoted, with backslashes and quotes escaped. */
function jaasQuote(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

function saslProperties(sasl: ManagedSasl): Record<string, string> {
  const mechanisms = saslMechanisms(sasl);
  const props: Record<string, string> = { 'sasl.enabled.mechanisms': mechanisms.join(',') };
  for (const mechanism of mechanisms) {
    const key = `listener.name.sasl_plaintext.${mechanism.toLowerCase()}.sasl.jaas.config`;
    if (mechanism === 'PLAIN') {
      const users = sasl.users.map((u) => `user_${u.username}=${jaasQuote(u.password)}`).join(' ');
      props[key] = `org.apache.kafka.common.security.plain.PlainLoginModule required ${users};`;
    } else {
      props[key] = 'org.apache.kafka.common.security.scram.ScramLoginModule required;';
    }
  }
  return props;
}

/** A Kafka cluster id: 16 random bytes in URL-safe base64 without padding, as `kafka-storage random-uuid` prints. */
export function newClusterId(): string {
  return randomBytes(16).toString('base64url');
}

/** `count` distinct free ports, or `first`, `first + 1`... when `first` is given. */
async function ports(count: number, first: number | undefined, taken: Set<number>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    let port = first ? first + i : await freePort();
    while (!first && taken.has(port)) port = await freePort();
    taken.add(port);
    out.push(port);
  }
  return out;
}

/**
 * Formats (first time only) and starts an Apache Kafka cluster of `nodes` KRaft nodes on loopback;
 * resolves once every node answers on its client port and lists every broker in its metadata.
 */
export async function startApacheKafka(options: StartApacheKafkaOptions): Promise<ApacheKafka> {
  const count = options.nodes ?? 1;
  if (!Number.isInteger(count) || count < 1 || count > 9) {
    throw new Error(`startApacheKafka: nodes must be a whole number from 1 to 9 (got ${count})`);
  }
  mkdirSync(options.dataDir, { recursive: true });
  const taken = new Set<number>();
  const clientPorts = await ports(count, options.port || undefined, taken);
  const controllerPorts = await ports(count, options.controllerPort || undefined, taken);
  const saslPorts = options.sasl ? await ports(count, undefined, taken) : [];
  const layout: NodeLayout[] = clientPorts.map((port, i) => ({
    id: i + 1,
    // One node keeps the single-node layout of earlier versions: everything in dataDir itself.
    dataDir: count === 1 ? options.dataDir : join(options.dataDir, `node-${i + 1}`),
    port,
    controllerPort: controllerPorts[i] as number,
    saslPort: saslPorts[i] ?? null,
  }));
  const logLevel = options.logLevel ?? 'warn';
  const clusterId = existingClusterId(layout) ?? newClusterId();
  for (const node of layout) {
    mkdirSync(node.dataDir, { recursive: true });
    const config = join(node.dataDir, 'server.properties');
    writeFileSync(
      config,
      serverProperties(node, layout, {
        ...(options.sasl ? { sasl: options.sasl } : {}),
        ...(options.serverProps ? { extra: options.serverProps } : {}),
      }),
      { mode: 0o600 },
    );
    if (!existsSync(join(node.dataDir, 'logs', 'meta.properties'))) {
      await formatStorage(config, clusterId, options.sasl, logLevel);
    }
  }

  const started: RunningNode[] = [];
  const stop = async (graceMs = 10_000): Promise<void> => {
    await Promise.all(started.map((node) => node.stop(graceMs)));
  };
  try {
    for (const node of layout) started.push(await launch(node, options.jvmArgs ?? SERVER_JVM_ARGS, logLevel));
    const deadline = Date.now() + (options.startTimeoutMs ?? 90_000 + 30_000 * (count - 1));
    for (const node of started) await node.ready(deadline);
    await allBrokersListed(started, deadline);
  } catch (err) {
    await stop();
    throw err;
  }
  const first = started[0] as RunningNode;
  const nodes = started.map((n) => n.info);
  return {
    bootstrap: nodes.map((n) => n.bootstrap).join(','),
    saslBootstrap: options.sasl ? nodes.map((n) => `127.0.0.1:${n.saslPort}`).join(',') : null,
    port: first.info.port,
    controllerPort: first.info.controllerPort,
    pid: first.info.pid,
    logFile: first.info.logFile,
    nodes,
    stop,
  };
}

/** The cluster id of nodes formatted earlier, so that a restarted cluster's new nodes join it. */
function existingClusterId(layout: NodeLayout[]): string | null {
  for (const node of layout) {
    try {
      const meta = readFileSync(join(node.dataDir, 'logs', 'meta.properties'), 'utf8');
      const match = /^cluster\.id=(.+)$/m.exec(meta);
      if (match?.[1]) return match[1].trim();
    } catch {
      // not formatted yet
    }
  }
  return null;
}

async function formatStorage(
  config: string,
  clusterId: string,
  sasl: ManagedSasl | undefined,
  logLevel: LogLevel,
): Promise<void> {
  const scram = sasl
    ? saslMechanisms(sasl)
        .filter((m) => m !== 'PLAIN')
        .flatMap((m) =>
          sasl.users.map((u) => ['--add-scram', `${m}=[name=${u.username},password=${u.password}]`]),
        )
        .flat()
    : [];
  const format = await runKafkaTool(
    'kafka.tools.StorageTool',
    ['format', '--cluster-id', clusterId, '--config', config, ...scram],
    { timeoutMs: 120_000, logLevel },
  );
  if (format.exitCode !== 0) {
    throw new KafkaToolError(
      `kafka-storage format failed (${format.exitCode}):\n${tail(format.stdout)}\n${tail(format.stderr)}`,
      format.stdout,
      format.stderr,
      format.exitCode,
    );
  }
}

interface RunningNode {
  info: ApacheKafkaNode;
  /** Waits until the node answers ApiVersions on its client port; throws if it exits or the deadline passes. */
  ready(deadline: number): Promise<void>;
  running(): boolean;
  stop(graceMs: number): Promise<void>;
}

async function launch(node: NodeLayout, jvmArgs: string[], logLevel: LogLevel): Promise<RunningNode> {
  const logFile = join(node.dataDir, 'server.log');
  const config = join(node.dataDir, 'server.properties');
  const out = openSync(logFile, 'a');
  const argv = await javaArgs('kafka.Kafka', [config], jvmArgs, logLevel);
  // detached: its own process group, so stop() and the exit hook reach the JVM and anything it forks.
  const child = spawn('java', argv, { detached: true, stdio: ['ignore', out, out] });
  closeSync(out);
  const pid = child.pid;
  if (pid === undefined) throw new Error('could not start java for Apache Kafka');
  const killNow = () => signalGroup(pid, 'SIGKILL');
  process.once('exit', killNow);
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  const stop = async (graceMs: number): Promise<void> => {
    if (isRunning(child)) {
      signalGroup(pid, 'SIGTERM');
      const timer = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), graceMs));
      if ((await Promise.race([exited, timer])) === 'timeout') {
        signalGroup(pid, 'SIGKILL');
        await exited;
      }
    }
    signalGroup(pid, 'SIGKILL'); // anything left in its group
    process.removeListener('exit', killNow);
  };
  const info: ApacheKafkaNode = {
    id: node.id,
    bootstrap: `127.0.0.1:${node.port}`,
    port: node.port,
    controllerPort: node.controllerPort,
    saslPort: node.saslPort,
    pid,
    dataDir: node.dataDir,
    logFile,
  };
  const ready = async (deadline: number): Promise<void> => {
    for (;;) {
      if (!isRunning(child)) {
        throw new Error(
          `Apache Kafka node ${node.id} exited during startup (${child.exitCode ?? child.signalCode}):\n${logTail(logFile)}`,
        );
      }
      if (await answersApiVersions('127.0.0.1', node.port)) return;
      if (Date.now() > deadline) {
        throw new Error(
          `Apache Kafka node ${node.id} did not answer on 127.0.0.1:${node.port} in time:\n${logTail(logFile)}`,
        );
      }
      await sleep(250);
    }
  };
  return { info, ready, running: () => isRunning(child), stop };
}

/** Waits until node 1 lists every node as a broker (registered and unfenced), so RF = nodes works at once. */
async function allBrokersListed(nodes: RunningNode[], deadline: number): Promise<void> {
  const first = nodes[0] as RunningNode;
  for (;;) {
    const ids = await metadataBrokerIds('127.0.0.1', first.info.port);
    if (ids !== null && ids.length >= nodes.length) return;
    const dead = nodes.find((n) => !n.running());
    if (dead) {
      throw new Error(
        `Apache Kafka node ${dead.info.id} exited during startup:\n${logTail(dead.info.logFile)}`,
      );
    }
    if (Date.now() > deadline) {
      throw new Error(
        `Apache Kafka: only brokers ${JSON.stringify(ids ?? [])} of ${nodes.length} registered in time:\n${logTail(first.info.logFile)}`,
      );
    }
    await sleep(250);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function isRunning(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is gone already
  }
}

function logTail(path: string): string {
  try {
    return tail(readFileSync(path, 'utf8'), 30);
  } catch {
    return '(no server.log)';
  }
}
