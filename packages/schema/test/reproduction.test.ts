import { describe, expect, it } from 'vitest';
import { parseScenario } from '../src/parse.js';
import {
  aboutDuration,
  estimateReproduction,
  estimateRunSeconds,
  parseReproductionTag,
  reproductionTag,
} from '../src/reproduction.js';

describe('reproduction tags', () => {
  const at = new Date('2026-11-21T17:36:35.123Z');

  it('name the folder and the second the reproduction started, and say when it was quick', () => {
    expect(reproductionTag('kreps-2014', at, false)).toBe('reproduce:kreps-2014:20261121-173635');
    expect(reproductionTag('user/mine', at, true, '.2')).toBe('reproduce:user/mine:20261121-173635.2-quick');
  });

  it('read back, and no other tag reads as one', () => {
    expect(parseReproductionTag(reproductionTag('user/mine', at, true))).toEqual({
      folder: 'user/mine',
      quick: true,
    });
    expect(parseReproductionTag('reproduce:kreps-2014:20261121-173635')).toEqual({
      folder: 'kreps-2014',
      quick: false,
    });
    for (const other of [
      'baseline',
      'reproduce:kreps-2014',
      'reproduce::20261121-173635',
      'reproduce:x:today',
    ])
      expect(parseReproductionTag(other)).toBeUndefined();
  });
});

describe('reproduction estimates', () => {
  const plan = (raw: Record<string, unknown>) => parseScenario({ name: 'x', ...raw });

  it('add warm-up, measured time and setup, and count runs bounded by records apart', () => {
    const estimate = estimateReproduction([
      plan({ duration: '6m', warmup: '1m' }),
      plan({ duration: '60s' }),
      plan({ records: 1000 }),
    ]);
    expect(estimate).toEqual({ runs: 3, seconds: 420 + 5 + 60 + 5, unbounded: 1 });
    expect(estimateRunSeconds(plan({ records: 1000 }))).toBeNull();
  });

  it('read as an estimate', () => {
    expect(aboutDuration(12)).toBe('about 10 s');
    expect(aboutDuration(130)).toBe('about 2 min');
    expect(aboutDuration(5525)).toBe('about 1 h 32 min');
    expect(aboutDuration(7200)).toBe('about 2 h');
  });
});
