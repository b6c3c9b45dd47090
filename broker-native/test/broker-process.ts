// Brokers under test in processes of their own: the standalone binary, or the addon inside a
// child Node process. Either may be aborted by what a test sends; the test runner survives.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { BrokerLimits, BrokerOptions } from '@kbench/broker-native';

const BINARY = join(import.meta.dirname, '..', 'target', 'release', 'kbench-broker');
const IN_NODE_SCRIPT = join(import.meta.dirname, 'in-node-broker.mjs');

/** The binary's flag for each of the addon's limits. */
const FLAGS: Record<keyof BrokerLimits, string> = {
  maxPartitionsPerTopic: '--max-partitions-per-topic',
  maxPartitions: '--max-partitions',
  maxConnections: '--max-connections',
  maxConnectionsPerIp: '--max-connections-per-ip',
  connectionsMaxIdleMs: '--connections-max-idle-ms',
  frameTimeoutMs: '--frame-timeout-ms',
  maxFrameBytes: '--max-frame-bytes',
  queuedMaxRequestBytes: '--queued-max-request-bytes',
};

function limitFlags(limits: BrokerLimits): string[] {
  return Object.entries(limits).flatMap(([name, value]) => [
    FLAGS[name as keyof BrokerLimits],
    String(value),
  ]);
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export class BrokerProcess {
  private exit: Exit | null = null;
  private stderrTail = '';
  readonly exited: Promise<Exit>;

  constructor(
    readonly kind: 'binary' | 'in-node',
    private readonly child: ChildProcess,
    readonly dataDir: string,
    readonly port: number,
  ) {
    this.exited = new Promise((resolve) => {
      const record = (code: number | null, signal: NodeJS.Signals | null) => {
        this.exit ??= { code, signal };
        resolve(this.exit);
      };
      if (child.exitCode !== null || child.signalCode !== null) record(child.exitCode, child.signalCode);
      else child.once('exit', record);
    });
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (text: string) => {
      // The first lines (an abort's message) and the end are what explain a death.
      this.stderrTail = (this.stderrTail + text).slice(-8192);
    });
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** null while it runs. */
  get exitStatus(): Exit | null {
    return this.exit;
  }

  get stderr(): string {
    return this.stderrTail;
  }

  /** How it ended and what it said, for a failure message; waits up to a second for the exit. */
  async describeDeath(): Promise<string> {
    const exit = await Promise.race([this.exited, sleep(1000).then(() => null)]);
    if (!exit) return `the ${this.kind} broker (pid ${this.pid}) is still running but did not answer`;
    const how = exit.signal ? `signal ${exit.signal}` : `exit code ${exit.code}`;
    return `the ${this.kind} broker (pid ${this.pid}) died (${how}); stderr: ${firstLines(this.stderrTail, 3)}`;
  }

  /** SIGTERM, then SIGKILL if it has not exited within 10 s. */
  async stop(): Promise<void> {
    if (this.exit) return;
    this.child.kill('SIGTERM');
    const exited = await Promise.race([this.exited, sleep(10_000).then(() => null)]);
    if (!exited) {
      this.child.kill('SIGKILL');
      await this.exited;
    }
  }
}

function firstLines(text: string, n: number): string {
  return text.trim().split('\n').slice(0, n).join(' | ') || '(nothing)';
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Resolves with the child's first stdout line, or rejects with its stderr if it exits first. */
async function firstLine(child: ChildProcess, what: string): Promise<string> {
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  const collect = (text: string) => {
    stderr += text;
  };
  child.stderr?.on('data', collect);
  const lines = createInterface({ input: child.stdout! });
  try {
    return await new Promise<string>((resolve, reject) => {
      lines.once('line', resolve);
      child.once('exit', (code, signal) =>
        reject(new Error(`${what} exited (${signal ?? `code ${code}`}) before listening: ${stderr.trim()}`)),
      );
      child.once('error', reject);
    });
  } finally {
    child.stderr?.off('data', collect);
  }
}

/** The standalone kbench-broker on an ephemeral port, with `limits` as flags. */
export async function launchBinary(dataDir: string, limits: BrokerLimits = {}): Promise<BrokerProcess> {
  if (!existsSync(BINARY)) throw new Error(`${BINARY} is missing: run npm run build first`);
  const child = spawn(BINARY, ['--port', '0', '--data-dir', dataDir, ...limitFlags(limits)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const line = await firstLine(child, 'kbench-broker');
  const match = /^node 1 127\.0\.0\.1:(\d+) pid (\d+)$/.exec(line);
  if (!match) throw new Error(`kbench-broker printed ${JSON.stringify(line)}`);
  return new BrokerProcess('binary', child, dataDir, Number(match[1]));
}

/** startBroker in a child Node process, with `limits` as its options' limits. */
export async function launchInNode(dataDir: string, limits: BrokerLimits = {}): Promise<BrokerProcess> {
  const options: BrokerOptions = { dataDir, port: 0, limits };
  const child = spawn(process.execPath, [IN_NODE_SCRIPT, JSON.stringify(options)], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const line = await firstLine(child, 'the in-Node broker');
  const match = /^port (\d+)$/.exec(line);
  if (!match) throw new Error(`the in-Node broker printed ${JSON.stringify(line)}`);
  return new BrokerProcess('in-node', child, dataDir, Number(match[1]));
}

/** Resident and virtual size of a process, in bytes, from /proc/<pid>/status. */
export function memoryOf(pid: number): { rss: number; virtual: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status);
    if (!match) throw new Error(`no ${field} in /proc/${pid}/status`);
    return Number(match[1]) * 1024;
  };
  return { rss: kib('VmRSS'), virtual: kib('VmSize') };
}

/** Connections to 127.0.0.1:`port` still in SYN_RECV (handshake not completed), from /proc/net/tcp. */
export function handshakesInProgress(port: number): number {
  const local = `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  const SYN_RECV = '03';
  return readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .slice(1)
    .filter((line) => {
      const fields = line.trim().split(/\s+/);
      return fields[1] === local && fields[3] === SYN_RECV;
    }).length;
}
