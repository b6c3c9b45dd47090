// What `kbench run` and `kbench sweep` report for a run that measured something and one that measured
// nothing, through the built CLI with its own history.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKbench } from './helpers.js';

let home: string;
beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'kbench-cli-outcome-'));
});
afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

function kbench(args: string[]) {
  return runKbench(home, args);
}

describe('kbench run with acks=0 on kafkajs', () => {
  it('measures after warm-up and exits 0', async () => {
    const r = await kbench([
      'run',
      'scenarios/quickstart.yaml',
      '--json',
      '--set',
      'driver=kafkajs',
      '--set',
      'producers.acks=0',
      '--set',
      'duration=4s',
      '--set',
      'warmup=1s',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const record = JSON.parse(r.stdout);
    expect(record.status).toBe('completed');
    expect(record.environment.driver).toBe('kafkajs');
    expect(record.scenario.producers.acks).toBe(0);
    expect(record.summary.produced.recordsPerSec).toBeGreaterThan(0);
  });
});

describe('a run that measured nothing', () => {
  it('exits 1, says why, and is stored as failed', async () => {
    const file = path.join(home, 'all-in-warmup.yaml');
    // Fifty records go out long before the 30 s warm-up ends: no sample is ever measured.
    await writeFile(file, 'name: all in warm-up\nrecords: 50\nwarmup: 30s\n');
    const r = await kbench(['run', file]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/failed: no measured sample/);
    const id = /^run ([0-9a-f]+) {2}failed/m.exec(r.stdout)?.[1] as string;
    expect(id).toBeDefined();
    const show = await kbench(['show', id, '--json']);
    expect(show.code).toBe(0);
    const stored = JSON.parse(show.stdout);
    expect(stored.status).toBe('failed');
    expect(stored.error).toMatch(/no measured sample: all 50 records were sent/);
    expect(stored.summary).toBeNull();
  });

  it('ends a sweep at that run', async () => {
    const file = path.join(home, 'sweep-warmup.yaml');
    await writeFile(file, 'name: warm-ups\nrecords: 50\nsweep: { knob: warmup, values: [30s, 0s] }\n');
    const r = await kbench(['sweep', file, '--json']);
    expect(r.code).toBe(1);
    const runs = JSON.parse(r.stdout) as { status: string; scenario: { warmup: string } }[];
    expect(runs.map((run) => [run.scenario.warmup, run.status])).toEqual([['30s', 'failed']]);
    expect(r.stderr).toContain('the sweep ended at run 1 of 2');
    const list = JSON.parse((await kbench(['list', '--json'])).stdout) as { name: string }[];
    expect(list.filter((run) => run.name.startsWith('warm-ups'))).toHaveLength(1);
  });
});

describe('a run whose clients saw errors', () => {
  it('prints how many and what they said, and keeps both in the history', async () => {
    const file = path.join(home, 'client-errors.yaml');
    // The only node is down for a second: producer and consumer connections are refused meanwhile.
    await writeFile(
      file,
      [
        'name: client errors',
        'driver: native',
        'duration: 4s',
        'topics: { partitions: 2 }',
        'producers: { count: 1, rate: 1000, acks: 1 }',
        'consumers: { count: 1 }',
        'faults:',
        '  - { at: 1s, action: kill, node: 1 }',
        '  - { at: 2s, action: restart, node: 1 }',
        '',
      ].join('\n'),
    );
    const r = await kbench(['run', file]);
    expect(r.code, r.stderr).toBe(0);
    const total = /^client errors: ([\d,]+)$/m.exec(r.stdout)?.[1];
    expect(total, r.stdout).toBeDefined();
    // A line per message: the client, its count, then the message as the engine worded it.
    const lines = [...r.stdout.matchAll(/^ {2}(producer|consumer) +([\d,]+) +(\S.*)$/gm)];
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.some((l) => l[1] === 'producer' && /refused|closed/.test(l[3] ?? ''))).toBe(true);
    const sum = lines.reduce((n, l) => n + Number(l[2]?.replaceAll(',', '')), 0);
    expect(sum).toBe(Number(total?.replaceAll(',', '')));

    const id = /^run ([0-9a-f]+) {2}completed/m.exec(r.stdout)?.[1] as string;
    const stored = JSON.parse((await kbench(['show', id, '--json'])).stdout);
    const said = stored.summary.clientErrors as { role: string; message: string; count: number }[];
    expect(said.reduce((n, e) => n + e.count, 0)).toBe(stored.summary.produced.errors);
    expect(stored.summary.produced.errors).toBe(sum);
  });
});

describe('an open-loop run that falls short of its rate', () => {
  it('says how much of the rate it reached, in the summary and again in kbench show', async () => {
    // 100 million records/s is far beyond one native producer here: the schedule falls behind at once.
    const args = ['--set', 'driver=native', '--set', 'producers.rate=100000000'];
    const r = await kbench([
      'run',
      'scenarios/quickstart.yaml',
      ...args,
      '--set',
      'duration=3s',
      '--set',
      'warmup=1s',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const line =
      /^warning: the producers reached ([\d,]+) of the 100,000,000 records\/s asked \((\d+)%\): the target or the clients could not keep up\./m.exec(
        r.stdout,
      );
    expect(line, r.stdout).not.toBeNull();
    const id = /^run ([0-9a-f]+) {2}completed/m.exec(r.stdout)?.[1] as string;
    const stored = JSON.parse((await kbench(['show', id, '--json'])).stdout);
    expect(Number(line?.[1]?.replaceAll(',', ''))).toBe(Math.round(stored.summary.produced.recordsPerSec));
    const shown = await kbench(['show', id]);
    expect(shown.stdout).toContain(line?.[0]);
  });

  it('says nothing when the rate was reached', async () => {
    const r = await kbench([
      'run',
      'scenarios/quickstart.yaml',
      '--set',
      'driver=native',
      '--set',
      'producers.rate=2000',
      '--set',
      'duration=3s',
      '--set',
      'warmup=1s',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toContain('records/s asked');
  });
});
