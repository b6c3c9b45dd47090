// The bundled broker's standalone binary (kbench-broker), one OS process per call, for compat tests and benches.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';

export interface BundledBroker {
  bootstrap: string;
  port: number;
  pid: number;
  /** SIGTERM, then SIGKILL after `graceMs` (default 5 s). */
  stop(graceMs?: number): Promise<void>;
}

/** `$KBENCH_BROKER_BINARY`, or broker-native/target/release/kbench-broker (found through its workspace package). */
export function bundledBrokerBinary(): string {
  const fromEnv = process.env.KBENCH_BROKER_BINARY;
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  const packageJson = createRequire(import.meta.url).resolve('@kbench/broker-native/package.json');
  const binary = join(dirname(packageJson), 'target', 'release', 'kbench-broker');
  if (!existsSync(binary)) throw new Error(`${binary} is missing: run npm run build first`);
  return binary;
}

/** Starts kbench-broker on `port` (0: any free port) and waits for its `node 1 127.0.0.1:<port> pid <pid>` line. */
export async function startBundledBroker(options: {
  dataDir: string;
  port?: number;
  args?: string[];
}): Promise<BundledBroker> {
  const args = ['--port', String(options.port ?? 0), '--data-dir', options.dataDir, ...(options.args ?? [])];
  const child = spawn(bundledBrokerBinary(), args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const killNow = () => child.kill('SIGKILL');
  process.once('exit', killNow);
  const lines = createInterface({ input: child.stdout! });
  const first = await Promise.race([
    once(lines, 'line').then(([line]) => line as string),
    once(child, 'exit').then(([code]) => `(exited with ${code})`),
  ]);
  const match = /^node 1 127\.0\.0\.1:(\d+) pid (\d+)$/.exec(first);
  if (!match) {
    killNow();
    throw new Error(`kbench-broker did not start: ${first}`);
  }
  lines.on('line', () => {}); // keep draining stdout
  const port = Number(match[1]);
  return {
    bootstrap: `127.0.0.1:${port}`,
    port,
    pid: child.pid!,
    stop: (graceMs = 5000) =>
      stopChild(child, graceMs).finally(() => process.removeListener('exit', killNow)),
  };
}

async function stopChild(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}
