// The whole machine's counters the durability benchmark puts beside each run: read from the real /proc,
// around a real write to the disk and a real busy loop.
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, existsSync, fsyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import {
  cpuTicksIn,
  diskOf,
  hostUse,
  listenerPids,
  ProcessTreeCpu,
  processStatIn,
  readHost,
  sectorsWrittenIn,
} from '../src/host.js';

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

/** A node process that spins until it has used `cpuMs` of CPU (or 10 s passed). */
const SPIN = (cpuMs: number) =>
  `const end = Date.now() + 10000; while (process.cpuUsage().user < ${cpuMs * 1000} && Date.now() < end);`;

/** Starts a spinning node whose parent shell exits at once, so it is no child of this process. */
function spinOutside(cpuMs: number): number {
  const out = execFileSync('sh', [
    '-c',
    `"$0" -e '${SPIN(cpuMs)}' >/dev/null 2>&1 & echo $!`,
    process.execPath,
  ]);
  return Number(out.toString().trim());
}

async function gone(pid: number): Promise<void> {
  while (existsSync(`/proc/${pid}`)) await new Promise((resolve) => setTimeout(resolve, 20));
}

it("counts a process tree's CPU, its children's included, apart from the rest of the machine", async () => {
  const tree = new ProcessTreeCpu([process.pid], 0);
  const before = readHost(null, tree);
  const child = spawn(process.execPath, ['-e', SPIN(600)]);
  await once(child, 'exit');
  const mid = readHost(null, tree);
  // The child's 600 ms of CPU are the tree's: 60 ticks of 10 ms at least.
  expect((mid.treeTicks ?? 0) - (before.treeTicks ?? 0)).toBeGreaterThanOrEqual(60);
  const outside = spinOutside(600);
  await gone(outside);
  const after = readHost(null, tree);
  // The outside spinner's 600 ms are not the tree's, and show as others' CPU.
  expect((after.treeTicks ?? 0) - (mid.treeTicks ?? 0)).toBeLessThan(30);
  const use = hostUse(mid, after);
  expect((use.othersBusy ?? 0) * (after.cpuTotal - mid.cpuTotal)).toBeGreaterThanOrEqual(50);
});

it('finds the process listening on a local port, and none on a port nobody listens on', async () => {
  const server = spawn(
    process.execPath,
    [
      '-e',
      "const s = require('net').createServer().listen(0, '127.0.0.1', () => console.log(s.address().port))",
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  try {
    const [line] = (await once(server.stdout, 'data')) as [Buffer];
    const port = Number(line.toString().trim());
    expect(listenerPids([port])).toEqual([server.pid]);
    const mine = createServer().listen(0, '127.0.0.1');
    await once(mine, 'listening');
    const own = (mine.address() as AddressInfo).port;
    expect(listenerPids([port, own])?.sort()).toEqual([server.pid, process.pid].sort());
    mine.close();
    await once(mine, 'close');
    expect(listenerPids([own])).toBeNull();
  } finally {
    server.kill();
  }
});

it('reads the counters from /proc text, and refuses text that has none where one belongs', () => {
  expect(
    sectorsWrittenIn(' 253 0 vda 10 0 80 5 20 0 4096 9 0 0 0\n 253 1 vda1 1 0 8 1 2 0 16 1 0 0 0\n', 'vda'),
  ).toBe(4096);
  expect(sectorsWrittenIn(' 253 0 vda 10 0 80 5 20 0 4096 9\n', 'sda')).toBeNull();
  expect(() => sectorsWrittenIn(' 253 0 vda 10 0 80 5 20 0\n', 'vda')).toThrow(
    /diskstats: expected a counter/,
  );
  expect(cpuTicksIn('cpu  100 5 50 800 20 3 2 1 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n')).toEqual({
    cpuBusy: 161,
    cpuTotal: 981,
    cpuProcesses: 155,
  });
  // Fewer fields than Linux gives since 2.6.11, a field that is not a number, another first line.
  expect(() => cpuTicksIn('cpu  100 5 50 800 20 3 2\n')).toThrow(
    /proc\/stat: expected a counter, found undefined/,
  );
  expect(() => cpuTicksIn('cpu  100 5 -50 800 20 3 2 1\n')).toThrow(/expected a counter, found "-50"/);
  expect(() => cpuTicksIn('intr 5\n')).toThrow(/expected the cpu line first/);
  const stat = '42 (a (b) c) S 7 42 42 0 -1 4194560 100 0 0 0 11 22 33 44 20 0 1 0 12345 1000 100';
  expect(processStatIn(stat)).toEqual({ ppid: 7, start: 12345, ticks: 110 });
  expect(processStatIn('42 (gone) S 7 42')).toBeNull();
});
