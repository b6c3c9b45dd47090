// `kbench run` with the bundled broker's data on a file system about to fill (a small tmpfs, size and
// inode capped, as TMPDIR): the run stops before the disk fills, says why, exits 1, and the history
// keeps the run with what it measured.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmdirSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO, runKbench } from './helpers.js';

let home: string;
let mount: string | null = null;
let refused: string | null = null;

beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'kbench-cli-disk-'));
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kbench-cli-disk-tmpfs-'));
  const result = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=200m,nr_inodes=50000', 'tmpfs', dir], {
    encoding: 'utf8',
  });
  if (result.status === 0) mount = dir;
  else {
    rmdirSync(dir);
    const why = (result.stderr || String(result.error)).trim();
    if (process.getuid?.() === 0 && !/permission|not permitted|superuser|only root/i.test(why))
      throw new Error(`mount -t tmpfs failed: ${why}`);
    refused = `mounting a tmpfs needs root (${why})`;
  }
});
afterAll(async () => {
  if (mount) {
    if (spawnSync('umount', [mount]).status !== 0) spawnSync('umount', ['-l', mount]);
    rmdirSync(mount);
  }
  await rm(home, { recursive: true, force: true });
});

describe('kbench run on a disk about to fill', () => {
  it('stops before it fills, says why, exits 1 and keeps the run in the history', async (ctx) => {
    if (!mount) return ctx.skip(refused ?? 'no tmpfs');
    const file = path.join(home, 'fills.yaml');
    // About 20 MB/s into 200 MB: the 20 MB kept free is reached after some 9 s of a 60 s run.
    await writeFile(
      file,
      'name: fills the disk\ndriver: native\nduration: 60s\nproducers: { count: 1, rate: 20000, messageSize: 1KB }\n',
    );
    // TMPDIR is where the bundled broker keeps its data.
    const r = await runKbench(home, ['run', file], 120_000, REPO, { TMPDIR: mount });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toMatch(
      /failed: the file system of \S+kbench-broker-\w+, where the target keeps its data, has [\d,]+ bytes free, under the 20,971,520 kbench keeps free there/,
    );
    const id = /^run ([0-9a-f]+) {2}failed/m.exec(r.stdout)?.[1] as string;
    const shown = await runKbench(home, ['show', id, '--json']);
    expect(shown.code).toBe(0);
    const stored = JSON.parse(shown.stdout);
    expect(stored.status).toBe('failed');
    expect(stored.summary.produced.records).toBeGreaterThan(0);
  });
});
