// A `command` fault through the spawned CLI: refused up front with exit 2 naming the field, and
// once run, its exit code, output and recovery figures shown by `kbench show` and --json.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKbench } from './helpers.js';

let home: string;
beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'kbench-cli-command-fault-'));
});
afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

const faultsSet = (fault: string) => ['run', 'scenarios/quickstart.yaml', '--set', `faults=[${fault}]`];

describe('kbench run with a command fault', () => {
  it('exits 2 naming faults[0].run when the program is not on PATH', async () => {
    const r = await runKbench(
      home,
      faultsSet('{at: 1s, action: command, run: "kbench-no-such-kubectl delete pod kafka-1"}'),
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('faults[0].run: program kbench-no-such-kubectl not found on PATH');
  });

  it('exits 2 naming faults[0].run when the command is empty', async () => {
    const r = await runKbench(home, faultsSet('{at: 1s, action: command, run: ""}'));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('faults[0].run: a command fault needs run');
  });

  it('exits 2 naming faults[0].timeout when the timeout is out of range', async () => {
    const r = await runKbench(home, faultsSet('{at: 1s, action: command, run: "true", timeout: 2h}'));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('faults[0].timeout: must be from 100ms to 60m (got "2h")');
  });

  it('runs the command during the run and kbench show lists its exit code and output', async () => {
    const run = await runKbench(home, [
      ...faultsSet('{at: 1s, action: command, run: "echo deleted pod; exit 4"}'),
      '--set',
      'duration=3s',
      '--json',
    ]);
    expect(run.code).toBe(0);
    const record = JSON.parse(run.stdout);
    expect(record.faults[0].command).toMatchObject({ exitCode: 4, stdout: 'deleted pod\n' });
    const show = await runKbench(home, ['show', record.id]);
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(
      /faults executed:\n +\d+\.\d s {2}command "echo deleted pod; exit 4": exit 4 after/,
    );
    expect(show.stdout).toContain('        stdout:\n        deleted pod');
    // Its recovery figures (docs/scenarios.md#recovery-figures): in --json, and a line under it in
    // `kbench show`, the same text `kbench run` prints.
    const recovery = record.faults[0].recovery;
    expect(recovery.noAckSec).toBeGreaterThanOrEqual(0);
    expect(recovery.noAckSec).toBeLessThan(3);
    expect(recovery.windowEndT).toBeGreaterThan(record.faults[0].t);
    expect(recovery.errors).toBe(0);
    expect(recovery.leaderElectionMs).toBeNull();
    expect(show.stdout).toMatch(/exit 4 after [\d.]+ s\n {8}recovery: [\d.]+ s without acks; .*; 0 errors\n/);
  });

  it('prints no blank indented line under a fault whose command printed nothing', async () => {
    const run = await runKbench(home, [
      ...faultsSet('{at: 1s, action: command, run: "true"}'),
      '--set',
      'duration=3s',
    ]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/command "true": exit 0 after [\d.]+ s\n {8}recovery: /);
    expect(run.stdout).not.toMatch(/\n[ \t]+\n/);
  });
});
