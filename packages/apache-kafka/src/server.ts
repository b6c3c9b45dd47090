// A real single-node Apache Kafka 4.3.1 (KRaft, broker and controller in one JVM) on loopback.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { KafkaToolError, tail } from './errors.js';
import { javaArgs, type LogLevel, runKafkaTool } from './java.js';
import { answersApiVersions, freePort } from './ports.js';

export interface StartApacheKafkaOptions {
  /** Holds server.properties, the log dirs (`logs/`) and the JVM's output (`server.log`). Reused if already formatted. */
  dataDir: string;
  /** The PLAINTEXT port for clients; 0 or absent picks a free one. */
  port?: number;
  /** The CONTROLLER port; 0 or absent picks a free one. */
  controllerPort?: number;
  /** Extra or overriding server configs, Kafka names. */
  serverProps?: Record<string, string | number | boolean>;
  /** JVM options; default those of bin/kafka-server-start.sh (1 GB heap) and kafka-run-class.sh. */
  jvmArgs?: string[];
  logLevel?: LogLevel;
  /** How long to wait for the broker to answer requests. Default 90 s. */
  startTimeoutMs?: number;
}

export interface ApacheKafka {
  /** `127.0.0.1:<port>`. */
  bootstrap: string;
  port: number;
  controllerPort: number;
  pid: number;
  /** The JVM's stdout and stderr. */
  logFile: string;
  /** SIGTERM to the JVM's process group, then SIGKILL if it has not exited after `graceMs` (default 10 s). */
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

/** The server.properties of a one-node KRaft cluster listening on 127.0.0.1 only. */
export function serverProperties(
  dataDir: string,
  port: number,
  controllerPort: number,
  extra: Record<string, string | number | boolean> = {},
): string {
  const props: Record<string, string | number | boolean> = {
    'process.roles': 'broker,controller',
    'node.id': 1,
    'controller.quorum.bootstrap.servers': `127.0.0.1:${controllerPort}`,
    listeners: `PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
    'advertised.listeners': `PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
    'controller.listener.names': 'CONTROLLER',
    'inter.broker.listener.name': 'PLAINTEXT',
    'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    'log.dirs': join(dataDir, 'logs'),
    'num.partitions': 1,
    'offsets.topic.replication.factor': 1,
    'transaction.state.log.replication.factor': 1,
    'transaction.state.log.min.isr': 1,
    'share.coordinator.state.topic.replication.factor': 1,
    'share.coordinator.state.topic.min.isr': 1,
    // One member groups should not wait 3 s for others.
    'group.initial.rebalance.delay.ms': 0,
    ...extra,
  };
  const lines = Object.entries(props).map(([key, value]) => `${key}=${value}`);
  return `# Written by @kbench/apache-kafka startApacheKafka\n${lines.join('\n')}\n`;
}

/** A Kafka cluster id: 16 random bytes in URL-safe base64 without padding, as `kafka-storage random-uuid` prints. */
export function newClusterId(): string {
  return randomBytes(16).toString('base64url');
}

/** Formats (first time only) and starts Apache Kafka; resolves once it answers ApiVersions on its client port. */
export async function startApacheKafka(options: StartApacheKafkaOptions): Promise<ApacheKafka> {
  const { dataDir } = options;
  mkdirSync(dataDir, { recursive: true });
  const port = options.port || (await freePort());
  let controllerPort = options.controllerPort || (await freePort());
  while (controllerPort === port) controllerPort = await freePort();
  const config = join(dataDir, 'server.properties');
  writeFileSync(config, serverProperties(dataDir, port, controllerPort, options.serverProps));
  const logLevel = options.logLevel ?? 'warn';

  if (!existsSync(join(dataDir, 'logs', 'meta.properties'))) {
    const format = await runKafkaTool(
      'kafka.tools.StorageTool',
      ['format', '--standalone', '--cluster-id', newClusterId(), '--config', config],
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

  const logFile = join(dataDir, 'server.log');
  const out = openSync(logFile, 'a');
  const argv = await javaArgs('kafka.Kafka', [config], options.jvmArgs ?? SERVER_JVM_ARGS, logLevel);
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

  const stop = async (graceMs = 10_000): Promise<void> => {
    if (!isRunning(child)) {
      process.removeListener('exit', killNow);
      signalGroup(pid, 'SIGKILL'); // anything left in its group
      return;
    }
    signalGroup(pid, 'SIGTERM');
    const timer = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), graceMs));
    if ((await Promise.race([exited, timer])) === 'timeout') {
      signalGroup(pid, 'SIGKILL');
      await exited;
    }
    signalGroup(pid, 'SIGKILL');
    process.removeListener('exit', killNow);
  };

  const deadline = Date.now() + (options.startTimeoutMs ?? 90_000);
  for (;;) {
    if (!isRunning(child)) {
      await stop();
      throw new Error(
        `Apache Kafka exited during startup (${child.exitCode ?? child.signalCode}):\n${logTail(logFile)}`,
      );
    }
    if (await answersApiVersions('127.0.0.1', port)) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`Apache Kafka did not answer on 127.0.0.1:${port} in time:\n${logTail(logFile)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return { bootstrap: `127.0.0.1:${port}`, port, controllerPort, pid, logFile, stop };
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
