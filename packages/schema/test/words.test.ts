import { describe, expect, it } from 'vitest';
import { didYouMean, editDistance, fileErrorText, nearest } from '../src/words.js';

describe('editDistance', () => {
  it.each([
    ['', '', 0],
    ['kafka', 'kafka', 0],
    ['kafak', 'kafka', 1],
    ['bundeled', 'bundled', 1],
    ['kitten', 'sitting', 3],
    ['', 'abc', 3],
  ])('%s -> %s is %i', (a, b, d) => {
    expect(editDistance(a, b)).toBe(d);
    expect(editDistance(b, a)).toBe(d);
  });
});

describe('nearest', () => {
  const names = ['bundled', 'kafka', 'prod-east', 'prod-west'];
  it('finds a typo and keeps the candidate spelling', () => {
    expect(nearest('Kafak', names)).toBe('kafka');
    expect(nearest('prod-eats', names)).toBe('prod-east');
  });
  it('does not guess when nothing is close', () => {
    expect(nearest('zzzzzz', names)).toBeUndefined();
    expect(didYouMean('zzzzzz', names)).toBe('');
  });
  it('takes a name that contains the word', () => {
    expect(nearest('quick', ['quickstart', 'kreps-2014/consumer-1'])).toBe('quickstart');
  });
});

describe('fileErrorText', () => {
  it('puts errno codes in words', () => {
    expect(fileErrorText(Object.assign(new Error('x'), { code: 'ENOENT' }))).toBe('no such file');
    expect(fileErrorText(Object.assign(new Error('x'), { code: 'EACCES' }))).toBe('permission denied');
    expect(fileErrorText(new Error('something else'))).toBe('something else');
  });
});
