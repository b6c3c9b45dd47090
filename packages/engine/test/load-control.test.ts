// When an open-loop producer's sends are due, and when producers stop: pure, no broker.
import { describe, expect, it } from 'vitest';
import { LoadControl, RateSchedule } from '../src/load-control.js';

describe('RateSchedule', () => {
  it('puts each send at the time its first record is due, a short last send after the full ones', () => {
    const schedule = new RateSchedule(1_000_000, 2000);
    // 10 records a send at 2,000 records/s: a send every 5 ms; the last, of 5 records, at 10 ms.
    expect([schedule.next(10), schedule.next(10), schedule.next(5), schedule.next(10)]).toEqual([
      1_000_000, 1_005_000, 1_010_000, 1_012_500,
    ]);
  });
});

describe('LoadControl', () => {
  it('under a record limit hands out exactly the limit, and the records claimed are still to be sent', () => {
    const control = new LoadControl(null, 25, () => 0);
    expect([control.claim(10), control.claim(10), control.claim(10), control.claim(10)]).toEqual([
      10, 10, 5, 0,
    ]);
    expect(control.stopped).toBe(true);
    // Claimed records are sent: only a stop or the end of the run's time drops them.
    expect(control.over).toBe(false);
    control.stop();
    expect(control.over).toBe(true);
  });

  it('stops handing out records once its time is up', () => {
    let now = 0;
    const control = new LoadControl(1000, null, () => now);
    expect(control.claim(7)).toBe(7);
    now = 1000;
    expect(control.over).toBe(true);
    expect(control.claim(7)).toBe(0);
  });
});
