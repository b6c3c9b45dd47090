// What the whole machine did during a run: the bytes the disk under a directory wrote, and how busy its
// CPUs were. Read from /proc before and after, so a figure covers everything on the machine in that
// time (the broker, the client, the kernel's writeback), not one process.
import { existsSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** One reading of the counters. */
export interface HostReading {
  /** 512-byte sectors the disk had written since boot, or null when `dir` is on no block device (tmpfs). */
  sectorsWritten: number | null;
  /** CPU time since boot, in ticks of every core: busy (not idle or waiting for I/O) and in all. */
  cpuBusy: number;
  cpuTotal: number;
}

/** What happened between two readings. */
export interface HostUse {
  /** Bytes the disk wrote, or null when there is no disk to read. */
  diskBytes: number | null;
  /** Share of all cores' time that was busy, 0..1. */
  cpuBusy: number;
}

/**
 * The whole disk a directory is on (`vda` for a file system on `vda` or on its partition `vda1`), or
 * null for one on no block device.
 */
export function diskOf(dir: string): string | null {
  const dev = statSync(dir).dev;
  // Linux's encoding of a device number (glibc's gnu_dev_major and gnu_dev_minor).
  const major = ((dev >>> 8) & 0xfff) | (Math.floor(dev / 2 ** 32) & ~0xfff);
  const minor = (dev & 0xff) | ((dev >>> 12) & ~0xff);
  const link = `/sys/dev/block/${major}:${minor}`;
  if (major === 0 || !existsSync(link)) return null;
  const device = join(dirname(link), readlinkSync(link));
  return existsSync(join(device, 'partition')) ? basename(dirname(device)) : basename(device);
}

/** The counters now, for the disk named `disk` (from diskOf). */
export function readHost(disk: string | null): HostReading {
  let sectorsWritten: number | null = null;
  if (disk !== null) {
    for (const line of readFileSync('/proc/diskstats', 'utf8').split('\n')) {
      const fields = line.trim().split(/\s+/);
      // major minor name, reads, merged, sectors read, ms, writes, merged, sectors written, ...
      if (fields[2] === disk && fields.length >= 10) sectorsWritten = Number(fields[9]);
    }
  }
  // cpu user nice system idle iowait irq softirq steal (guest time is already in user).
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]?.trim().split(/\s+/) ?? [];
  const ticks = cpu.slice(1, 9).map(Number);
  const cpuTotal = ticks.reduce((sum, t) => sum + t, 0);
  const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
  return { sectorsWritten, cpuBusy: cpuTotal - idle, cpuTotal };
}

/** readHost, or null where the counters cannot be read (no /proc: not Linux). */
export function tryReadHost(disk: string | null): HostReading | null {
  try {
    return readHost(disk);
  } catch {
    return null;
  }
}

export function hostUse(before: HostReading, after: HostReading): HostUse {
  const total = after.cpuTotal - before.cpuTotal;
  return {
    diskBytes:
      before.sectorsWritten === null || after.sectorsWritten === null
        ? null
        : (after.sectorsWritten - before.sectorsWritten) * 512,
    cpuBusy: total > 0 ? (after.cpuBusy - before.cpuBusy) / total : 0,
  };
}
