// A run whose target's data would fill this machine's disk stops first (docs/scenarios.md, "How load
// is measured"): the bundled broker writes into a small tmpfs (size and inode capped, as every test
// that can fill a disk does), and the run fails naming the file system, its measured samples kept.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmdirSync, statfsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseScenario } from '@kbench/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { diskReserveBytes, diskShortage } from '../src/backlog-space.js';
import { ScenarioRun } from '../src/index.js';

const TMPFS_OPTIONS = 'size=200m,nr_inodes=50000';
let mount: string | null = null;
let refused: string | null = null;

beforeAll(() => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kbench-disk-room-'));
  const result = spawnSync('mount', ['-t', 'tmpfs', '-o', TMPFS_OPTIONS, 'tmpfs', dir], { encoding: 'utf8' });
  if (result.status === 0) {
    mount = dir;
    return;
  }
  rmdirSync(dir);
  const why = (result.stderr || String(result.error)).trim();
  if (process.getuid?.() !== 0 || /permission|not permitted|superuser|only root/i.test(why))
    refused = `mounting a tmpfs needs root (${why})`;
  else throw new Error(`mount -t tmpfs failed: ${why}`);
});
afterAll(() => {
  if (!mount) return;
  if (spawnSync('umount', [mount]).status !== 0) spawnSync('umount', ['-l', mount]);
  rmdirSync(mount);
});

describe('the room kept free on the disk of the target data', () => {
  it('keeps a tenth of a small file system free, and says nothing while there is more', (ctx) => {
    if (!mount) return ctx.skip(refused ?? 'no tmpfs');
    const fs = statfsSync(mount);
    expect(diskReserveBytes(fs.blocks * fs.bsize)).toBe(20 * 1024 * 1024);
    expect(diskReserveBytes(250 * 1024 ** 3)).toBe(2 * 1024 ** 3);
    expect(diskShortage(mount)).toBeNull();
  });

  it('fails a run that would fill it, naming the file system, with the samples measured before', async (ctx) => {
    if (!mount) return ctx.skip(refused ?? 'no tmpfs');
    // About 20 MB/s into 200 MB: the reserve (20 MB) is reached after some 9 s of a 60 s run.
    const outcome = await new ScenarioRun(
      parseScenario({
        driver: 'native',
        duration: '60s',
        topics: { partitions: 2 },
        producers: { count: 1, rate: 20_000, messageSize: '1KB' },
      }),
      { runId: 'disk-room', workDir: mount },
    ).execute();
    expect(outcome.status).toBe('failed');
    expect(outcome.error).toMatch(
      new RegExp(
        `^the file system of ${mount}/kbench-broker-\\w+, where the target keeps its data, has [\\d,]+ bytes free, under the 20,971,520 kbench keeps free there`,
      ),
    );
    // Stopped well before the 60 s, with what was measured until then.
    const last = outcome.samples.at(-1)?.t ?? 0;
    expect(last).toBeGreaterThan(2);
    expect(last).toBeLessThan(40);
    expect(outcome.summary?.produced.records).toBeGreaterThan(0);
  });
});
