// `kbench broker` with TLS and SASL (issue 16, item 2): librdkafka (kcat) produces and consumes
// over SASL_SSL with SCRAM-SHA-512 against a spawned broker, a wrong password is refused, and a
// cluster's followers still replicate while clients must authenticate.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { makeTestCertificates, type TestCertificates } from '@kbench/apache-kafka';
import { afterEach, describe, expect, it } from 'vitest';
import { freePorts, MAIN, REPO, runKbench } from './helpers.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const clean of cleanups.splice(0).reverse()) await clean();
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'kbench-broker-sec-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** The standalone broker binary, as broker-native/README.md documents it. */
const BROKER_BINARY = path.join(REPO, 'broker-native', 'target', 'release', 'kbench-broker');

/**
 * Spawns `kbench broker --port P --data-dir D ARGS` (or, given `program`, that program with the same
 * flags, e.g. the kbench-broker binary) and waits for its `node 1 ...` line.
 */
async function startBrokerCommand(
  args: string[],
  program: string[] = [process.execPath, MAIN, 'broker'],
): Promise<{ child: ChildProcess; port: number; exited: Promise<unknown[]> }> {
  const dir = await tempDir();
  // --nodes N listens on port .. port + N - 1.
  const nodes = args.includes('--nodes') ? Number(args[args.indexOf('--nodes') + 1]) : 1;
  const port = await freePorts(nodes);
  const child = spawn(
    program[0] as string,
    [...program.slice(1), '--port', String(port), '--data-dir', dir, ...args],
    {
      cwd: REPO,
      env: { ...process.env, KBENCH_HOME: dir },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const exited = once(child, 'exit');
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
    exited.then(([code]) => `(exited with ${code}: ${stderr})`),
  ]);
  expect(first).toMatch(new RegExp(`^node 1 127\\.0\\.0\\.1:${port} pid \\d+$`));
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

const USER = 'bench';
const PASSWORD = 'pass:word';

function saslSsl(certs: TestCertificates, password = PASSWORD): string[] {
  return [
    '-X',
    'security.protocol=SASL_SSL',
    '-X',
    'sasl.mechanisms=SCRAM-SHA-512',
    '-X',
    `sasl.username=${USER}`,
    '-X',
    `sasl.password=${password}`,
    '-X',
    `ssl.ca.location=${certs.caFile}`,
  ];
}

async function roundTrip(
  bootstrap: string,
  security: string[],
  topic: string,
  lines: string[],
): Promise<void> {
  const produced = await kcat(
    ['-b', bootstrap, ...security, '-P', '-t', topic, '-m', '20', '-X', 'acks=all'],
    `${lines.join('\n')}\n`,
  );
  expect(produced.stderr).not.toMatch(/SASL|SSL|authentication/i);
  expect(produced.code).toBe(0);
  const consume = [
    '-b',
    bootstrap,
    ...security,
    '-C',
    '-t',
    topic,
    '-o',
    'beginning',
    '-c',
    String(lines.length),
    '-e',
  ];
  const consumed = await kcat([...consume, '-m', '20']);
  expect(consumed.stdout.trim().split('\n')).toEqual(lines);
}

async function securityFlags(): Promise<{ certs: TestCertificates; flags: string[] }> {
  const certs = await makeTestCertificates(await tempDir());
  const flags = [
    '--tls-cert',
    certs.serverCertFile,
    '--tls-key',
    certs.serverKeyFile,
    '--sasl',
    'scram-sha-512',
    '--user',
    `${USER}:${PASSWORD}`,
  ];
  return { certs, flags };
}

describe('kbench broker over SASL_SSL', () => {
  it('kcat produces and consumes with SCRAM-SHA-512 over TLS; a wrong password is refused', async () => {
    const { certs, flags } = await securityFlags();
    const { child, port, exited } = await startBrokerCommand(flags);
    const bootstrap = `127.0.0.1:${port}`;
    await roundTrip(bootstrap, saslSsl(certs), 'secured', ['one', 'two', 'three']);
    const refused = await kcat(['-b', bootstrap, ...saslSsl(certs, 'wrong'), '-L', '-m', '10']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/SASL authentication error|Authentication failed/i);
    // PLAINTEXT on a SASL_SSL listener gets nothing.
    const plaintext = await kcat(['-b', bootstrap, '-L', '-m', '5']);
    expect(plaintext.code).not.toBe(0);
    child.kill('SIGTERM');
    expect((await exited)[0]).toBe(0);
  }, 90_000);

  it('the standalone kbench-broker takes the same flags: kcat over SASL_SSL with SCRAM-SHA-512', async () => {
    const { certs, flags } = await securityFlags();
    const { child, port, exited } = await startBrokerCommand(flags, [BROKER_BINARY]);
    await roundTrip(`127.0.0.1:${port}`, saslSsl(certs), 'secured-binary', ['x', 'y']);
    child.kill('SIGTERM');
    expect((await exited)[0]).toBe(0);
  }, 90_000);

  it('a 3-node cluster serves SASL_SSL clients while its followers replicate (acks=all)', async () => {
    const { certs, flags } = await securityFlags();
    const { child, port, exited } = await startBrokerCommand(['--nodes', '3', ...flags]);
    await roundTrip(`127.0.0.1:${port}`, saslSsl(certs), 'secured-cluster', ['a', 'b']);
    child.kill('SIGTERM');
    expect((await exited)[0]).toBe(0);
  }, 90_000);

  it('--sasl without --user is bad usage', async () => {
    const dir = await tempDir();
    const result = await runKbench(dir, ['broker', '--data-dir', dir, '--sasl', 'plain'], 60_000);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--user');
  }, 60_000);
});
