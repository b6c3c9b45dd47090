// The strace reader and the durable-before-acknowledged check on hand-written traces: calls split
// across threads are joined, and each way the order can be wrong is reported (durable-ack.test.ts
// runs the check on real traces of the broker).
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

function check(syncAt: string) {
  const node = { name: 'node 1', calls: parseTrace(trace(syncAt)) };
  return checkDurableBeforeAck({
    topic: 't',
    partition: 0,
    leader: node,
    required: [node],
    acked: [{ baseOffset: 0n, values: [RECORD] }],
  });
}

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
    expect(check('1.050000000')).toEqual({ held: 1, segmentSyncs: { 'node 1': 1 }, violations: [] });
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
});
