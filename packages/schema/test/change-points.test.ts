import { describe, expect, it } from 'vitest';
import { changePoints, seededRandom } from '../src/index.js';

/** Normal noise around `level` from a seeded generator (Box-Muller), so each test sees the same series. */
function noise(count: number, level: number, spread: number, seed: number): number[] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, () => {
    const u = 1 - random();
    const v = random();
    return level + spread * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  });
}

describe('changePoints (e-divisive means)', () => {
  it('finds a clear step at the index of the first point after it, with the means either side', () => {
    const series = [...noise(15, 100, 2, 7), ...noise(15, 80, 2, 8)];
    const found = changePoints(series);
    expect(found.map((c) => c.index)).toEqual([15]);
    const [step] = found;
    expect(step?.before).toBeCloseTo(100, 0);
    expect(step?.after).toBeCloseTo(80, 0);
    expect(step?.changePercent).toBeCloseTo(-20, 0);
    expect(step?.pValue).toBeLessThanOrEqual(0.05);
  });

  it('finds none in pure noise', () => {
    for (const seed of [1, 2, 3]) expect(changePoints(noise(40, 50, 5, seed))).toEqual([]);
  });

  it('finds both steps of a series that goes up and then down', () => {
    const series = [...noise(12, 10, 0.5, 11), ...noise(12, 20, 0.5, 12), ...noise(12, 12, 0.5, 13)];
    expect(changePoints(series).map((c) => c.index)).toEqual([12, 24]);
  });

  it('gives the same answer for the same seed', () => {
    const series = [...noise(8, 10, 2, 21), ...noise(8, 13, 2, 22)];
    expect(changePoints(series, { seed: 5 })).toEqual(changePoints(series, { seed: 5 }));
  });

  it('finds none in a series shorter than two segments, or empty, or constant', () => {
    expect(changePoints([])).toEqual([]);
    expect(changePoints([1])).toEqual([]);
    expect(changePoints([1, 100, 1])).toEqual([]);
    expect(changePoints([5, 5, 5, 5, 5, 5, 5, 5])).toEqual([]);
  });

  it('calls a clean step from 4 runs either side, not from 3 (too few orders for the permutation test)', () => {
    const step = (before: number, after: number) => [
      ...Array.from({ length: before }, (_, i) => 100 + (i % 2)),
      ...Array.from({ length: after }, (_, i) => 80 + (i % 2)),
    ];
    expect(changePoints(step(4, 4)).map((c) => c.index)).toEqual([4]);
    expect(changePoints(step(3, 3))).toEqual([]);
  });

  it('counts a permutation that gives the same split as at least as extreme, rounding errors aside', () => {
    // 4 points: a third of all orders split them the same way, so p is about 1/3, never 0.05.
    expect(changePoints([40.191, 22.015, 120.703, 285.695])).toEqual([]);
  });

  it('keeps at least minSegment points on each side', () => {
    const series = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 50];
    expect(changePoints(series, { minSegment: 3 })).toEqual([]);
  });

  it('refuses a value that is not a finite number', () => {
    expect(() => changePoints([1, 2, Number.NaN, 4])).toThrow(/finite/);
  });
});
