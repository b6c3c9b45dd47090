// What the whole machine did during a run: the bytes the disk under a directory wrote, and how busy its
// CPUs were. Read from /proc before and after, so a figure covers everything on the machine in that
// time (the broker, the client, the kernel's writeback), not one process.
import { existsSync, readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** One reading of the counters. */
export interface HostReading {
  /** 512-byte sectors the disk had written since boot, or null when `dir` is on no block device (tmpfs). */
  sectorsWritten: number | null;
  /** CPU time since boot, in ticks of every core: busy (not idle or waiting for I/O) and in all. */
  cpuBusy: number;
  cpuTotal: number;
  /** The part of cpuBusy that processes ran (user, nice, system: not interrupts, not stolen by the host). */
  cpuProcesses: number;
  /** Ticks of the process tree given to readHost (kbench's own), or null without one. */
  treeTicks: number | null;
}

/** What happened between two readings. */
export interface HostUse {
  /** Bytes the disk wrote, or null when there is no disk to read. */
  diskBytes: number | null;
  /** Share of all cores' time that was busy, 0..1. */
  cpuBusy: number;
  /**
   * Share of all cores' time that processes outside the tree (and the kernel's own threads) ran,
   * 0..1, or null without a tree.
   */
  othersBusy: number | null;
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

/** The counters now, for the disk named `disk` (from diskOf) and, given one, a process tree. */
export function readHost(disk: string | null, tree?: ProcessTreeCpu): HostReading {
  return {
    sectorsWritten: disk === null ? null : sectorsWrittenIn(readFileSync('/proc/diskstats', 'utf8'), disk),
    ...cpuTicksIn(readFileSync('/proc/stat', 'utf8')),
    treeTicks: tree?.read() ?? null,
  };
}

/**
 * A counter from a /proc file. A field that is missing or not a whole number (a kernel whose format
 * differs) throws rather than let NaN into a run's figures: tryReadHost then reports none.
 */
function counter(field: string | undefined, file: string): number {
  const n = field === undefined || !/^\d+$/.test(field) ? Number.NaN : Number(field);
  if (!Number.isSafeInteger(n))
    throw new Error(`${file}: expected a counter, found ${JSON.stringify(field)}`);
  return n;
}

/** The 512-byte sectors disk `disk` has written, from /proc/diskstats' text; null when it is not listed. */
export function sectorsWrittenIn(diskstats: string, disk: string): number | null {
  for (const line of diskstats.split('\n')) {
    // major minor name, reads, merged, sectors read, ms, writes, merged, sectors written, ...
    const fields = line.trim().split(/\s+/);
    if (fields[2] === disk) return counter(fields[9], '/proc/diskstats');
  }
  return null;
}

/** The machine's CPU ticks from /proc/stat's text. */
export function cpuTicksIn(stat: string): Pick<HostReading, 'cpuBusy' | 'cpuTotal' | 'cpuProcesses'> {
  // cpu user nice system idle iowait irq softirq steal (guest time is already in user).
  const cpu = stat.split('\n')[0]?.trim().split(/\s+/) ?? [];
  if (cpu[0] !== 'cpu')
    throw new Error(`/proc/stat: expected the cpu line first, found ${JSON.stringify(cpu[0])}`);
  const [user, nice, system, idle, iowait, irq, softirq, steal] = Array.from({ length: 8 }, (_, i) =>
    counter(cpu[i + 1], '/proc/stat'),
  ) as [number, number, number, number, number, number, number, number];
  const cpuTotal = user + nice + system + idle + iowait + irq + softirq + steal;
  return { cpuBusy: cpuTotal - idle - iowait, cpuTotal, cpuProcesses: user + nice + system };
}

/** readHost, or null where the counters cannot be read (no /proc: not Linux). */
export function tryReadHost(disk: string | null, tree?: ProcessTreeCpu): HostReading | null {
  try {
    return readHost(disk, tree);
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
    othersBusy:
      before.treeTicks === null || after.treeTicks === null || total <= 0
        ? null
        : Math.min(
            1,
            Math.max(
              0,
              (after.cpuProcesses - before.cpuProcesses - (after.treeTicks - before.treeTicks)) / total,
            ),
          ),
  };
}

/** A process's parent, start time and CPU ticks (its own and its reaped children's), or null once it is gone. */
function readStat(pid: number): { ppid: number; start: number; ticks: number } | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return null;
  }
  return processStatIn(text);
}

