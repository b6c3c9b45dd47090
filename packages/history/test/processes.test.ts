// Several OS processes sharing one history file, and a writer that dies mid-run.
import { type ChildProcess, fork } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { History, HistoryLockedError } from '../src/index.js';
import { makeRun, tempDir } from './fixtures.js';

const WRITER = fileURLToPath(new URL('./fixtures/writer.mjs', import.meta.url));

let file: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  const temp = await tempDir();
  cleanup = temp.cleanup;
  file = join(temp.dir, 'history.duckdb');
});
afterEach(() => cleanup());

function startWriter(args: string[]): {
  child: ChildProcess;
  exited: Promise<number | null>;
  stderr: () => string;
} {
  const child = fork(WRITER, [file, ...args], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  // Resolves once Node has reaped the child, so its pid no longer counts as alive.
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, stderr: () => stderr };
}

describe('several processes', () => {
  it('two processes appending to the same file at once lose no rows and surface no lock error', async () => {
    const history = await History.open(file);
    await history.createRun(makeRun({ id: 'shared' }));
    const a = startWriter(['append', 'shared', '1', '50']);
    const b = startWriter(['append', 'shared', '1001', '50']);
    const codes = await Promise.all([a.exited, b.exited]);
    expect(a.stderr() + b.stderr()).toBe('');
    expect(codes).toEqual([0, 0]);
    const samples = await history.getSamples('shared');
    expect(samples).toHaveLength(100);
    expect(samples.filter((s) => s.t < 1000)).toHaveLength(50);
  });

  it('a writer killed with SIGKILL mid-run leaves a readable file and its run marked aborted', async () => {
    await History.open(file);
    const writer = startWriter([
      'crash',
      JSON.stringify(makeRun({ id: 'doomed', startedAt: '2025-01-02T03:04:05.000Z' })),
    ]);
    await new Promise<void>((resolve) => {
      writer.child.on('message', (message: { appended?: number }) => {
        if ((message.appended ?? 0) >= 10) resolve();
      });
    });
    writer.child.kill('SIGKILL');
    await writer.exited;

    const history = await History.open(file);
    const run = await history.getRun('doomed');
    expect(run?.status).toBe('aborted');
    const samples = await history.getSamples('doomed');
    expect(samples.length).toBeGreaterThanOrEqual(10);
    const lastT = samples.at(-1)?.t ?? 0;
    expect(run?.finishedAt).toBe(
      new Date(Date.parse('2025-01-02T03:04:05.000Z') + lastT * 1000).toISOString(),
    );
    // Nothing is left to mark on the next open.
    expect(await history.markAbandonedRuns()).toBe(0);
  });

  it('waits while another process holds the file, then goes ahead', async () => {
    await History.open(file);
    const holder = startWriter(['hold', '600']);
    await new Promise<void>((resolve) => holder.child.once('message', () => resolve()));
    const started = Date.now();
    const history = await History.open(file);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(await history.listRuns()).toEqual([]);
    await holder.exited;
  });

  it('gives up after the lock timeout with an error naming the file and the holding pid', async () => {
    await History.open(file);
    const holder = startWriter(['hold', '30000']);
    await new Promise<void>((resolve) => holder.child.once('message', () => resolve()));
    try {
      const attempt = History.open(file, { lockTimeoutMs: 300 });
      await expect(attempt).rejects.toBeInstanceOf(HistoryLockedError);
      await expect(attempt).rejects.toThrow(file);
      await expect(attempt).rejects.toThrow(`process ${holder.child.pid}`);
    } finally {
      holder.child.kill('SIGKILL');
      await holder.exited;
    }
  });
});
