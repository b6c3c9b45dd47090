import { describe, expect, it } from 'vitest';
import { formatDurationMs, parseDurationMs, parseSizeBytes } from '../src/index.js';

describe('units', () => {
  it('parses durations', () => {
    expect(parseDurationMs('500ms')).toBe(500);
    expect(parseDurationMs('1.5s')).toBe(1500);
    expect(parseDurationMs('2m')).toBe(120_000);
    expect(parseDurationMs(3)).toBe(3000);
    expect(parseDurationMs('3 days')).toBeUndefined();
    expect(parseDurationMs(-1)).toBeUndefined();
  });

  it('formats durations the short way', () => {
    expect(formatDurationMs(60_000)).toBe('60s');
    expect(formatDurationMs(300_000)).toBe('5m');
    expect(formatDurationMs(7_200_000)).toBe('2h');
    expect(formatDurationMs(1500)).toBe('1.5s');
    expect(formatDurationMs(250)).toBe('250ms');
    expect(formatDurationMs(0)).toBe('0s');
  });

  it('parses sizes in powers of 1024', () => {
    expect(parseSizeBytes('1KB')).toBe(1024);
    expect(parseSizeBytes('2 GiB')).toBe(2 * 1024 ** 3);
    expect(parseSizeBytes(100)).toBe(100);
    expect(parseSizeBytes('1.5MB')).toBe(1.5 * 1024 * 1024);
    expect(parseSizeBytes('10 parsecs')).toBeUndefined();
    expect(parseSizeBytes(1.5)).toBeUndefined();
  });
});
