import { describe, expect, it } from 'vitest';
import { clientPaceWarning, faultText } from '../src/index.js';

const load = { cpuCores: 1.2, includesBroker: true };

describe('clientPaceWarning', () => {
  it('names the thread that was near 100% busy', () => {
    const warning = clientPaceWarning({ ...load, producerBusy: 0.97, consumerBusy: 0.3 });
    expect(warning).toMatch(/^the client, not the target, set the pace \(producer thread 97% busy\)/);
  });

  it('names both threads when both were', () => {
    const warning = clientPaceWarning({ ...load, producerBusy: 0.9, consumerBusy: 0.99 });
    expect(warning).toContain('(producer thread 90% busy, consumer thread 99% busy)');
  });

  it('says nothing when the threads had time to spare, or the figures are missing', () => {
    expect(clientPaceWarning({ ...load, producerBusy: 0.89, consumerBusy: null })).toBeNull();
    expect(clientPaceWarning(undefined)).toBeNull();
  });
});

describe('faultText', () => {
  it('says what was done to which node, for how long', () => {
    const pause = { t: 1, action: 'pause', target: 2, node: 2, durationMs: 500, error: null } as const;
    expect(faultText(pause)).toBe('pause node 2 for 500 ms');
  });

  it('names the node a leader resolved to, and why a fault failed', () => {
    const kill = {
      t: 2,
      action: 'kill',
      target: 'leader:t-0',
      node: 1,
      durationMs: null,
      error: null,
    } as const;
    expect(faultText(kill)).toBe('kill leader:t-0 (node 1)');
    expect(faultText({ ...kill, node: null, error: 'no such topic' })).toBe(
      'kill leader:t-0: failed, no such topic',
    );
  });

  it("a rolling restart's nodes in turn, and the partitions a preferred election moved", () => {
    const base = {
      action: 'rolling-restart',
      target: '',
      node: null,
      durationMs: null,
      error: null,
    } as const;
    const steps = [
      { node: 1, t: 1, upT: 1.1, inSyncT: 1.6, error: null },
      {
        node: 2,
        t: 1.6,
        upT: 1.7,
        inSyncT: null,
        error: 'node 2 was not back in the ISR of all its partitions within 30 s',
      },
    ];
    expect(faultText({ ...base, t: 1, steps, error: null })).toBe(
      'rolling-restart: node 1 in sync after 0.6 s, node 2 not back in sync',
    );
    const failed =
      'node 2 was not back in the ISR of all its partitions within 30 s; the nodes after it were not restarted';
    expect(faultText({ ...base, t: 1, steps, error: failed })).toMatch(
      /node 2 not back in sync; failed, node 2 was not back/,
    );
    const preferred = { ...base, t: 5, action: 'preferred-leaders', moved: 1 } as const;
    expect(faultText(preferred)).toBe('preferred-leaders: 1 partition moved back');
    const moves = Array.from({ length: 6 }, (_, partition) => ({
      topic: 'kbench-r-0',
      partition,
      from: partition === 1 ? null : 2,
      to: 1,
    }));
    expect(faultText({ ...preferred, moved: 51, moves })).toBe(
      'preferred-leaders: 51 partitions moved back; kbench-r-0-0 from node 2 to node 1, kbench-r-0-1 from no leader to node 1, kbench-r-0-2 from node 2 to node 1, kbench-r-0-3 from node 2 to node 1 and 2 more',
    );
  });
});
