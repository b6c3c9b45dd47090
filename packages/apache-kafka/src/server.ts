// A real Apache Kafka 4.3.1 cluster on loopback: 1..N KRaft nodes, each broker and controller in one JVM.
import { type ChildProcess, spawn } from 'node:child_process';
import { createPrivateKey, randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { KafkaToolError, tail } from './errors.js';
import { ensureJmxExporter } from './jars.js';
import { javaArgs, type LogLevel, runKafkaTool } from './java.js';
import { answersApiVersions, freePort, metadataBrokerIds } from './ports.js';

/**
 * SASL mechanisms the managed Apache Kafka can offer on its SASL listeners. OAUTHBEARER is Kafka's
 * unsecured-JWS validator (OAuthBearerUnsecuredValidatorCallbackHandler, the default when no other
 * is configured): it takes any unsigned JWT (`{"alg":"none"}`) with a `sub` and an unexpired `exp`,
 * for tests only; see unsecuredJwt.
 */
export type ManagedSaslMechanism = 'PLAIN' | 'SCRAM-SHA-256' | 'SCRAM-SHA-512' | 'OAUTHBEARER';

const isScram = (m: ManagedSaslMechanism) => m.startsWith('SCRAM-');

export interface ManagedSasl {
  /** Offered on the SASL_PLAINTEXT listener; default SCRAM-SHA-256 only. */
  mechanisms?: ManagedSaslMechanism[];
  /**
   * The users the listener accepts: SCRAM credentials are written into the cluster metadata when the
   * storage is formatted (`kafka-storage format --add-scram`), PLAIN users into server.properties.
   */
  users: { username: string; password: string }[];
}

/** ssl.client.auth: whether the broker asks TLS clients for a certificate. */
export type ManagedClientAuth = 'none' | 'requested' | 'required';

export interface ManagedTls {
  /**
   * The broker's certificate, PEM text or the path of a PEM file, optionally followed by the
   * intermediate CA certificates of its chain. Clients check it against the hosts they dial, so
   * for loopback it needs subjectAltName IP:127.0.0.1 (and DNS:localhost); see makeTestCertificates.
   */
  cert: string;
  /**
   * Its private key, PEM text or a path, unencrypted (PKCS#8, PKCS#1 or SEC1: kbench hands Kafka
   * PKCS#8, the only form its PEM key store reads).
   */
  key: string;
  /** CA certificates (PEM text or a path) the broker trusts for client certificates. Needed for client authentication. */
  ca?: string;
  /** ssl.client.auth of the SSL and SASL_SSL listeners. Default none. */
  clientAuth?: ManagedClientAuth;
  /**
   * Also a listener named MTLS (security protocol SSL, ssl.client.auth=required) on every node,
   * `mtlsBootstrap`, so one cluster serves TLS with and without client certificates. Needs `ca`.
   */
  mutualListener?: boolean;
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
  /**
   * Adds an SSL listener on every node (`sslBootstrap`) with this certificate, key and client
   * authentication (Kafka's PEM key and trust stores, files in each node's folder); with `sasl` too,
   * also a SASL_SSL listener (`saslSslBootstrap`), and with `tls.mutualListener` an MTLS one.
   */
  tls?: ManagedTls;
  /** Extra or overriding server configs, Kafka names, for every node. */
  serverProps?: Record<string, string | number | boolean>;
  /** JVM options of each node; default those of bin/kafka-server-start.sh (1 GB heap) and kafka-run-class.sh. */
  jvmArgs?: string[];
  /**
   * Runs the Prometheus JMX exporter java agent in every node's JVM (fetched from Maven Central on
   * first use), serving `metricsUrl` on loopback: bytes in and out, under-replicated partitions,
   * produce request time and the JVM's CPU (JMX_EXPORTER_CONFIG).
   */
  jmxExporter?: boolean;
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
  /** The SSL port, when started with `tls`. */
  sslPort: number | null;
  /** The SASL_SSL port, when started with `sasl` and `tls`. */
  saslSslPort: number | null;
  /** The MTLS port (SSL, client certificate required), when started with `tls.mutualListener`. */
  mtlsPort: number | null;
  /** The JMX exporter's `http://127.0.0.1:<port>/metrics`, when started with `jmxExporter`. */
  metricsUrl: string | null;
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
  /** Every node's SSL listener, or null when started without `tls`. */
  sslBootstrap: string | null;
  /** Every node's SASL_SSL listener, or null unless started with both `sasl` and `tls`. */
  saslSslBootstrap: string | null;
  /** Every node's MTLS listener (SSL, client certificate required), or null without `tls.mutualListener`. */
  mtlsBootstrap: string | null;
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
  /** SIGKILL to node `id`'s process group, as a crash; it stays down until `restart`. */
  kill(id: number): Promise<void>;
  /** SIGSTOP to node `id`'s process group, SIGCONT after `ms`; returns at once. */
  pause(id: number, ms: number): Promise<void>;
  /**
   * Starts node `id` again on its ports and data (killing it first if it runs); resolves once it
   * answers. While an earlier restart of the node is still starting it, this one waits for it first.
   */
  restart(id: number): Promise<void>;
  /** True while node `id`'s JVM runs (paused included). */
  running(id: number): boolean;
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
  sslPort?: number | null;
  saslSslPort?: number | null;
  mtlsPort?: number | null;
  metricsPort?: number | null;
}

/** Where a node with `tls` keeps the PEM files it serves: key and certificate chain, and the trusted CAs. */
export function tlsFiles(node: Pick<NodeLayout, 'dataDir'>): { keystore: string; truststore: string } {
  return {
    keystore: join(node.dataDir, 'tls-keystore.pem'),
    truststore: join(node.dataDir, 'tls-truststore.pem'),
  };
}

/** The server.properties of one node of a KRaft cluster on 127.0.0.1 whose nodes are all broker and controller. */
export function serverProperties(
  node: NodeLayout,
  cluster: NodeLayout[],
  options: { sasl?: ManagedSasl; tls?: ManagedTls; extra?: Record<string, string | number | boolean> } = {},
): string {
  const internalRf = Math.min(3, cluster.length);
  const { sasl, tls } = options;
  const listeners = [`PLAINTEXT://127.0.0.1:${node.port}`, `CONTROLLER://127.0.0.1:${node.controllerPort}`];
  const protocols = ['PLAINTEXT:PLAINTEXT', 'CONTROLLER:PLAINTEXT', 'SASL_PLAINTEXT:SASL_PLAINTEXT'];
  if (sasl && node.saslPort !== null) listeners.push(`SASL_PLAINTEXT://127.0.0.1:${node.saslPort}`);
  if (tls && node.sslPort) {
    listeners.push(`SSL://127.0.0.1:${node.sslPort}`);
    protocols.push('SSL:SSL');
  }
  if (tls && sasl && node.saslSslPort) {
    listeners.push(`SASL_SSL://127.0.0.1:${node.saslSslPort}`);
    protocols.push('SASL_SSL:SASL_SSL');
  }
  if (tls?.mutualListener && node.mtlsPort) {
    listeners.push(`MTLS://127.0.0.1:${node.mtlsPort}`);
    protocols.push('MTLS:SSL');
  }
  const props: Record<string, string | number | boolean> = {
    'process.roles': 'broker,controller',
    'node.id': node.id,
    'controller.quorum.voters': cluster.map((n) => `${n.id}@127.0.0.1:${n.controllerPort}`).join(','),
    listeners: listeners.join(','),
    'advertised.listeners': listeners.join(','),
    'controller.listener.names': 'CONTROLLER',
    'inter.broker.listener.name': 'PLAINTEXT',
    'listener.security.protocol.map': protocols.join(','),
    'log.dirs': join(node.dataDir, 'logs'),
    'num.partitions': 1,
    'offsets.topic.replication.factor': internalRf,
    'transaction.state.log.replication.factor': internalRf,
    'transaction.state.log.min.isr': Math.min(2, internalRf),
    'share.coordinator.state.topic.replication.factor': internalRf,
    'share.coordinator.state.topic.min.isr': Math.min(2, internalRf),
    // One member groups should not wait 3 s for others.
    'group.initial.rebalance.delay.ms': 0,
    ...(sasl ? saslProperties(sasl, tls ? ['sasl_plaintext', 'sasl_ssl'] : ['sasl_plaintext']) : {}),
    ...(tls ? tlsProperties(node, tls) : {}),
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

function saslProperties(sasl: ManagedSasl, listenerNames: string[]): Record<string, string> {
  const mechanisms = saslMechanisms(sasl);
  const props: Record<string, string> = { 'sasl.enabled.mechanisms': mechanisms.join(',') };
  for (const listener of listenerNames) {
    for (const mechanism of mechanisms) {
      const key = `listener.name.${listener}.${mechanism.toLowerCase()}.sasl.jaas.config`;
      if (mechanism === 'PLAIN') {
        const users = sasl.users.map((u) => `user_${u.username}=${jaasQuote(u.password)}`).join(' ');
        props[key] = `org.apache.kafka.common.security.plain.PlainLoginModule required ${users};`;
      } else if (mechanism === 'OAUTHBEARER') {
        // The broker's own login (a token it never uses on a listener clients reach) and, by default, the unsecured validator.
        props[key] =
          'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="kbench-broker";';
      } else {
        props[key] = 'org.apache.kafka.common.security.scram.ScramLoginModule required;';
      }
    }
  }
  return props;
}

/** PEM key and trust stores by file (written by startApacheKafka, see tlsFiles), client authentication per listener. */
function tlsProperties(node: NodeLayout, tls: ManagedTls): Record<string, string> {
  const files = tlsFiles(node);
  const props: Record<string, string> = {
    'ssl.keystore.type': 'PEM',
    'ssl.keystore.location': files.keystore,
    'ssl.client.auth': tls.clientAuth ?? 'none',
  };
  if (tls.ca !== undefined) {
    props['ssl.truststore.type'] = 'PEM';
    props['ssl.truststore.location'] = files.truststore;
  }
  if (tls.mutualListener) props['listener.name.mtls.ssl.client.auth'] = 'required';
  return props;
}

/** PEM text as is, or the contents of the file it names. */
function pemText(value: string, field: string): string {
  if (value.includes('-----BEGIN')) return value;
  try {
    return readFileSync(value, 'utf8');
  } catch (err) {
    throw new Error(
      `startApacheKafka: ${field}: cannot read ${value} (${(err as NodeJS.ErrnoException).code ?? err})`,
    );
  }
}

/**
 * The PEM files of a node's key store (its key as PKCS#8, then the certificate chain) and trust
 * store; throws naming the field when the material is unusable.
 */
function tlsStores(tls: ManagedTls): { keystore: string; truststore: string | null } {
  const cert = pemText(tls.cert, 'tls.cert');
  if (!cert.includes('-----BEGIN CERTIFICATE-----')) {
    throw new Error('startApacheKafka: tls.cert: no PEM certificate (-----BEGIN CERTIFICATE-----) in it');
  }
  let key: string;
  try {
    key = createPrivateKey(pemText(tls.key, 'tls.key')).export({ type: 'pkcs8', format: 'pem' }).toString();
  } catch (err) {
    if (err instanceof Error && err.message.startsWith('startApacheKafka:')) throw err;
    throw new Error(
      `startApacheKafka: tls.key: not an unencrypted PEM private key (${(err as Error).message})`,
    );
  }
  const ca = tls.ca === undefined ? null : pemText(tls.ca, 'tls.ca');
  if (ca !== null && !ca.includes('-----BEGIN CERTIFICATE-----')) {
    throw new Error('startApacheKafka: tls.ca: no PEM certificate (-----BEGIN CERTIFICATE-----) in it');
  }
  if (ca === null && (tls.mutualListener || (tls.clientAuth ?? 'none') !== 'none')) {
    throw new Error(
      'startApacheKafka: tls.ca: needed to check client certificates (tls.clientAuth or tls.mutualListener)',
    );
  }
  return {
    keystore: `${key.trimEnd()}\n${cert.trimEnd()}\n`,
    truststore: ca === null ? null : `${ca.trimEnd()}\n`,
  };
}

/**
 * Users whose credentials `kafka-storage format --add-scram` can take. Its parser splits
 * `[name=..,password=..]` at every comma, quotes or not, and strips one pair of surrounding quotes
 * from a value; kbench quotes every value, so only a comma is out of reach.
 */
function checkSaslUsers(sasl: ManagedSasl): void {
  const scram = saslMechanisms(sasl).some(isScram);
  sasl.users.forEach((user, i) => {
    if (!user.username) throw new Error(`startApacheKafka: sasl.users[${i}].username: must not be empty`);
    if (!scram) return;
    for (const field of ['username', 'password'] as const) {
      if (user[field].includes(',')) {
        throw new Error(
          `startApacheKafka: sasl.users[${i}].${field}: must not contain a comma for SCRAM (kafka-storage format --add-scram cannot take one)`,
        );
      }
    }
  });
}

/**
 * A Kafka cluster id: 16 random bytes in URL-safe base64 without padding, as `kafka-storage random-uuid`
 * prints. Like Kafka's own Uuid.randomUuid(), never one starting with '-', which the format tool's
 * argument parser would take for an option (1 in 64 ids did).
 */
export function newClusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
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
  // Checked before anything is written or started.
  if (options.sasl) checkSaslUsers(options.sasl);
  const stores = options.tls ? tlsStores(options.tls) : null;
  mkdirSync(options.dataDir, { recursive: true });
  const taken = new Set<number>();
  const clientPorts = await ports(count, options.port || undefined, taken);
  const controllerPorts = await ports(count, options.controllerPort || undefined, taken);
  const saslPorts = options.sasl ? await ports(count, undefined, taken) : [];
  const sslPorts = options.tls ? await ports(count, undefined, taken) : [];
  const saslSslPorts = options.tls && options.sasl ? await ports(count, undefined, taken) : [];
  const mtlsPorts = options.tls?.mutualListener ? await ports(count, undefined, taken) : [];
  const metricsPorts = options.jmxExporter ? await ports(count, undefined, taken) : [];
  const exporter = options.jmxExporter ? await ensureJmxExporter() : null;
  const layout: NodeLayout[] = clientPorts.map((port, i) => ({
    id: i + 1,
    // One node keeps the single-node layout of earlier versions: everything in dataDir itself.
    dataDir: count === 1 ? options.dataDir : join(options.dataDir, `node-${i + 1}`),
    port,
    controllerPort: controllerPorts[i] as number,
    saslPort: saslPorts[i] ?? null,
    sslPort: sslPorts[i] ?? null,
    saslSslPort: saslSslPorts[i] ?? null,
    mtlsPort: mtlsPorts[i] ?? null,
    metricsPort: metricsPorts[i] ?? null,
  }));
  const logLevel = options.logLevel ?? 'warn';
  const clusterId = existingClusterId(layout) ?? newClusterId();
  for (const node of layout) {
    mkdirSync(node.dataDir, { recursive: true });
    const config = join(node.dataDir, 'server.properties');
    if (stores) {
      const files = tlsFiles(node);
      writeFileSync(files.keystore, stores.keystore, { mode: 0o600 });
      if (stores.truststore !== null) writeFileSync(files.truststore, stores.truststore, { mode: 0o600 });
    }
    writeFileSync(
      config,
      serverProperties(node, layout, {
        ...(options.sasl ? { sasl: options.sasl } : {}),
        ...(options.tls ? { tls: options.tls } : {}),
        ...(options.serverProps ? { extra: options.serverProps } : {}),
      }),
      { mode: 0o600 },
    );
    if (!existsSync(join(node.dataDir, 'logs', 'meta.properties'))) {
      await formatStorage(config, clusterId, options.sasl, logLevel);
    }
  }

  const started: RunningNode[] = [];
  const pauses = new Set<NodeJS.Timeout>();
  /** A restart of node index i that has not answered yet. */
  const restarting = new Map<number, Promise<void>>();
  /** Until the restart of node index i under way (if any) has ended, however it ended. */
  const restarted = async (i: number): Promise<void> => {
    await restarting.get(i)?.catch(() => undefined);
  };
  const stop = async (graceMs = 10_000): Promise<void> => {
    for (const timer of pauses) clearTimeout(timer);
    pauses.clear();
    // A JVM that a restart is starting is not in `started` until launched: stopping before it is
    // would leave it running.
    await Promise.all([...restarting.keys()].map(restarted));
    await Promise.all(started.map((node) => node.stop(graceMs)));
  };
  const jvmArgsOf = (node: NodeLayout) => [
    ...(options.jvmArgs ?? SERVER_JVM_ARGS),
    ...(exporter && node.metricsPort
      ? [`-javaagent:${exporter.jar}=127.0.0.1:${node.metricsPort}:${exporter.config}`]
      : []),
  ];
  try {
    for (const node of layout) started.push(await launch(node, jvmArgsOf(node), logLevel));
    const deadline = Date.now() + (options.startTimeoutMs ?? 90_000 + 30_000 * (count - 1));
    for (const node of started) await node.ready(deadline);
    await allBrokersListed(started, deadline);
  } catch (err) {
    await stop();
    throw err;
  }
  const first = started[0] as RunningNode;
  const nodes = started.map((n) => n.info);
  const nodeIndex = (id: number): number => {
    const i = layout.findIndex((n) => n.id === id);
    if (i < 0) throw new Error(`Apache Kafka has no node ${id} (nodes 1 to ${layout.length})`);
    return i;
  };
  return {
    bootstrap: nodes.map((n) => n.bootstrap).join(','),
    saslBootstrap: options.sasl ? nodes.map((n) => `127.0.0.1:${n.saslPort}`).join(',') : null,
    sslBootstrap: options.tls ? nodes.map((n) => `127.0.0.1:${n.sslPort}`).join(',') : null,
    saslSslBootstrap:
      options.tls && options.sasl ? nodes.map((n) => `127.0.0.1:${n.saslSslPort}`).join(',') : null,
    mtlsBootstrap: options.tls?.mutualListener ? nodes.map((n) => `127.0.0.1:${n.mtlsPort}`).join(',') : null,
    port: first.info.port,
    controllerPort: first.info.controllerPort,
    pid: first.info.pid,
    logFile: first.info.logFile,
    nodes,
    stop,
    kill: async (id) => {
      const i = nodeIndex(id);
      // A kill during a restart kills what the restart started, once it has: killing the old JVM
      // (already gone) would leave the new one running while the fault timeline records a kill.
      await restarted(i);
      await (started[i] as RunningNode).kill();
    },
    pause: async (id, ms) => {
      const node = started[nodeIndex(id)] as RunningNode;
      if (!node.running()) throw new Error(`Apache Kafka node ${id} is down`);
      signalGroup(node.info.pid, 'SIGSTOP');
      const timer = setTimeout(() => {
        pauses.delete(timer);
        signalGroup(node.info.pid, 'SIGCONT');
      }, ms);
      pauses.add(timer);
    },
    restart: async (id) => {
      const i = nodeIndex(id);
      // A restart of a node still starting from an earlier restart waits for that start to end first:
      // killing a JVM mid-start would fail the earlier restart (a fresh-clone CI run saw a rolling
      // restart kill a node whose restart 22 s before had not answered yet on a loaded machine).
      const earlier = restarted(i);
      const start = (async () => {
        await earlier;
        await (started[i] as RunningNode).kill();
        const node = await launch(layout[i] as NodeLayout, jvmArgsOf(layout[i] as NodeLayout), logLevel);
        started[i] = node;
        nodes[i] = node.info;
        try {
          await node.ready(Date.now() + (options.startTimeoutMs ?? 90_000));
        } catch (err) {
          await node.stop(0);
          throw err;
        }
      })();
      restarting.set(i, start);
      try {
        await start;
      } finally {
        if (restarting.get(i) === start) restarting.delete(i);
      }
    },
    running: (id) => (started[nodeIndex(id)] as RunningNode).running(),
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
        .filter(isScram)
        .flatMap((m) =>
          // Quoted: the parser strips one pair of quotes, so a value may itself start and end with one.
          sasl.users.map((u) => ['--add-scram', `${m}=[name="${u.username}",password="${u.password}"]`]),
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
  /** SIGKILL to its process group at once, as a crash; resolves when the JVM has exited. */
  kill(): Promise<void>;
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
      // A paused node hears SIGTERM only once it runs again.
      signalGroup(pid, 'SIGCONT');
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
  const kill = async (): Promise<void> => {
    signalGroup(pid, 'SIGKILL');
    await exited;
    process.removeListener('exit', killNow);
  };
  const info: ApacheKafkaNode = {
    id: node.id,
    bootstrap: `127.0.0.1:${node.port}`,
    port: node.port,
    controllerPort: node.controllerPort,
    saslPort: node.saslPort,
    sslPort: node.sslPort ?? null,
    saslSslPort: node.saslSslPort ?? null,
    mtlsPort: node.mtlsPort ?? null,
    metricsUrl: node.metricsPort ? `http://127.0.0.1:${node.metricsPort}/metrics` : null,
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
  return { info, ready, running: () => isRunning(child), stop, kill };
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
