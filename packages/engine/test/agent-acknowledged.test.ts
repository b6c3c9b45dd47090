// What the controller takes from a load agent's `acknowledged` reply (docs/agents.md, the record check
// on agents): the reply is hostile input, so its size is counted against the run's bound before
// anything of it is kept, and every entry must name a producer of that agent, a topic of the run and
// whole sequences. The run against real agents is in apps/cli/test/agents.test.ts.
import { describe, expect, it } from 'vitest';
import { MAX_ACKNOWLEDGED_RANGES, parseAcknowledged } from '../src/drivers/agents.js';

const TOPICS = ['kbench-r1-0', 'kbench-r1-1'];
const entry = (producer: number, partition: number, starts: number[], ends: number[], topic = TOPICS[0]) => ({
  producer,
  topic,
  partition,
  starts,
  ends,
});

describe('parseAcknowledged', () => {
  it('keeps the ranges of the producers the agent ran, and counts them against the run bound', () => {
    const budget = { left: 10 };
    const reply = [entry(2, 0, [0, 50], [40, 60]), entry(2, 1, [], []), entry(3, 0, [0], [9], TOPICS[1])];
    expect(parseAcknowledged(reply, [2, 3], TOPICS, budget)).toEqual(reply);
    // Two ranges, an empty partition (one at least) and one range.
    expect(budget.left).toBe(6);
  });

  it('refuses more ranges than the run may still take, before keeping any, naming the bound', () => {
    const budget = { left: 3 };
    const reply = [entry(0, 0, [0, 2], [1, 3]), entry(0, 1, [0, 2], [1, 3])];
    expect(() => parseAcknowledged(reply, [0], TOPICS, budget)).toThrow(
      `acknowledged: more than ${MAX_ACKNOWLEDGED_RANGES.toLocaleString('en-US')} ranges of acknowledged sequences over the run's agents (at least 4 from this one): the acknowledged records are too fragmented to check`,
    );
    expect(budget.left).toBe(3);
    // The bound is shared by the run's agents: what one took, the next cannot.
    const shared = { left: 2 };
    parseAcknowledged([entry(0, 0, [0], [5])], [0], TOPICS, shared);
    parseAcknowledged([entry(1, 0, [0], [5])], [1], TOPICS, shared);
    expect(() => parseAcknowledged([entry(2, 0, [0], [5])], [2], TOPICS, shared)).toThrow(/too fragmented/);
  });

  it('refuses an entry that is not one of its producers, topics, partitions or ranges of sequences', () => {
    const refused = (reply: unknown, producers = [4]) => {
      try {
        parseAcknowledged(reply, producers, TOPICS, { left: 100 });
      } catch (err) {
        return (err as Error).message;
      }
      return 'taken';
    };
    expect(refused({ acknowledged: [] })).toBe('acknowledged: the reply has no list');
    expect(refused([null])).toBe('acknowledged[0]: not an object');
    // Another agent's producer: its marks would be taken for this agent's.
    expect(refused([entry(5, 0, [0], [1])])).toBe(
      'acknowledged[0].producer: 5 is not one of the producers this agent ran (4)',
    );
    expect(refused([entry(4, 0, [0], [1], 'elsewhere')])).toBe(
      `acknowledged[0].topic: "elsewhere" is not one of the run's topics`,
    );
    expect(refused([entry(4, -1, [0], [1])])).toBe('acknowledged[0].partition: -1 is not a partition number');
    expect(refused([entry(4, 2 ** 31, [0], [1])])).toBe(
      'acknowledged[0].partition: 2147483648 is not a partition number',
    );
    expect(refused([entry(4, 0, [0, 5], [1])])).toBe(
      'acknowledged[0]: starts and ends are not two lists of one length',
    );
    for (const [start, end] of [
      [5, 4],
      [-1, 3],
      [0.5, 3],
      [0, 2 ** 53],
      ['0', 3],
    ])
      expect(refused([entry(4, 0, [start as number], [end as number])])).toBe(
        `acknowledged[0]: [${JSON.stringify(start)}, ${JSON.stringify(end)}) is not a range of sequences`,
      );
    // Each of its producers is listed: one left out would have its records counted as foreign.
    expect(refused([entry(4, 0, [0], [1])], [4, 6])).toBe(
      'acknowledged: producer 6 of this agent is not listed',
    );
  });
});
