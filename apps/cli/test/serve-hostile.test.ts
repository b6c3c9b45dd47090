// `kbench serve` runs the bundled broker inside its own process while a run is going: a hostile packet
// sent to that broker must not take the workbench down with it (issue 13).
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAIN, REPO } from './helpers.js';

/** Metadata v1 whose topic array claims 0x7fffffff entries; aborts a broker that trusts the count. */
const HUGE_METADATA_REQUEST = Buffer.from('00000013000300010000004d000570726f62657fffffff', 'hex');

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** TCP ports `pid` listens on: its socket fds matched against the LISTEN entries of /proc/<pid>/net. */
function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (match) inodes.add(match[1]!);
    } catch {
      // The fd closed between listing and reading.
    }
  }
  const LISTEN = '0A';
  const ports: number[] = [];
  for (const table of ['tcp', 'tcp6']) {
    for (const line of readFileSync(`/proc/${pid}/net/${table}`, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      const [local, state, inode] = [fields[1], fields[3], fields[9]];
      if (state === LISTEN && inode && inodes.has(inode) && local) {
        ports.push(Number.parseInt(local.split(':')[1]!, 16));
      }
    }
  }
  return ports;
}

/** Polls `check` every 100 ms until it returns a value, or throws `what` after `ms`. */
async function waitFor<T>(what: string, ms: number, check: () => Promise<T | undefined>): Promise<T> {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(100)) {
    const value = await check();
    if (value !== undefined) return value;
  }
  throw new Error(`gave up waiting for ${what} after ${ms / 1000} s`);
}

/** Sends `bytes` to 127.0.0.1:`port`; resolves once the peer answers or closes, or after 10 s. */
function sendRaw(port: number, bytes: Buffer): Promise<void> {
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve();
    };
    const timer = setTimeout(done, 10_000);
    socket.on('error', done);
    socket.once('data', done);
    socket.once('close', done);
    socket.connect(port, '127.0.0.1', () => socket.write(bytes));
  });
}

describe('kbench serve with a run on the bundled broker', () => {
  let home: string;
  let serve: ChildProcess;
  let stderr = '';
  let base = '';
  let httpPort = 0;

  /** What became of the serve process, for failure messages. */
  const fate = () =>
    serve.exitCode === null && serve.signalCode === null
      ? 'kbench serve is still running'
      : `kbench serve died (${serve.signalCode ?? `exit code ${serve.exitCode}`}); stderr: ${stderr.trim().split('\n').slice(0, 3).join(' | ')}`;

  beforeAll(async () => {
    home = await mkdtemp(path.join(os.tmpdir(), 'kbench-serve-hostile-'));
    // The run's broker keeps its data under TMPDIR; a serve process that dies leaves it there.
    const tmp = path.join(home, 'tmp');
    await mkdir(tmp);
    serve = spawn(process.execPath, [MAIN, 'serve', '--port', '0'], {
      cwd: REPO,
      env: { ...process.env, KBENCH_HOME: home, TMPDIR: tmp },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    serve.stderr!.setEncoding('utf8');
    serve.stderr!.on('data', (text: string) => {
      stderr += text;
    });
    const [line] = (await once(createInterface({ input: serve.stdout! }), 'line')) as [string];
    const match = /^kbench workbench at (http:\/\/127\.0\.0\.1:(\d+))/.exec(line);
    if (!match) throw new Error(`kbench serve printed ${JSON.stringify(line)}; stderr: ${stderr}`);
    base = match[1]!;
    httpPort = Number(match[2]);
  });

  afterAll(async () => {
    if (serve && serve.exitCode === null && serve.signalCode === null) {
      serve.kill('SIGTERM');
      await once(serve, 'exit');
    }
    await rm(home, { recursive: true, force: true });
  });

  it('survives a 23-byte Metadata request claiming 2^31-1 topics sent to its broker mid-run, and the run completes', async () => {
    const started = await fetch(`${base}/api/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ path: 'quickstart.yaml', set: ['duration=10s', 'warmup=2s'] }),
    });
    expect(started.status).toBe(201);
    const { id } = (await started.json()) as { id: string };

    // The run record does not carry the broker's address while the run goes, so find the port the
    // serve process listens on besides its own HTTP port.
    const brokerPort = await waitFor('the bundled broker to listen', 30_000, async () =>
      listeningPorts(serve.pid!).find((port) => port !== httpPort),
    );
    await sendRaw(brokerPort, HUGE_METADATA_REQUEST);

    const health = await fetch(`${base}/api/health`).catch((error: unknown) => {
      throw new Error(`GET /api/health failed (${String(error)}); ${fate()}`);
    });
    expect(health.status).toBe(200);
    expect(((await health.json()) as { ok: boolean }).ok).toBe(true);

    const record = await waitFor('the run to end', 60_000, async () => {
      const response = await fetch(`${base}/api/runs/${id}`).catch((error: unknown) => {
        throw new Error(`GET /api/runs/${id} failed (${String(error)}); ${fate()}`);
      });
      const run = (await response.json()) as { status: string; error: string | null };
      return run.status === 'running' ? undefined : run;
    });
    expect(record.error).toBeNull();
    expect(record.status).toBe('completed');
    expect(fate()).toBe('kbench serve is still running');
  });
});
