// The broker's system calls as strace records them, and the acknowledgement-after-durable check over
// them: a record acknowledged under fsync `batch` was written by a write that was itself durable when
// it returned (to a journal file opened with O_DSYNC), or written to a file that an fdatasync made
// durable afterwards, and only then did the leader write the Produce response.
//
// Why the times are sound: strace stamps a call when the tracee stops at its entry, before the
// kernel runs it, and its duration ends when the tracee stops at its exit, after the kernel ran it.
// So the call's real execution lies within [start, end] as recorded, and "A ended before B began"
// on recorded times implies it for the real calls, across threads and across the processes of one
// machine (every strace reads the same clock).
import { spawnSync } from 'node:child_process';

/**
 * What the broker writes segments, journal files and sockets with, the calls that make a file
 * durable, and the opens and closes that say which descriptors write durably (O_DSYNC).
 */
const TRACED = [
  'openat',
  'close',
  'pwrite64',
  'pwritev',
  'pwritev2',
  'write',
  'writev',
  'sendto',
  'sendmsg',
  'fdatasync',
  'fsync',
];
const WRITES = new Set(['pwrite64', 'pwritev', 'pwritev2', 'write', 'writev', 'sendto', 'sendmsg']);
const SYNCS = new Set(['fdatasync', 'fsync']);

