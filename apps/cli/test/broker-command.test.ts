// `kbench broker` as the README runs it: a spawned process with no TTY that serves until SIGTERM,
// creates topics on first use as Kafka does, keeps what it acknowledged under --fsync batch through a kill -9
// and a restart, and names a busy port instead of printing a stack.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { freePorts, MAIN, REPO, runKbench } from './helpers.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Started {
  child: ChildProcess;
  port: number;
  exited: Promise<[number | null, NodeJS.Signals | null]>;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const clean of cleanups.splice(0).reverse()) await clean();
});

async function home(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'kbench-broker-cmd-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Spawns `kbench broker ARGS` with stdin, stdout and stderr as pipes (no TTY), its log in `dir`. */
async function startBrokerCommand(args: string[], dir?: string): Promise<Started> {
  dir ??= await home();
  // --nodes N listens on port .. port + N - 1.
  const nodes = args.includes('--nodes') ? Number(args[args.indexOf('--nodes') + 1]) : 1;
  const port = await freePorts(nodes);
  const child = spawn(
    process.execPath,
    [MAIN, 'broker', '--port', String(port), '--data-dir', dir, ...args],
    {
      cwd: REPO,
      env: { ...process.env, KBENCH_HOME: dir },
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  });
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr += String(chunk);
  });
  const lines = createInterface({ input: child.stdout! });
  const first = await Promise.race([
    once(lines, 'line').then(([line]) => String(line)),
    exited.then(([code]) => `(exited with ${code})`),
  ]);
  expect(first, `kbench broker's stderr: ${stderr}`).toMatch(
    new RegExp(`^node 1 127\\.0\\.0\\.1:${port} pid \\d+$`),
  );
  return { child, port, exited };
}

function kcat(args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile('kcat', args, { timeout: 30_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
    // kcat -L reads no input and may exit before it is written: that EPIPE is no failure (the
    // exit code and output say how it went), and unheard it failed the whole test file.
    child.stdin?.on('error', () => {});
    child.stdin?.end(input ?? '');
  });
}

/** kcat produces `lines` to `topic` (which nobody created) and reads them back from the beginning. */
async function roundTrip(bootstrap: string, topic: string, lines: string[]): Promise<void> {
  const produced = await kcat(['-b', bootstrap, '-P', '-t', topic, '-m', '20'], `${lines.join('\n')}\n`);
  expect(produced.stderr).not.toMatch(/Unknown topic/i);
  expect(produced.code).toBe(0);
  const consume = ['-b', bootstrap, '-C', '-t', topic, '-o', 'beginning', '-c', String(lines.length), '-e'];
  const consumed = await kcat([...consume, '-m', '20']);
  expect(consumed.stdout.trim().split('\n')).toEqual(lines);
}

describe('kbench broker, spawned as a user runs it', () => {
  it('serves past its first seconds, creates a topic on first use for kcat, and exits 0 on SIGTERM', async () => {
    const { child, port, exited } = await startBrokerCommand([]);
    await sleep(5000);
    expect(child.exitCode).toBeNull(); // it exited at once before: nothing kept Node alive
    // A topic nobody created: Kafka's default auto.create.topics.enable=true creates it.
    await roundTrip(`127.0.0.1:${port}`, 'first-use', ['one', 'two', 'three']);
    child.kill('SIGTERM');
    const [code, signal] = await exited;
    expect({ code, signal }).toEqual({ code: 0, signal: null });
  }, 90_000);

  it('--fsync batch: every record kcat had acknowledged (acks=all) is back after kill -9 and a restart', async () => {
    const dir = await home();
    const first = await startBrokerCommand(['--fsync', 'batch'], dir);
    const lines = Array.from({ length: 5000 }, (_, i) => `record-${i}`);
    const produced = await kcat(
      ['-b', `127.0.0.1:${first.port}`, '-P', '-t', 'durable', '-X', 'acks=all', '-m', '20'],
      `${lines.join('\n')}\n`,
    );
    expect(produced.code, produced.stderr).toBe(0); // kcat -P exits 0 once every record is acknowledged
    first.child.kill('SIGKILL');
    expect((await first.exited)[1]).toBe('SIGKILL');
    const again = await startBrokerCommand(['--fsync', 'batch'], dir);
    const consume = [
      '-b',
      `127.0.0.1:${again.port}`,
      '-C',
      '-t',
      'durable',
      '-o',
      'beginning',
      '-e',
      '-m',
      '20',
    ];
    const consumed = await kcat(consume);
    // Sorted: the order across partitions is the consumer's.
    expect(consumed.stdout.trim().split('\n').sort()).toEqual([...lines].sort());
    again.child.kill('SIGTERM');
    expect((await again.exited)[0]).toBe(0);
  }, 90_000);

  it('--no-auto-create-topics leaves unknown topics unknown', async () => {
    const { child, port, exited } = await startBrokerCommand(['--no-auto-create-topics']);
    const listed = await kcat(['-b', `127.0.0.1:${port}`, '-L', '-t', 'never-made', '-m', '10']);
    expect(listed.stdout).toMatch(/never-made.*Unknown topic|Broker: Unknown topic/is);
    child.kill('SIGTERM');
    expect((await exited)[0]).toBe(0);
  }, 60_000);

  it('a cluster of 3 nodes in one process also creates topics on first use', async () => {
    const { child, port, exited } = await startBrokerCommand(['--nodes', '3']);
    await roundTrip(`127.0.0.1:${port}`, 'cluster-first-use', ['a', 'b']);
    child.kill('SIGTERM');
    expect((await exited)[0]).toBe(0);
  }, 90_000);
});

describe('a busy port', () => {
  let holder: Server | undefined;
  afterEach(async () => {
    if (holder) await new Promise((resolve) => holder!.close(resolve));
    holder = undefined;
  });

  async function holdPort(): Promise<number> {
    holder = createServer();
    holder.listen(0, '127.0.0.1');
    await once(holder, 'listening');
    return (holder.address() as { port: number }).port;
  }

  it('kbench broker names the port and exits 1 without a stack trace', async () => {
    const port = await holdPort();
    const dir = await home();
    const result = await runKbench(dir, ['broker', '--port', String(port), '--data-dir', dir], 60_000);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`port ${port}`);
    expect(result.stderr).toMatch(/already in use/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  }, 60_000);

  it('kbench serve names the port and exits 1 without a stack trace', async () => {
    const port = await holdPort();
    const dir = await home();
    const result = await runKbench(dir, ['serve', '--port', String(port)], 60_000);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`port ${port}`);
    expect(result.stderr).toMatch(/already in use/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  }, 60_000);
});
