// The strace reader and the durable-before-acknowledged check on hand-written traces: calls split
// across threads are joined, a journal descriptor's O_DSYNC is followed from its openat, and each
// way the order can be wrong is reported (durable-ack.test.ts runs the check on real traces of the
// broker).
import { describe, expect, it } from 'vitest';
import { checkDurableBeforeAck, parseTrace } from './syscall-trace.js';

const hex = (bytes: Buffer | string) =>
  [...Buffer.from(bytes)].map((b) => `\\x${b.toString(16).padStart(2, '0')}`).join('');
const SEGMENT = '/d/t-0/00000000000000000000.log';
const RECORD = '<record 1>';

/** The Produce response frame (v3 shape) for partition 0 of topic t at `baseOffset`. */
function produceResponse(baseOffset: bigint): Buffer {
  const body = Buffer.alloc(4 + 2 + 1 + 4 + 4 + 2 + 8 + 8 + 4);
  let at = body.writeInt32BE(1, 0);
  at = body.writeInt16BE(1, at);
  at += body.write('t', at);
  at = body.writeInt32BE(1, at);
  at = body.writeInt32BE(0, at);
  at = body.writeInt16BE(0, at);
  body.writeBigInt64BE(baseOffset, at);
  const head = Buffer.alloc(8);
  head.writeInt32BE(4 + body.length, 0);
  head.writeInt32BE(7, 4);
  return Buffer.concat([head, body]);
}

/** A trace: thread 11 writes the record at t=1.0 s (10 us); thread 12 syncs from `syncAt` for 1 ms
 * (split by the response, which thread 13 writes at t=1.1 s as two iovecs). */
function trace(syncAt: string): string {
  const response = produceResponse(0n);
  return [
    `11 1.000000000 pwrite64(5<${hex(SEGMENT)}>, "${hex(`batch ${RECORD} end`)}", 20, 0) = 20 <0.000010000>`,
    `12 ${syncAt} fdatasync(5<${hex(SEGMENT)}> <unfinished ...>`,
    `13 1.100000000 writev(9<${hex('socket:[7]')}>, [{iov_base="${hex(response.subarray(0, 8))}", iov_len=8}, ` +
      `{iov_base="${hex(response.subarray(8))}", iov_len=${response.length - 8}}], 2) = ${response.length} <0.000005000>`,
    `12 1.200000000 <... fdatasync resumed>) = 0 <0.001000000>`,
    '13 1.300000000 +++ exited with 0 +++',
  ].join('\n');
}

/** The check of one node's `text`, which acknowledged RECORD at offset 0. */
function checkTrace(text: string) {
  const node = { name: 'node 1', calls: parseTrace(text) };
  return checkDurableBeforeAck({
    topic: 't',
    partition: 0,
    leader: node,
    required: [node],
    acked: [{ baseOffset: 0n, values: [RECORD] }],
  });
}

const check = (syncAt: string) => checkTrace(trace(syncAt));

describe('syscall trace', () => {
  it("joins a call split by another thread's, with its start and its duration, in the order calls began", () => {
    const calls = parseTrace(trace('1.050000000'));
    expect(calls.map((c) => [c.tid, c.name, c.path])).toEqual([
      [11, 'pwrite64', SEGMENT],
      [12, 'fdatasync', SEGMENT],
      [13, 'writev', 'socket:[7]'],
    ]);
    expect(calls[1]).toMatchObject({ start: 1_050_000_000n, end: 1_051_000_000n, result: 0 });
    expect(calls[2]!.data).toEqual(produceResponse(0n));
  });

  it('holds when the fdatasync runs between the write and the response', () => {
    expect(check('1.050000000')).toEqual({ held: 1, durableWrites: { 'node 1': 1 }, violations: [] });
  });

  it('fails when the fdatasync returns after the response began', () => {
    const report = check('1.099500000');
    expect(report.held).toBe(0);
    expect(report.violations).toEqual([
      expect.stringMatching(/first fdatasync of that file after the write returned only at/),
    ]);
  });

  it('fails when the only fdatasync began before the write ended', () => {
    const report = check('1.000005000');
    expect(report.held).toBe(0);
    expect(report.violations).toEqual([
      expect.stringMatching(/no fdatasync of that file began after the write/),
    ]);
  });

  describe('journal writes', () => {
    const JOURNAL = '/d/__journal/00000000000000000001.journal';
    const SPARE = '/d/__journal/00000000000000000009.spare';

    /** Thread 11 opens `opened` with `flags` as fd 7, which now names the journal, and writes the
     * record through it at t=1.0 s for `took`; the response goes out at t=1.1 s. */
    function journalTrace(flags: string, took: string, opened = JOURNAL): string {
      const response = produceResponse(0n);
      return [
        `11 0.900000000 openat(AT_FDCWD<${hex('/')}>, "${hex(opened)}", ${flags}, 0666) = 7<${hex(opened)}> <0.000010000>`,
        `11 0.950000000 pwrite64(6<${hex(SEGMENT)}>, "${hex(`batch ${RECORD} end`)}", 20, 0) = 20 <0.000010000>`,
        `11 1.000000000 pwrite64(7<${hex(JOURNAL)}>, "${hex(`record batch ${RECORD} end`)}", 4096, 4096) = 4096 <${took}>`,
        `13 1.100000000 writev(9<${hex('socket:[7]')}>, [{iov_base="${hex(response)}", iov_len=${response.length}}], 1) = ${response.length} <0.000005000>`,
      ].join('\n');
    }

    it('holds for a write through a descriptor opened with O_DSYNC that returned before the response', () => {
      const report = checkTrace(journalTrace('O_WRONLY|O_CREAT|O_DSYNC|O_DIRECT', '0.000400000'));
      expect(report).toEqual({ held: 1, durableWrites: { 'node 1': 1 }, violations: [] });
    });

    it('follows a spare opened with O_DSYNC and renamed into a journal file', () => {
      const report = checkTrace(journalTrace('O_WRONLY|O_DSYNC|O_DIRECT', '0.000400000', SPARE));
      expect(report.held).toBe(1);
    });

    it('fails when the journal descriptor was opened without O_DSYNC and nothing synced it', () => {
      const report = checkTrace(journalTrace('O_WRONLY|O_CREAT|O_DIRECT', '0.000400000'));
      expect(report.held).toBe(0);
      expect(report.violations).toEqual([
        expect.stringMatching(/no fdatasync of that file began after the write/),
      ]);
    });

    it('fails when the synchronous write returned after the response began', () => {
      const report = checkTrace(journalTrace('O_WRONLY|O_DSYNC|O_DIRECT', '0.200000000'));
      expect(report.held).toBe(0);
      expect(report.violations).toEqual([expect.stringMatching(/that synchronous write returned only at/)]);
    });
  });
});