/** Throws a message that says how to install strace when it is missing. */
export function requireStrace(): void {
  const probe = spawnSync('strace', ['-V'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    throw new Error(
      'strace is not installed: this test traces the broker process to see the order of its writes, ' +
        'fdatasyncs and responses. Install it (apt-get install -y strace) and run again.',
    );
  }
}

/**
 * strace's flags, before the traced command: every thread (-f), the path of every fd (-y), every
 * byte as \xNN (-xx, paths included), whole buffers, absolute nanosecond stamps and durations.
 */
export function straceArgs(output: string): string[] {
  return [
    '-f',
    '--seccomp-bpf', // untraced calls do not stop the broker at all
    '-y',
    '-xx',
    '-s',
    String(4 << 20),
    '--absolute-timestamps=format:unix,precision:ns',
    '--syscall-times=ns',
    '-e',
    `trace=${TRACED.join(',')}`,
    '-o',
    output,
  ];
}

export interface Syscall {
  /** The thread that made it. */
  tid: number;
  name: string;
  /**
   * The first argument's fd path as -y prints it ('socket:[…]' for a socket), '' if none; for
   * openat, the path opened.
   */
  path: string;
  /** The first argument's fd (for openat, the fd it returned), -1 if none. */
  fd: number;
  /** openat's flags as strace prints them ('O_WRONLY|O_CREAT|O_DSYNC|O_DIRECT'), else ''. */
  flags: string;
  /** Nanoseconds since the epoch at the entry stop and at the exit stop. */
  start: bigint;
  end: bigint;
  /** The return value (-1 for an error). */
  result: number;
  /** The bytes a write call passed (its iovecs joined), empty for other calls. */
  data: Buffer;
}

const LINE = /^(\d+) +(\d+)\.(\d{9}) (.*)$/;
const UNFINISHED = ' <unfinished ...>';
const RESUMED = /^<\.\.\. (\w+) resumed>(.*)$/;
const CALL = /^(\w+)\((.*)\) += (-?\d+|\?)(.*?)(?: <(\d+)\.(\d{9})>)?$/;
const FD_PATH = /^(\d+)<((?:\\x[0-9a-f]{2})*)>/;
const OPENAT = /^[^,]*, "((?:\\x[0-9a-f]{2})*)", ([A-Z_|0-9]+)/;
const STRING = /"((?:\\x[0-9a-f]{2})*)"/g;
const IOV_STRING = /iov_base="((?:\\x[0-9a-f]{2})*)"/g;

function nanos(seconds: string, fraction: string): bigint {
  return BigInt(seconds) * 1_000_000_000n + BigInt(fraction);
}

function hexBytes(escaped: string): Buffer {
  return Buffer.from(escaped.replaceAll('\\x', ''), 'hex');
}

/** Parses strace output written with `straceArgs`, joining calls split by `<unfinished ...>`, by start. */
export function parseTrace(text: string): Syscall[] {
  const calls: Syscall[] = [];
  const pending = new Map<number, { start: bigint; text: string }>();
  for (const line of text.split('\n')) {
    const stamped = LINE.exec(line);
    if (!stamped) continue;
    const tid = Number(stamped[1]);
    const at = nanos(stamped[2]!, stamped[3]!);
    let rest = stamped[4]!;
    if (rest.startsWith('---') || rest.startsWith('+++')) continue; // signals and exits
    let start = at;
    const resumed = RESUMED.exec(rest);
    if (resumed) {
      const begun = pending.get(tid);
      pending.delete(tid);
      if (!begun?.text.startsWith(`${resumed[1]}(`)) continue;
      start = begun.start;
      rest = begun.text + resumed[2];
    } else if (rest.endsWith(UNFINISHED)) {
      pending.set(tid, { start: at, text: rest.slice(0, -UNFINISHED.length) });
      continue;
    }
    const call = CALL.exec(rest);
    // A call without a duration ('= ? <unavailable>': the process died within it) has no known end.
    if (!call || call[5] === undefined) continue;
    const [, name, args, result, , seconds, fraction] = call;
    const fdPath = FD_PATH.exec(args!);
    const opened = name === 'openat' ? OPENAT.exec(args!) : null;
    let data = Buffer.alloc(0);
    if (WRITES.has(name!)) {
      const iovecs = [...args!.matchAll(IOV_STRING)];
      const strings = iovecs.length > 0 ? iovecs : [...args!.matchAll(STRING)].slice(0, 1);
      data = Buffer.concat(strings.map((m) => hexBytes(m[1]!)));
    }
    calls.push({
      tid,
      name: name!,
      path: opened
        ? hexBytes(opened[1]!).toString('utf8')
        : fdPath
          ? hexBytes(fdPath[2]!).toString('utf8')
          : '',
      fd: opened ? Number(result) : fdPath ? Number(fdPath[1]) : -1,
      flags: opened ? opened[2]! : '',
      start,
      end: start + nanos(seconds!, fraction!),
      result: Number(result),
      data,
    });
  }
  // In the order the calls began (a call split by another thread's is read where it ends).
  return calls.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
}

/** One acknowledged Produce: the offset its response gave and the record values it carried. */
export interface AckedProduce {
  baseOffset: bigint;
  values: string[];
}

/** A node's trace, and whether its copy must be durable before the acknowledgement. */
export interface NodeTrace {
  name: string;
  calls: Syscall[];
}

export interface DurabilityReport {
  /** (record, replica) pairs that held: made durable by a write or sync that ended before the response. */
  held: number;
  /** Per required replica, its durable writes (O_DSYNC journal writes) and its successful fdatasyncs. */
  durableWrites: Record<string, number>;
  /** Why each pair that did not hold failed, one line each. */
  violations: string[];
}

const ms = (ns: bigint) => `${(Number(ns % 1_000_000_000_000n) / 1e6).toFixed(3)} ms`;

/**
 * The start of the leader's socket write of the Produce response (v0-v8, non-flexible) that gave
 * `baseOffset` to partition `partition` of `topic` without error, or undefined.
 */
function responseWrite(leader: Syscall[], topic: string, partition: number, baseOffset: bigint) {
  const name = Buffer.from(topic);
  for (const call of leader) {
    if (!WRITES.has(call.name) || !call.path.startsWith('socket:') || call.result <= 0) continue;
    const b = call.data;
    // size, correlation id | topics: 1 | name | partitions: 1 | index, error code, base offset
    const at = 8 + 4 + 2 + name.length + 4;
    if (b.length < at + 14 || b.readInt32BE(0) !== b.length - 4) continue;
    if (b.readInt32BE(8) !== 1 || b.readInt16BE(12) !== name.length) continue;
    if (!b.subarray(14, 14 + name.length).equals(name) || b.readInt32BE(at - 4) !== 1) continue;
    if (b.readInt32BE(at) !== partition || b.readInt16BE(at + 4) !== 0) continue;
    if (b.readBigInt64BE(at + 6) === baseOffset) return call;
  }
  return undefined;
}

/** Calls with the fd's open flags (tracked through openat and close) beside them. */
function withOpenFlags(calls: Syscall[]): { call: Syscall; flags: string }[] {
  const open = new Map<number, string>();
  const out: { call: Syscall; flags: string }[] = [];
  for (const call of calls) {
    if (call.name === 'openat') {
      if (call.result >= 0) open.set(call.fd, call.flags);
    } else if (call.name === 'close') {
      open.delete(call.fd);
    } else {
      out.push({ call, flags: open.get(call.fd) ?? '' });
    }
  }
  return out;
}

const SYNC_FLAG = /(^|\|)O_(D?SYNC)(\||$)/;

/**
 * Checks, for every record of every acknowledged Produce and every replica in `required`: the
 * replica wrote the record's bytes, either to a journal file of its data directory through a
 * descriptor opened with O_DSYNC (so the write returned only once the bytes were on disk), or to
 * a journal or segment file of `<topic>-<partition>` that an fdatasync (or fsync) begun after the
 * write made durable; and that write or sync ended before the leader began writing the response
 * that acknowledged the record.
 */
export function checkDurableBeforeAck(options: {
  topic: string;
  partition: number;
  leader: NodeTrace;
  required: NodeTrace[];
  acked: AckedProduce[];
}): DurabilityReport {
  const { topic, partition, leader, required, acked } = options;
  const segment = (path: string) => path.includes(`/${topic}-${partition}/`) && path.endsWith('.log');
  const journal = (path: string) => path.includes('/__journal/') && path.endsWith('.journal');
  const report: DurabilityReport = { held: 0, durableWrites: {}, violations: [] };
  const replicas = required.map((node) => {
    const calls = withOpenFlags(node.calls);
    const writes = calls.filter(
      ({ call: c }) => WRITES.has(c.name) && (segment(c.path) || journal(c.path)) && c.result > 0,
    );
    const syncs = calls
      .map(({ call }) => call)
      .filter((c) => SYNCS.has(c.name) && (segment(c.path) || journal(c.path)) && c.result === 0);
    return { name: node.name, writes, syncs };
  });
  for (const r of replicas) {
    const dsync = r.writes.filter((w) => journal(w.call.path) && SYNC_FLAG.test(w.flags)).length;
    report.durableWrites[r.name] = dsync + r.syncs.length;
  }
  for (const produce of acked) {
    const response = responseWrite(leader.calls, topic, partition, produce.baseOffset);
    if (!response) {
      report.violations.push(
        `no Produce response with base offset ${produce.baseOffset} in ${leader.name}'s socket writes`,
      );
      continue;
    }
    for (const value of produce.values) {
      const bytes = Buffer.from(value);
      for (const r of replicas) {
        const writes = r.writes.filter((w) => w.call.data.includes(bytes));
        if (writes.length === 0) {
          report.violations.push(
            `${value}: ${r.name} never wrote it to a journal file or a segment file of ${topic}-${partition}`,
          );
          continue;
        }
        const durable = writes.some(({ call: write, flags }) => {
          if (journal(write.path) && SYNC_FLAG.test(flags)) return write.end < response.start;
          return r.syncs.some((s) => s.path === write.path && s.start > write.end && s.end < response.start);
        });
        if (durable) {
          report.held += 1;
          continue;
        }
        // Say what the journal write lacked, when there was one.
        const { call: write, flags } = writes.find((w) => journal(w.call.path)) ?? writes[0]!;
        const after = r.syncs.filter((s) => s.path === write.path && s.start > write.end);
        const first = after[0];
        report.violations.push(
          `${value}: ${r.name} wrote it to ${write.path}${flags ? ` (opened ${flags})` : ''} at ` +
            `${ms(write.start)}, the response went out at ${ms(response.start)}, ` +
            (first
              ? `but the first fdatasync of that file after the write returned only at ${ms(first.end)}`
              : journal(write.path) && SYNC_FLAG.test(flags)
                ? `but that synchronous write returned only at ${ms(write.end)}`
                : 'and no fdatasync of that file began after the write'),
        );
      }
    }
  }
  return report;
}
