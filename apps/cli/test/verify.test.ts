// The record check (verify: true, issue 19) through the spawned CLI: refused on kafkajs with exit 2
// naming the field, and on the native driver its verdict printed by `kbench run` and in --json.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verificationText } from '../src/format.js';
import { runKbench } from './helpers.js';

let home: string;
beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'kbench-cli-verify-'));
});
afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

const short = ['--set', 'duration=2s', '--set', 'warmup=0s', '--set', 'producers.rate=2000'];

describe('kbench run with verify', () => {
  it('exits 2 naming verify on the kafkajs driver, before any load', async () => {
    const r = await runKbench(home, ['run', 'scenarios/quickstart.yaml', '--set', 'verify=true']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      'verify: verify: true needs driver: native, whose producers mark each record (driver is kafkajs; --set driver=native)',
    );
    expect(r.stdout).not.toContain('measured');
  });

  it('exits 2 naming producers.messageSize when values are too short to carry the mark', async () => {
    const r = await runKbench(home, [
      'run',
      'scenarios/quickstart.yaml',
      '--set',
      'driver=native',
      '--set',
      'verify=true',
      '--set',
      'producers.messageSize=10',
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      'producers.messageSize: the record check (verify) needs values of 24 bytes or more',
    );
  });

  it('prints the verdict on the native driver, and --json carries it', async () => {
    const base = [
      'run',
      'scenarios/quickstart.yaml',
      '--set',
      'driver=native',
      '--set',
      'verify=true',
      ...short,
    ];
    const text = await runKbench(home, base);
    expect(text.code).toBe(0);
    const line = /record check: passed: all ([\d,]+) acknowledged records found once each, in order/.exec(
      text.stdout,
    );
    expect(line, text.stdout).not.toBeNull();
    expect(Number(line?.[1]?.replaceAll(',', ''))).toBeGreaterThan(0);

    const json = await runKbench(home, [...base, '--json']);
    expect(json.code).toBe(0);
    const v = JSON.parse(json.stdout).summary.verification;
    expect(v.verdict).toBe('passed');
    expect(v.totals.found).toBe(v.totals.acknowledged);
    expect([v.totals.lost, v.totals.duplicated, v.totals.reordered]).toEqual([0, 0, 0]);
    expect(v.partitions).toHaveLength(3);
  });

  it('prints a failed check loudly, with the partitions that missed records', () => {
    const counts = {
      acknowledged: 500,
      found: 497,
      lost: 3,
      duplicated: 0,
      reordered: 0,
      unacknowledgedPresent: 0,
      foreign: 0,
    };
    const text = verificationText({
      verdict: 'failed',
      statement: 'FAILED: 3 lost (of 1,000 acknowledged), which the settings (...) do not allow',
      allows: { lost: null, duplicated: null, reordered: null },
      totals: { ...counts, acknowledged: 1000, found: 997 },
      partitions: [
        { topic: 't', partition: 0, ...counts },
        { topic: 't', partition: 1, ...counts, lost: 0, found: 500 },
      ],
    });
    expect(text).toContain('\n\n!!! RECORD CHECK FAILED: 3 lost (of 1,000 acknowledged)');
    expect(text).toMatch(/t:0 +500 +3 +0 +0 +0/);
    expect(text).not.toContain('t:1');
  });
});