/** A process's parent, start time and CPU ticks from its /proc/PID/stat text; null if it does not read as one. */
export function processStatIn(text: string): { ppid: number; start: number; ticks: number } | null {
  // pid (comm) state ppid ...: comm may hold spaces and parentheses, so fields count from the last ')'.
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
  try {
    const file = '/proc/PID/stat';
    const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + counter(f[i], file), 0);
    return { ppid: counter(f[1], file), start: counter(f[19], file), ticks };
  } catch {
    return null;
  }
}

/**
 * The CPU ticks a process and every process under it used (a bundled broker in its own processes, a
 * managed Apache Kafka's JVMs), for telling kbench's own CPU from the rest of the machine's. Its
 * descendants are found by a walk of /proc at most every `rescanMs`; in between only the processes
 * already found are read. A process that ends leaves its ticks to its parent (reaped children count
 * in the parent's), so the total stays whole.
 */
export class ProcessTreeCpu {
  /** pid -> its start time, to tell a reused pid. */
  private readonly tracked = new Map<number, number>();
  private lastScan = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly roots: readonly number[],
    private readonly rescanMs = 5_000,
  ) {}

  /** The trees' ticks since each of their processes started, or null when a root cannot be read. */
  read(now = performance.now()): number | null {
    if (now - this.lastScan >= this.rescanMs) {
      this.scan();
      this.lastScan = now;
    }
    let total = 0;
    let roots = 0;
    for (const [pid, start] of this.tracked) {
      const stat = readStat(pid);
      if (stat === null || stat.start !== start) {
        this.tracked.delete(pid);
        continue;
      }
      if (this.roots.includes(pid)) roots++;
      total += stat.ticks;
    }
    return roots === this.roots.length ? total : null;
  }

  private scan(): void {
    const children = new Map<number, { pid: number; start: number }[]>();
    let names: string[];
    try {
      names = readdirSync('/proc');
    } catch {
      return;
    }
    for (const name of names) {
      const code = name.charCodeAt(0);
      if (code < 48 || code > 57) continue;
      const pid = Number(name);
      const stat = readStat(pid);
      if (stat === null) continue;
      if (this.roots.includes(pid)) this.tracked.set(pid, stat.start);
      const siblings = children.get(stat.ppid) ?? [];
      siblings.push({ pid, start: stat.start });
      children.set(stat.ppid, siblings);
    }
    const queue = [...this.roots];
    for (let pid = queue.pop(); pid !== undefined; pid = queue.pop()) {
      for (const child of children.get(pid) ?? []) {
        this.tracked.set(child.pid, child.start);
        queue.push(child.pid);
      }
    }
  }
}

/**
 * The processes listening on these local TCP ports (a broker this machine runs that kbench did not
 * start), from /proc/net/tcp and tcp6 and each process's open sockets; null when a port has no
 * listener whose process can be read (another user's, without the right to read its descriptors).
 */
export function listenerPids(ports: readonly number[]): number[] | null {
  const inodes = new Map<string, number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'latin1');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      // sl local_address rem_address st ... uid timeout inode
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || f[3] !== '0A') continue;
      const port = Number.parseInt(f[1]?.split(':').pop() ?? '', 16);
      if (ports.includes(port)) inodes.set(`socket:[${f[9]}]`, port);
    }
  }
  const found = new Map<number, number>();
  if (inodes.size > 0) {
    for (const name of readdirSync('/proc')) {
      const code = name.charCodeAt(0);
      if (code < 48 || code > 57) continue;
      let fds: string[];
      try {
        fds = readdirSync(`/proc/${name}/fd`);
      } catch {
        continue;
      }
      for (const fd of fds) {
        let link: string;
        try {
          link = readlinkSync(`/proc/${name}/fd/${fd}`);
        } catch {
          continue;
        }
        const port = inodes.get(link);
        if (port !== undefined) found.set(port, Number(name));
      }
    }
  }
  if (ports.some((port) => !found.has(port))) return null;
  return [...new Set(found.values())];
}
