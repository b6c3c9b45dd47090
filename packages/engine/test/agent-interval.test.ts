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
  latency: { buckets: [5], counts: [10], count: 10, sum: 50, max: 9 },
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
});
