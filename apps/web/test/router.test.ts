import { describe, expect, it } from 'vitest';
import { href, parseRoute } from '../src/router';

describe('reproduction routes', () => {
  it('round-trip a folder (user/ ones have a slash) and an optional tag', () => {
    expect(parseRoute(href.reproduction('kreps-2014'))).toEqual({
      page: 'reproduction',
      folder: 'kreps-2014',
      tag: null,
    });
    const tag = 'reproduce:user/mine:20261121-173635-quick';
    expect(href.reproduction('user/mine', tag)).toBe(
      '#/reproductions/user%2Fmine/reproduce%3Auser%2Fmine%3A20261121-173635-quick',
    );
    expect(parseRoute(href.reproduction('user/mine', tag))).toEqual({
      page: 'reproduction',
      folder: 'user/mine',
      tag,
    });
  });
});

describe('trend routes', () => {
  it('round-trip a scenario name with spaces and slashes, a target of bootstrap servers, a sweep value', () => {
    const to = href.trend('kreps-2014 single producer / acks=1', 'b1:9092,b2:9092');
    expect(parseRoute(to)).toEqual({
      page: 'trend',
      scenario: 'kreps-2014 single producer / acks=1',
      target: 'b1:9092,b2:9092',
      sweepValue: null,
    });
    expect(parseRoute(href.trend('sizes', 'bundled', '1KB'))).toEqual({
      page: 'trend',
      scenario: 'sizes',
      target: 'bundled',
      sweepValue: '1KB',
    });
    expect(parseRoute(href.trend('quick start'))).toEqual({
      page: 'trend',
      scenario: 'quick start',
      target: null,
      sweepValue: null,
    });
  });
});
