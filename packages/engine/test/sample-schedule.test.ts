// The sampling schedule: the scenario's interval, and fine samples while a fault is in progress.
import { parseScenario } from '@kbench/schema';
import { describe, expect, it } from 'vitest';
import { FAULT_MARGIN_MS, faultWindows, SampleSchedule } from '../src/sample-schedule.js';

/** The cuts a schedule makes up to `endMs`. */
function cuts(schedule: SampleSchedule, endMs: number): number[] {
  const out: number[] = [];
  for (let t = schedule.next(0); t <= endMs; t = schedule.next(t)) out.push(t);
  return out;
}

const gaps = (times: number[]) => times.slice(1).map((t, i) => t - (times[i] as number));

describe('the sampling schedule', () => {
  it('cuts every sampleIntervalMs when there is no fault', () => {
    expect(cuts(SampleSchedule.of(parseScenario({})), 5000)).toEqual([1000, 2000, 3000, 4000, 5000]);
    expect(cuts(SampleSchedule.of(parseScenario({ sampleIntervalMs: 250 })), 1000)).toEqual([
      250, 500, 750, 1000,
    ]);
    expect(SampleSchedule.of(parseScenario({})).finestMs).toBe(1000);
  });

  it('cuts every 100 ms from a fault until 5 s after it ends, then rejoins the whole seconds', () => {
    const s = parseScenario({
      cluster: { nodes: 3 },
      faults: [{ at: '3s', action: 'pause', node: 1, for: '1s' }],
    });
    expect(faultWindows(s.faults)).toEqual([{ from: 3000, to: 4000 + FAULT_MARGIN_MS }]);
    const schedule = SampleSchedule.of(s);
    expect(schedule.finestMs).toBe(100);
    const times = cuts(schedule, 12_000);
    expect(times.filter((t) => t <= 3000)).toEqual([1000, 2000, 3000]);
    const fine = times.filter((t) => t > 3000 && t <= 9000);
    expect(fine).toHaveLength(60);
    expect(new Set(gaps([3000, ...fine]))).toEqual(new Set([100]));
    expect(times.filter((t) => t > 9000)).toEqual([10_000, 11_000, 12_000]);
  });

  it('starts fine sampling at a fault between whole seconds, never cutting less than the fine interval', () => {
    const schedule = new SampleSchedule(1000, 100, [{ from: 2050, to: 2500 }]);
    const times = cuts(schedule, 4000);
    expect(times).toEqual([1000, 2000, 2100, 2200, 2300, 2400, 2500, 3000, 4000]);
    expect(Math.min(...gaps(times))).toBe(100);
    // Leaving a window 100 ms before a whole second: the next cut skips it rather than cut 100 ms.
    expect(cuts(new SampleSchedule(1000, 300, [{ from: 1000, to: 1800 }]), 3000)).toEqual([
      1000, 1300, 1600, 1900, 3000,
    ]);
  });

  it('is off when faultSampleIntervalMs is not below sampleIntervalMs', () => {
    const faults = [{ at: '2s', action: 'kill' as const, node: 1 }];
    const off = SampleSchedule.of(
      parseScenario({ cluster: { nodes: 3 }, faults, faultSampleIntervalMs: 1000 }),
    );
    expect(off.finestMs).toBe(1000);
    expect(cuts(off, 4000)).toEqual([1000, 2000, 3000, 4000]);
    const same = SampleSchedule.of(
      parseScenario({ cluster: { nodes: 3 }, faults, sampleIntervalMs: 200, faultSampleIntervalMs: 500 }),
    );
    expect(same.finestMs).toBe(200);
    expect(new Set(gaps(cuts(same, 4000)))).toEqual(new Set([200]));
  });

  it('extends fine sampling for a fault carried out later than planned', () => {
    const schedule = new SampleSchedule(1000, 200, []);
    expect(schedule.next(1000)).toBe(2000);
    schedule.extend(1500, 2400);
    expect(cuts(schedule, 4000)).toEqual([1000, 1500, 1700, 1900, 2100, 2300, 2500, 3000, 4000]);
  });
});
