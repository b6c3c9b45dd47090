import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from './helpers.js';

const BINARY = join(import.meta.dirname, '..', 'target', 'release', 'kbench-broker');

function requireKcat(): void {
  const probe = spawnSync('kcat', ['-V'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    throw new Error(
      'kcat is not installed: these tests drive the broker with librdkafka through kcat. ' +
        'Install it (apt-get install -y kcat) and run again.',
    );
  }
}

function kcat(args: string[], input?: string): { stdout: string; stderr: string; status: number | null } {
  const result = spawnSync('kcat', args, { input, encoding: 'utf8', timeout: 60_000 });
  return { stdout: result.stdout, stderr: result.stderr, status: result.status };
}

describe('standalone kbench-broker binary', () => {
  const dir = tempDir('binary');
  let child: ChildProcess;
  let port = 0;

  beforeAll(async () => {
    if (!existsSync(BINARY)) throw new Error(`${BINARY} is missing: run npm run build first`);
    child = spawn(BINARY, ['--port', '0', '--data-dir', dir.path], { stdio: ['ignore', 'pipe', 'inherit'] });
    const lines = createInterface({ input: child.stdout! });
    const [line] = (await once(lines, 'line')) as [string];
    const match = /^node 1 127\.0\.0\.1:(\d+) pid (\d+)$/.exec(line);
    if (!match) throw new Error(`unexpected first line: ${line}`);
    expect(Number(match[2])).toBe(child.pid);
    port = Number(match[1]);
  });

  afterAll(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
    dir.cleanup();
  });

  it('kcat produces to and consumes from it (librdkafka, flexible versions)', async () => {
    requireKcat();
    const admin = new Kafka({ brokers: [`127.0.0.1:${port}`], logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 't', numPartitions: 1 }] });
    await admin.disconnect();

    const lines = Array.from({ length: 50 }, (_, i) => `key${i}:value ${i}`);
    const produced = kcat(['-b', `127.0.0.1:${port}`, '-P', '-t', 't', '-K:'], `${lines.join('\n')}\n`);
    expect(produced.stderr).toBe('');
    expect(produced.status).toBe(0);

    const consumed = kcat(['-b', `127.0.0.1:${port}`, '-C', '-t', 't', '-e', '-q', '-f', '%k:%s\n']);
    expect(consumed.status).toBe(0);
    expect(consumed.stdout.trimEnd().split('\n')).toEqual(lines);
  });

  it('kcat lists this node as the only broker and the topic leader', () => {
    requireKcat();
    const listed = kcat(['-b', `127.0.0.1:${port}`, '-L', '-t', 't']);
    expect(listed.status).toBe(0);
    expect(listed.stdout).toContain(`broker 1 at 127.0.0.1:${port} (controller)`);
    expect(listed.stdout).toContain('partition 0, leader 1, replicas: 1, isrs: 1');
  });

  it('exits 0 on SIGTERM', async () => {
    child.kill('SIGTERM');
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(0);
  });
});

describe('kbench-broker arguments', () => {
  it('a bad flag value exits 2 and names the flag', () => {
    const result = spawnSync(BINARY, ['--port', 'nope', '--data-dir', '/tmp'], { encoding: 'utf8' });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('--port');
  });

  it('a missing --data-dir exits 2 and names it', () => {
    const result = spawnSync(BINARY, ['--port', '0'], { encoding: 'utf8' });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('--data-dir');
  });
});
