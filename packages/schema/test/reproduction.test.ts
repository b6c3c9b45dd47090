import { describe, expect, it } from 'vitest';
import { parseReproductionTag, reproductionTag } from '../src/reproduction.js';

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
