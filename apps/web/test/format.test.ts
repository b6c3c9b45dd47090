import { describe, expect, it } from 'vitest';
import { formatBytes, formatElapsed, formatMBPerSec, formatMs, formatRecordsPerSec } from '../src/format';

describe('format', () => {
  it('scales record rates to k and M', () => {
    expect(formatRecordsPerSec(950)).toBe('950 rec/s');
    expect(formatRecordsPerSec(9_999)).toBe('9,999 rec/s');
    expect(formatRecordsPerSec(12_345)).toBe('12.3 k rec/s');
    expect(formatRecordsPerSec(2_345_678)).toBe('2.35 M rec/s');
  });

  it('writes latencies in µs, ms or s', () => {
    expect(formatMs(0.042)).toBe('42 µs');
    expect(formatMs(4.5678)).toBe('4.57 ms');
    expect(formatMs(2500)).toBe('2.50 s');
    expect(formatMs(null)).toBe('–');
  });

  it('writes MB/s, sizes in powers of 1024, and elapsed time', () => {
    expect(formatMBPerSec(123.4)).toBe('123 MB/s');
    expect(formatBytes(1536)).toBe('1.50 KB');
    expect(formatElapsed(65_000)).toBe('1 min 05 s');
  });
});
