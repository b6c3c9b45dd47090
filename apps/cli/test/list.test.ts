// `kbench list` as a user reads it: each run by its throughput, a consumer-only run by what it consumed.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKbench } from './helpers.js';

let home: string;
beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'kbench-list-test-'));
});
afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

describe('kbench list', () => {
  it("shows a consumer-only run's consumed rate, marked as consumed, rather than 0", async () => {
    const file = path.join(home, 'consumer-only.yaml');
    await writeFile(
      file,
      'name: consumer only\ndriver: native\nduration: 2s\ntopics: { partitions: 1 }\nproducers: { count: 0 }\nconsumers: { count: 1, startAt: backlog, backlog: 1MB }\n',
    );
    const run = await runKbench(home, ['run', file, '--json']);
    expect(run.code, run.stderr).toBe(0);
    const record = JSON.parse(run.stdout) as { id: string; summary: { consumed: { recordsPerSec: number } } };
    expect(record.summary.consumed.recordsPerSec).toBeGreaterThan(0);

    const list = await runKbench(home, ['list']);
    expect(list.code).toBe(0);
    const row = list.stdout.split('\n').find((line) => line.startsWith(record.id)) ?? '';
    // rec/s and MB/s, each marked c: the rate its consumer read, not the 0 it produced.
    expect(row).toMatch(/\s[1-9][\d,]* c\s+[\d.]+ c\s/);
    expect(list.stdout).toContain('c consumed: the run had no producers');
  });
});
