import { describe, expect, it } from 'vitest';
import { changeText, distinctNames, percentChange } from '../src/index.js';

describe('distinctNames', () => {
  const sweep = [111, 2222].map(
    (v) => `a scenario whose name runs well past forty characters [producers.messageSize=${v}]`,
  );

  it('keeps the part of each name that differs, however far into the name it comes', () => {
    expect(distinctNames(sweep)).toEqual([
      'a scenario…[producers.messageSize=111]',
      'a scenario…[producers.messageSize=2222]',
    ]);
  });

  it('leaves names that fit as they are', () => {
    expect(distinctNames(['acks 1', 'acks all'])).toEqual(['acks 1', 'acks all']);
  });

  it('keeps a differing part longer than the limit whole', () => {
    const names = [
      'x '.repeat(30).concat('alpha-beta-gamma-delta-epsilon-zeta-eta-theta'),
      'x '.repeat(30).concat('b'),
    ];
    expect(distinctNames(names)[0]).toBe('…alpha-beta-gamma-delta-epsilon-zeta-eta-theta');
  });

  it('cuts identical long names at the limit', () => {
    const name = 'the same long scenario name run twice to see how much it varies';
    expect(distinctNames([name, name])).toEqual([
      'the same long scenario name run twice t…',
      'the same long scenario name run twice t…',
    ]);
  });
});

describe('changes against a baseline', () => {
  it('are signed percentages, one decimal below 10%', () => {
    expect(changeText(110, 100)).toBe('+10%');
    expect(changeText(95.5, 100)).toBe('-4.5%');
    expect(changeText(350, 100)).toBe('+250%');
  });

  it('are left out where the baseline has no figure or a zero', () => {
    expect(percentChange(5, null)).toBeNull();
    expect(changeText(5, 0)).toBeNull();
    expect(changeText(null, 5)).toBeNull();
  });
});
