// `kbench broker --metrics 127.0.0.1:0`, spawned as the README runs it: after its node line it prints
// where GET /metrics is served, and a Prometheus scrape there counts what kcat produced. A bad
// --metrics value is a usage error (exit 2) naming the flag.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { freePorts, MAIN, REPO, runKbench } from './helpers.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const clean of cleanups.splice(0).reverse()) await clean();
});

async function home(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'kbench-broker-metrics-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Spawns `kbench broker ... --metrics 127.0.0.1:0`; returns its node lines and metrics address. */
async function startWithMetrics(
  args: string[],
): Promise<{ child: ChildProcess; nodes: string[]; metrics: string }> {
  const dir = await home();
  // --nodes N listens on port .. port + N - 1.
  const nodeCount = args.includes('--nodes') ? Number(args[args.indexOf('--nodes') + 1]) : 1;
  const port = await freePorts(nodeCount);
  const child = spawn(
    process.execPath,
    [MAIN, 'broker', '--port', String(port), '--data-dir', dir, '--metrics', '127.0.0.1:0', ...args],
    { cwd: REPO, env: { ...process.env, KBENCH_HOME: dir }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const exited = once(child, 'exit');
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
  });
  const nodes: string[] = [];
  for await (const line of createInterface({ input: child.stdout! })) {
    const metrics = /^metrics (\S+)$/.exec(line)?.[1];
    if (metrics) return { child, nodes, metrics };
    expect(line).toMatch(/^node \d+ 127\.0\.0\.1:\d+ pid \d+$/);
    nodes.push(line);
  }
  throw new Error('kbench broker exited before printing its metrics address');
}

/** One sample's value from an exposition, by its name and labels as written. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

function kcatProduce(bootstrap: string, topic: string, lines: string[]): Promise<number> {
  return new Promise((resolve) => {
    const child = execFile(
      'kcat',
      ['-b', bootstrap, '-P', '-t', topic, '-m', '20'],
      { timeout: 30_000 },
      (err) => resolve(err ? 1 : 0),
    );
    child.stdin?.end(`${lines.join('\n')}\n`);
  });
}

describe('kbench broker --metrics', () => {
  it('prints the metrics address after the node line, and a scrape counts what kcat produced', async () => {
    const { nodes, metrics } = await startWithMetrics([]);
    expect(nodes).toHaveLength(1);
    expect(metrics).toMatch(/^127\.0\.0\.1:\d+$/);
    const bootstrap = /127\.0\.0\.1:\d+/.exec(nodes[0]!)![0];
    expect(await kcatProduce(bootstrap, 'watched', ['a', 'b', 'c'])).toBe(0);
    const response = await fetch(`http://${metrics}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await response.text();
    expect(text).toContain('# TYPE kbench_broker_records_in_total counter\n');
    expect(sample(text, 'kbench_broker_records_in_total{node="1"}')).toBe(3);
    expect(sample(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect((await fetch(`http://${metrics}/`)).status).toBe(404);
  });

  it('a cluster in one process serves each node under its label', async () => {
    const { nodes, metrics } = await startWithMetrics(['--nodes', '2']);
    expect(nodes).toHaveLength(2);
    const text = await (await fetch(`http://${metrics}/metrics`)).text();
    expect(sample(text, 'kbench_broker_partitions{node="1"}')).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'kbench_broker_partitions{node="2"}')).toBeGreaterThanOrEqual(0);
  });

  it('a bad address, or --metrics with --processes, is exit 2 naming the flag', async () => {
    const dir = await home();
    const bad = await runKbench(dir, ['broker', '--data-dir', dir, '--metrics', '9644']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--metrics must be HOST:PORT');
    const processes = await runKbench(dir, [
      'broker',
      '--data-dir',
      dir,
      '--processes',
      '--metrics',
      '127.0.0.1:0',
    ]);
    expect(processes.code).toBe(2);
    expect(processes.stderr).toContain('--metrics');
  });
});
