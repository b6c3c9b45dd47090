// `kbench profile add --metrics URL,...`, spawned as a user runs it: the endpoints saved with their
// kind, shown, and usage errors (exit 2) that name the flag and what it takes; then a run on such a
// profile against `kbench broker --metrics`, whose summary lists the endpoint and its scrapes.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAIN, REPO, runKbench } from './helpers.js';

let home: string;

beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'kbench-cli-metrics-'));
});
afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

const add = (name: string, ...flags: string[]) =>
  runKbench(home, ['profile', 'add', name, '--bootstrap', 'rp-1:9092,rp-2:9092', ...flags]);

describe('kbench profile add --metrics', () => {
  it('saves the endpoints with their kind and shows them', async () => {
    const added = await add(
      'rp',
      '--metrics',
      'http://rp-1:9644/public_metrics,http://rp-2:9644/public_metrics',
      '--metrics-kind',
      'redpanda',
    );
    expect(added.code, added.stderr).toBe(0);
    const show = await runKbench(home, ['profile', 'show', 'rp', '--json']);
    expect(JSON.parse(show.stdout).metrics).toEqual([
      { url: 'http://rp-1:9644/public_metrics', kind: 'redpanda' },
      { url: 'http://rp-2:9644/public_metrics', kind: 'redpanda' },
    ]);
    const text = await runKbench(home, ['profile', 'show', 'rp']);
    expect(text.stdout).toMatch(/metrics\.1\s+http:\/\/rp-2:9644\/public_metrics \(redpanda\)/);
    const auto = await add('k', '--metrics', 'https://k:7071/metrics');
    expect(auto.code, auto.stderr).toBe(0);
    const shown = await runKbench(home, ['profile', 'show', 'k', '--json']);
    expect(JSON.parse(shown.stdout).metrics).toEqual([{ url: 'https://k:7071/metrics', kind: 'auto' }]);
  });

  it('refuses what is not an http(s) URL, a kind it does not know, and a kind without URLs: exit 2', async () => {
    const scheme = await add('bad1', '--metrics', 'ftp://k:21/metrics');
    expect(scheme.code).toBe(2);
    expect(scheme.stderr).toContain(
      'kbench profile add: --metrics ftp://k:21/metrics: must be an http:// or https:// URL (got ftp)',
    );
    const kind = await add('bad2', '--metrics', 'http://k:7071/metrics', '--metrics-kind', 'prom');
    expect(kind.code).toBe(2);
    expect(kind.stderr).toContain(
      'kbench profile add: --metrics-kind must be one of auto, kafka-jmx, redpanda, kbench (got "prom")',
    );
    const alone = await add('bad3', '--metrics-kind', 'redpanda');
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain('kbench profile add: --metrics-kind goes with --metrics');
    const list = await runKbench(home, ['profile', 'list']);
    expect(list.stdout).not.toMatch(/bad\d/);
  });
});

describe('a run on a profile with metrics, spawned as a user runs it', () => {
  it('kbench broker --metrics, profile add --metrics, run: the summary lists the endpoint and its scrapes', async () => {
    const dataDir = path.join(home, 'broker');
    const broker = spawn(
      process.execPath,
      [MAIN, 'broker', '--port', '0', '--data-dir', dataDir, '--metrics', '127.0.0.1:0'],
      { cwd: REPO, env: { ...process.env, KBENCH_HOME: home }, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const exited = once(broker, 'exit');
    try {
      let bootstrap: string | undefined;
      let metrics: string | undefined;
      for await (const line of createInterface({ input: broker.stdout! })) {
        bootstrap ??= /^node 1 (127\.0\.0\.1:\d+) pid \d+$/.exec(line)?.[1];
        metrics = /^metrics (\S+)$/.exec(line)?.[1];
        if (metrics) break;
      }
      const added = await runKbench(home, [
        'profile',
        'add',
        'local',
        '--bootstrap',
        bootstrap ?? '',
        '--metrics',
        `http://${metrics}/metrics`,
      ]);
      expect(added.code, added.stderr).toBe(0);
      const run = await runKbench(home, ['run', 'quickstart', '--quick', '--target', 'local'], 300_000);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toMatch(
        new RegExp(
          `metrics +${metrics?.replace(/\./g, '\\.')} http://\\S+/metrics \\(kbench\\): \\d+ scrapes, 0 failed\\n`,
        ),
      );
    } finally {
      broker.kill('SIGTERM');
      await exited;
    }
  }, 400_000);
});
