// The search, driven by model brokers (plain functions of the offered rate), so its convergence is
// checked exactly. The engine's trials against the real broker are covered in run.test.ts.
import { parseScenario } from '@kbench/schema';
import { describe, expect, it } from 'vitest';
import { findMaxRate, type TrialOutcome } from '../src/find-max.js';

const bounds = parseScenario({}).findMax;

/** A broker that serves `capacity` rec/s with p99 rising sharply as load nears it. */
function modelBroker(capacity: number) {
  return async (rate: number | null): Promise<TrialOutcome> => {
    const offered = rate ?? capacity;
    const achieved = Math.min(offered, capacity);
    const load = achieved / capacity;
    return {
      achievedPerSec: achieved,
      publishP99Ms: load < 0.8 ? 5 : 5 + (load - 0.8) * 2000,
      backlogGrowth: 0,
      errors: 0,
    };
  };
}

describe('findMaxRate', () => {
  it('converges to just below where p99 crosses the bound', async () => {
    // p99 = 100 ms at load 0.8475, so the true answer is 84,750 rec/s.
    const result = await findMaxRate(modelBroker(100_000), bounds);
    expect(result.rate).not.toBeNull();
    expect(result.rate!).toBeLessThanOrEqual(84_750);
    expect(result.rate!).toBeGreaterThanOrEqual(84_750 * (1 - bounds.precision));
    expect(result.trials.length).toBeLessThanOrEqual(bounds.maxTrials);
    expect(result.trials[0]?.rate).toBeNull();
  });

  it('every passing trial is below every failing one', async () => {
    const result = await findMaxRate(modelBroker(37_000), { ...bounds, precision: 0.01 });
    const passing = result.trials.filter((t) => t.rate !== null && t.pass).map((t) => t.rate!);
    const failing = result.trials.filter((t) => t.rate !== null && !t.pass).map((t) => t.rate!);
    expect(Math.max(...passing)).toBeLessThan(Math.min(...failing));
    expect(result.rate).toBe(Math.max(...passing));
  });

  it('fails a trial whose consumers fall behind', async () => {
    const result = await findMaxRate(
      async (rate) => ({
        achievedPerSec: rate ?? 1000,
        publishP99Ms: 1,
        backlogGrowth: (rate ?? 1000) * 2,
        errors: 0,
      }),
      bounds,
    );
    expect(result.rate).toBeNull();
    expect(result.trials.every((t) => !t.pass)).toBe(true);
    expect(result.trials[1]?.reason).toContain('backlog grew');
  });

  it('stops after maxTrials', async () => {
    const result = await findMaxRate(modelBroker(1_000_000), { ...bounds, precision: 0.005, maxTrials: 4 });
    expect(result.trials.length).toBe(4);
  });

  it('reports no rate when even the probe acknowledged nothing', async () => {
    const result = await findMaxRate(
      async () => ({ achievedPerSec: 0, publishP99Ms: null, backlogGrowth: 0, errors: 10 }),
      bounds,
    );
    expect(result).toEqual({ rate: null, trials: [expect.objectContaining({ pass: false })] });
  });

  it('with a ceiling, probes at the ceiling as a fixed rate and never tries above it', async () => {
    const capped = await findMaxRate(modelBroker(100_000), bounds, undefined, undefined, 20_000);
    expect(capped.trials).toHaveLength(1);
    expect(capped.trials[0]?.rate).toBe(20_000);
    expect(capped.rate).toBe(20_000);

    const result = await findMaxRate(modelBroker(100_000), bounds, undefined, undefined, 95_000);
    expect(result.trials[0]?.rate).toBe(95_000);
    expect(Math.max(...result.trials.map((t) => t.rate ?? Infinity))).toBe(95_000);
    expect(result.rate!).toBeLessThanOrEqual(84_750);
    expect(result.rate!).toBeGreaterThanOrEqual(84_750 * (1 - bounds.precision));
  });
});
