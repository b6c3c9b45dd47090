// What the controller takes from a load agent's interval (docs/agents.md, Interval): the reply is
// hostile input, so its error messages are a bounded list of texts with counts, and an interval
// from an agent that does not send them still reads, as the count alone.
import { describe, expect, it } from 'vitest';
import { parseInterval } from '../src/drivers/agents.js';
import { MAX_ERROR_MESSAGES } from '../src/interval.js';

const interval = (extra: Record<string, unknown>) => ({
  records: 10,
  valueBytes: 1000,
  wireBytes: 1100,
  errors: 3,
  latency: { buckets: [5], counts: [10], count: 10, sum: 50, max: 5 },
  ...extra,
});

describe('parseInterval', () => {
  it('keeps what the errors said, most frequent first', () => {
    const parsed = parseInterval(
      interval({
        errorMessages: [
          { message: 'connection refused', count: 1 },
          { message: 'produce: Kafka error code 6, retrying', count: 2 },
        ],
      }),
      'interval',
    );
    expect(parsed.errors).toBe(3);
    expect(parsed.errorMessages).toEqual([
      { message: 'produce: Kafka error code 6, retrying', count: 2 },
      { message: 'connection refused', count: 1 },
    ]);
  });

  it('reads an interval without error messages (an older agent) as the count alone', () => {
    const parsed = parseInterval(interval({}), 'interval');
    expect(parsed.errors).toBe(3);
    expect(parsed.errorMessages).toBeUndefined();
  });

  it('refuses a list longer than the agent may send, or entries that are not a text and a count', () => {
    const many = Array.from({ length: MAX_ERROR_MESSAGES + 2 }, (_, i) => ({ message: `e${i}`, count: 1 }));
    expect(() => parseInterval(interval({ errorMessages: many }), 'interval')).toThrow(
      /interval\.errorMessages is not a list of at most 17/,
    );
    expect(() => parseInterval(interval({ errorMessages: 'boom' }), 'interval')).toThrow(/not a list/);
    expect(() => parseInterval(interval({ errorMessages: [{ message: 7, count: 1 }] }), 'interval')).toThrow(
      /errorMessages\[0\]\.message is not text/,
    );
    expect(() =>
      parseInterval(interval({ errorMessages: [{ message: 'x', count: -1 }] }), 'interval'),
    ).toThrow(/errorMessages\[0\]\.count is not a count/);
  });

  it('cuts a long message', () => {
    const parsed = parseInterval(
      interval({ errorMessages: [{ message: 'x'.repeat(1_000_000), count: 1 }] }),
      'interval',
    );
    expect(parsed.errorMessages?.[0]?.message.length).toBeLessThanOrEqual(300);
  });

  it('refuses figures an agent cannot have measured, naming the field, rather than store them', () => {
    const latency = (l: Record<string, unknown>) =>
      interval({ latency: { buckets: [5], counts: [10], count: 10, sum: 50, max: 5, ...l } });
    for (const [bad, message] of [
      [interval({ records: 1.5 }), /interval\.records is not a count \(got 1\.5\)/],
      [interval({ valueBytes: 1e300 }), /interval\.valueBytes is not a count/],
      [interval({ errors: -1 }), /interval\.errors is not a count/],
      [
        latency({ count: 1e9 }),
        /interval\.latency\.count is 1000000000, not the sum of its buckets' counts \(10\)/,
      ],
      [
        latency({ buckets: [1e12] }),
        /interval\.latency\.buckets\[0\] is not a bucket \(0 to 56319; got 1000000000000\)/,
      ],
      [latency({ buckets: [2.5] }), /interval\.latency\.buckets\[0\] is not a count/],
      [
        latency({ buckets: [7, 5], counts: [5, 5], sum: 60, max: 7 }),
        /interval\.latency\.buckets\[1\] does not come after the bucket before it/,
      ],
      [latency({ max: 1 }), /interval\.latency\.max is 1 µs, not in its highest bucket \(5 to 5 µs\)/],
      [interval({ busy: 1.5 }), /interval\.busy is not a share from 0 to 1 \(got 1\.5\)/],
      [interval({ busy: '0.5' }), /interval\.busy is not a share from 0 to 1/],
      [
        latency({ sum: 5e9 }),
        /interval\.latency\.sum is 5000000000 µs, which 10 values in its buckets cannot add up to \(50 to 50 µs\)/,
      ],
      [
        latency({ buckets: Array.from({ length: 1 << 17 }, (_, i) => i), counts: Array(1 << 17).fill(1) }),
        /buckets and counts are not two lists of one length, at most 56320/,
      ],
    ] as const)
      expect(() => parseInterval(bad, 'interval')).toThrow(message);
    // An empty histogram has nothing in it, max and sum included.
    expect(() => latency({ buckets: [], counts: [], count: 0, sum: 0, max: 3 })).not.toThrow();
    expect(() => parseInterval(latency({ buckets: [], counts: [], count: 0, sum: 0, max: 3 }), 'i')).toThrow(
      /i\.latency\.max is 3 µs, not in its highest bucket \(none: 0\)/,
    );
  });

  it("reads the busiest client's running share, null from an agent that sends none", () => {
    expect(parseInterval(interval({ busy: 0.97 }), 'i').busy).toBe(0.97);
    expect(parseInterval(interval({}), 'i').busy).toBeNull();
    expect(parseInterval(interval({ busy: null }), 'i').busy).toBeNull();
  });
});
