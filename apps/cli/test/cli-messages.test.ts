// CLI messages a new user meets (issue 14, item 7), from the built `kbench` spawned as a process.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
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

describe('scenario names and files', () => {
  it('a missing file says "no such file", not ENOENT (exit 2)', async () => {
    const result = await runKbench(home, ['run', 'no-such-scenario.yaml', '--dry-run']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('cannot read scenario no-such-scenario.yaml: no such file');
    expect(result.stderr).not.toContain('ENOENT');
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('kbench run quickstart finds the library scenario from any folder', async () => {
    const result = await runKbench(home, ['run', 'quickstart', '--dry-run'], 60_000, os.tmpdir());
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('dry run');
    expect(result.stdout).toContain('quickstart');
    const nested = await runKbench(home, ['run', 'kreps-2014/consumer-1', '--dry-run'], 60_000, os.tmpdir());
    expect(nested.code).toBe(0);
    expect(nested.stdout).toContain('dry run');
  });

  it('a misspelt library name suggests the nearest one', async () => {
    const result = await runKbench(home, ['run', 'quickstrat', '--dry-run'], 60_000, os.tmpdir());
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('did you mean "quickstart"?');
  });

  it('a write-up folder lists its scenarios and points at kbench reproduce', async () => {
    const result = await runKbench(home, ['run', 'kreps-2014', '--dry-run'], 60_000, os.tmpdir());
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('kreps-2014 is a folder');
    expect(result.stderr).toContain('kreps-2014/producer-1-thread');
    expect(result.stderr).toContain('kbench reproduce kreps-2014');
  });
});

describe('targets', () => {
  it.each([
    ['bundeled', 'bundled'],
    ['kafak', 'kafka'],
  ])('an unknown target %s suggests %s', async (typo, meant) => {
    const result = await runKbench(home, ['run', 'quickstart', '--target', typo, '--dry-run']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`no profile named "${typo}"`);
    expect(result.stderr).toContain(`did you mean "${meant}"?`);
  });

  it('an unknown target suggests the nearest saved profile', async () => {
    const added = await runKbench(home, ['profile', 'add', 'prod-east', '--bootstrap', '10.0.0.1:9092']);
    expect(added.code).toBe(0);
    const result = await runKbench(home, ['run', 'quickstart', '--target', 'prod-eats', '--dry-run']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('did you mean "prod-east"?');
  });

  it('a name nothing resembles gets no guess', async () => {
    const result = await runKbench(home, ['run', 'quickstart', '--target', 'zzzzzz', '--dry-run']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('no profile named "zzzzzz"');
    expect(result.stderr).not.toContain('did you mean');
  });
});

describe('write-up names', () => {
  it('kbench reproduce finds the library write-up from any folder, and suggests the nearest name', async () => {
    const result = await runKbench(home, ['reproduce', 'kreps-201', '--quick'], 60_000, os.tmpdir());
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('did you mean "kreps-2014"?');
    expect(result.stderr).toContain('topic-count-2016');
  });
});

describe('settings a driver cannot honour', () => {
  it('producers.lingerMs on the kafkajs driver is refused, not silently ignored (exit 2)', async () => {
    const result = await runKbench(home, [
      'run',
      'quickstart',
      '--set',
      'driver=kafkajs',
      '--set',
      'producers.lingerMs=5',
      '--dry-run',
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('producers.lingerMs: the kafkajs driver does not linger');
    const native = await runKbench(home, [
      'run',
      'quickstart',
      '--set',
      'driver=native',
      '--set',
      'producers.lingerMs=5',
      '--dry-run',
    ]);
    expect(native.code).toBe(0);
  });
});

describe('KBENCH_HOME naming a file', () => {
  it('exits 2 and says a file is in the way, without a stack', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'kbench-home-file-'));
    const file = path.join(dir, 'not-a-folder');
    await writeFile(file, 'a file\n');
    for (const args of [
      ['list'],
      ['run', 'scenarios/quickstart.yaml', '--set', 'duration=2s', '--set', 'warmup=0s'],
    ]) {
      const r = await runKbench(file, args);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toBe(
        `kbench: the history's folder ${file} cannot be made: a file is in the way (KBENCH_HOME must name a folder, or a path where one can be made)\n`,
      );
    }
    await rm(dir, { recursive: true, force: true });
  });
});
