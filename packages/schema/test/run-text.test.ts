import { describe, expect, it } from 'vitest';
import {
  clientPaceWarning,
  faultText,
  machineShareWarning,
  machineText,
  type RunSummary,
  rateShortfallWarning,
} from '../src/index.js';

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

  it('how long a fault waited for the fault before it on its node', () => {
    const kill = {
      t: 8.4,
      action: 'kill',
      target: 2,
      node: 2,
      durationMs: null,
      error: null,
      waitedMs: 2412,
    } as const;
    expect(faultText(kill)).toBe(
      'kill node 2 (after 2.4 s waiting for the fault before it on the node to end)',
    );
    expect(faultText({ ...kill, waitedMs: 6 })).toBe(
      'kill node 2 (after 6 ms waiting for the fault before it on the node to end)',
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

describe('rateShortfallWarning', () => {
  const summary = (recordsPerSec: number, findMaxRate?: number | null): RunSummary => ({
    measuredSeconds: 60,
    produced: { records: recordsPerSec * 60, recordsPerSec, mbPerSec: 1, wireMbPerSec: null, errors: 0 },
    consumed: { records: 0, recordsPerSec: 0, mbPerSec: 0 },
    publishLatencyMs: null,
    endToEndLatencyMs: null,
    ...(findMaxRate === undefined ? {} : { findMax: { rate: findMaxRate, trials: [] } }),
  });
  const scenario = (rate: number | 'max' | 'find-max', driver = 'native', count = 1) => ({
    driver,
    producers: { count, rate, maxInFlight: 5 },
  });

  it('says how much of the asked rate an open-loop run reached, below 95%', () => {
    expect(rateShortfallWarning(scenario(1000), summary(184))).toBe(
      "the producers reached 184 of the 1,000 records/s asked (18%): the target or the clients could not keep up. Latencies count from each record's intended send time, so they include the time records waited to be sent.",
    );
    expect(rateShortfallWarning(scenario(1000), summary(949))).toMatch(/reached 949 of the 1,000/);
  });

  it('names the kafkajs producer limit on that driver', () => {
    expect(rateShortfallWarning(scenario(1000, 'kafkajs'), summary(184))).toMatch(
      /at most producers\.maxInFlight \(5\) sends in flight.*driver: native, load harder\.$/,
    );
  });

  it('judges a find-max run against the rate it settled on', () => {
    expect(rateShortfallWarning(scenario('find-max'), summary(500, 1000))).toMatch(
      /reached 500 of the 1,000/,
    );
    expect(rateShortfallWarning(scenario('find-max'), summary(500, null))).toBeNull();
  });

  it('says nothing for a closed loop, a run that reached 95%, or one without producers', () => {
    expect(rateShortfallWarning(scenario('max'), summary(10))).toBeNull();
    expect(rateShortfallWarning(scenario(1000), summary(950))).toBeNull();
    expect(rateShortfallWarning(scenario(1000, 'native', 0), summary(0))).toBeNull();
  });
});

describe('machineText', () => {
  const base: RunSummary = {
    measuredSeconds: 10,
    produced: { records: 1_000, recordsPerSec: 100, mbPerSec: 100, wireMbPerSec: null, errors: 0 },
    consumed: { records: 0, recordsPerSec: 0, mbPerSec: 0 },
    publishLatencyMs: null,
    endToEndLatencyMs: null,
  };

  it('says how busy the machine was and what the data disk wrote against the bytes produced', () => {
    const machine = { cpuBusy: 0.876, cores: 2, disk: 'vda', diskWrittenBytes: 2050 * 1024 * 1024 };
    expect(machineText({ ...base, machine })).toBe(
      "this machine: 88% of its 2 cores busy; the disk under the broker's data (vda) wrote 2,050 MB, 2.05x the value bytes produced",
    );
  });

  it('says when there is no disk figure, leaves out a ratio over nothing, and is null without figures', () => {
    const external = { cpuBusy: 0.4, cores: 8, disk: null, diskWrittenBytes: null };
    expect(machineText({ ...base, machine: external })).toBe(
      "this machine: 40% of its 8 cores busy; no disk figure (the broker's data is elsewhere, or on no single disk of this machine)",
    );
    const idle = { ...base, produced: { ...base.produced, mbPerSec: 0 } };
    const machine = { cpuBusy: 0.1, cores: 2, disk: 'vda', diskWrittenBytes: 1024 * 1024 };
    expect(machineText({ ...idle, machine })).toBe(
      "this machine: 10% of its 2 cores busy; the disk under the broker's data (vda) wrote 1 MB",
    );
    expect(machineText(base)).toBeNull();
  });
});

describe('machineShareWarning', () => {
  const summary = (cores: number, othersCores: number | null | undefined): RunSummary => ({
    measuredSeconds: 10,
    produced: { records: 1_000, recordsPerSec: 100, mbPerSec: 1, wireMbPerSec: null, errors: 0 },
    consumed: { records: 0, recordsPerSec: 0, mbPerSec: 0 },
    publishLatencyMs: null,
    endToEndLatencyMs: null,
    machine: {
      cpuBusy: 0.9,
      cores,
      disk: null,
      diskWrittenBytes: null,
      ...(othersCores === undefined ? {} : { othersCores }),
    },
  });

  it('warns from half a core and a tenth of the machine busy outside kbench', () => {
    expect(machineShareWarning(summary(2, 0.5))).toBe(
      "something besides this run kept 0.5 of this machine's 2 cores busy on average while it was measured (processes kbench did not start, and the kernel's own threads): these figures are not those of a run alone",
    );
    expect(machineShareWarning(summary(2, 0.49))).toBeNull();
    // On 16 cores a tenth is 1.6 cores.
    expect(machineShareWarning(summary(16, 1.5))).toBeNull();
    expect(machineShareWarning(summary(16, 1.6))).toMatch(/kept 1\.6 of this machine's 16 cores/);
  });

  it('leaves the warning to the one about concurrent kbench runs, where there were any', () => {
    expect(machineShareWarning(summary(2, 1.2), ['a1b2c3d4e5f6'])).toBeNull();
    expect(machineShareWarning(summary(2, 1.2), [])).not.toBeNull();
  });

  it('says nothing where it could not be told, or in runs stored before it was', () => {
    expect(machineShareWarning(summary(2, null))).toBeNull();
    expect(machineShareWarning(summary(2, undefined))).toBeNull();
  });
});
