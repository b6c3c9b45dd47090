// The whole machine's counters the durability benchmark puts beside each run: read from the real /proc,
// around a real write to the disk and a real busy loop.
import { closeSync, fsyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { diskOf, hostUse, readHost } from '../src/host.js';

const here = path.dirname(fileURLToPath(import.meta.url));

it('counts the bytes a synced write sent to the disk under a directory', () => {
  // The checkout is on a disk (a tmpdir may be tmpfs).
  const dir = mkdtempSync(path.join(here, '.host-'));
  try {
    const disk = diskOf(dir);
    expect(disk).toMatch(/^[a-z]/);
    const before = readHost(disk);
    const fd = openSync(path.join(dir, 'data'), 'w');
    const block = Buffer.alloc(1 << 20, 7);
    for (let i = 0; i < 8; i++) writeSync(fd, block);
    fsyncSync(fd);
    closeSync(fd);
    const use = hostUse(before, readHost(disk));
    expect(use.diskBytes).toBeGreaterThanOrEqual(8 << 20);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

it('has no disk for a directory on tmpfs', () => {
  expect(diskOf('/dev/shm')).toBeNull();
  expect(hostUse(readHost(null), readHost(null)).diskBytes).toBeNull();
});

it('counts busy CPU time as a share of all cores', () => {
  const before = readHost(null);
  const until = Date.now() + 300;
  let spins = 0;
  while (Date.now() < until) spins++;
  const { cpuBusy } = hostUse(before, readHost(null));
  expect(spins).toBeGreaterThan(0);
  expect(cpuBusy).toBeGreaterThan(0);
  expect(cpuBusy).toBeLessThanOrEqual(1);
});
