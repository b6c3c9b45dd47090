// CLI messages a new user meets (issue 14, item 7), from the built `kbench` spawned as a process.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { History } from '@kbench/history';
import { parseScenario } from '@kbench/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKbench } from './helpers.js';

let home: string;

beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'kbench-cli-messages-'));
  // Two finished runs whose ids share the prefix d0e, written to a real history file.
  const history = await History.open(path.join(home, 'history.duckdb'));
  for (const id of ['d0e11111-aaaa', 'd0e22222-bbbb']) {
    await history.createRun({
      id,
      status: 'running',
      scenario: parseScenario({ name: `run ${id}` }),
      source: 'scenarios/quickstart.yaml',
      environment: {
        cores: 2,
        cpuModel: 'test',
        memoryBytes: 1024 ** 3,
        os: 'linux',
        hostname: 'test',
        versions: { node: process.version, kbench: '0.1.0' },
        target: 'bundled',
        bootstrap: '127.0.0.1:9092',
        driver: 'native',
      },
      summary: null,
      error: null,
      startedAt: new Date().toISOString(),
      finishedAt: null,
      tags: [],
      notes: '',
    });
    await history.finishRun(id, {
      status: 'failed',
      error: 'test run',
      summary: null,
      finishedAt: new Date().toISOString(),
    });
  }
});

afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

describe('run ids', () => {
  it('a prefix that matches two runs says so and names them (exit 2)', async () => {
    const result = await runKbench(home, ['show', 'd0e']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('d0e matches more than one run');
    expect(result.stderr).toContain('d0e11111-aaaa');
    expect(result.stderr).toContain('d0e22222-bbbb');
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('a unique prefix, however short, finds its run', async () => {
    const result = await runKbench(home, ['show', 'd0e2', '--json']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).id).toBe('d0e22222-bbbb');
  });
});

describe('--help lists each option, not only the usage line', () => {
  it.each([
    ['compare', ['--report FILE', '--svg DIR, --png DIR']],
    ['export', ['--omb', '--out DIR']],
    ['broker', ['--processes', '--no-auto-create-topics', '--fsync F']],
  ])('kbench %s --help', async (command, options) => {
    const result = await runKbench(home, [command, '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`Options of ${command}:`);
    for (const option of options) expect(result.stdout).toContain(option);
    expect(result.stdout).not.toContain('Options of run:');
  });
});
