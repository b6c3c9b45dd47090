// HdrHistogram's interval log (.hlog, as HistogramLogAnalyzer and HdrHistogram's log readers read
// it), written from the engine's histograms. Each interval is an HdrHistogram in its compressed V2
// encoding, base64, encoded here from the HdrHistogram specification.
//
// The mapping. Our buckets (histogram.ts, SUB_BITS 10) are exact below 1024 µs and then 512 buckets
// per power of two. An HdrHistogram with 3 significant digits and a lowest discernible value of 1
// is exact below 2048 and then has 1024 buckets per power of two: each of its buckets lies inside
// one of ours, and each of ours ends where one of its ends. So each of our buckets is recorded at
// its highest value, and an HdrHistogram reader reports the very percentiles we do, with one
// exception: the bucket holding the maximum is recorded at the maximum (our percentiles never pass
// it), which a reader reports to its own resolution, at most 1/2048 (0.05%) above it.
import { deflateSync } from 'node:zlib';
import { bucketOf, bucketTop, type HistogramBuckets } from './histogram.js';

const ENCODING_COOKIE = 0x1c849303 | 0x10;
const COMPRESSED_COOKIE = 0x1c849304 | 0x10;
const SIGNIFICANT_DIGITS = 3;
/** HdrHistogram's sub-buckets at 3 significant digits: 2^ceil(log2(2 * 10^3)). */
const HDR_SUB_BUCKETS = 2048;
const HDR_HALF = HDR_SUB_BUCKETS / 2;
/** The range the exported histograms declare: up to an hour in µs, or the maximum when longer. */
const HIGHEST_TRACKABLE = 3_600_000_000;

/** The index of a value's bucket in an HdrHistogram of 3 significant digits, lowest value 1. */
export function hdrIndex(value: number): number {
  if (value < HDR_SUB_BUCKETS) return value;
  const n = Math.floor(Math.log2(value));
  const shift = n - 10;
  const sub = Math.floor(value / 2 ** shift);
  return shift * HDR_HALF + sub;
}

/** The value each of our buckets is recorded at: its highest, but never past the maximum. */
function recordedValues(h: HistogramBuckets): Map<number, number> {
  const counts = new Map<number, number>();
  const maxBucket = bucketOf(h.max);
  h.buckets.forEach((bucket, i) => {
    const n = h.counts[i] ?? 0;
    if (n <= 0) return;
    const value = bucket === maxBucket ? h.max : Math.min(bucketTop(bucket), h.max);
    counts.set(value, (counts.get(value) ?? 0) + n);
  });
  return counts;
}

/** ZigZag LEB128 of a signed integer (HdrHistogram uses at most 9 bytes; our counts need fewer). */
function putZigZag(out: number[], value: number): void {
  let v = value >= 0 ? value * 2 : -value * 2 - 1;
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  out.push(v);
}

function int32(value: number): number[] {
  return [(value >>> 24) & 0xff, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff];
}

function int64(value: number): number[] {
  return [...int32(Math.floor(value / 2 ** 32)), ...int32(value % 2 ** 32)];
}

/** The uncompressed V2 encoding: a 40-byte header, then the counts with runs of zeros as one negative number. */
export function hdrEncode(h: HistogramBuckets): Uint8Array {
  const byIndex = new Map<number, number>();
  for (const [value, n] of recordedValues(h)) {
    const index = hdrIndex(value);
    byIndex.set(index, (byIndex.get(index) ?? 0) + n);
  }
  const indexes = [...byIndex.keys()].sort((a, b) => a - b);
  const payload: number[] = [];
  let next = 0;
  for (const index of indexes) {
    const zeros = index - next;
    if (zeros === 1) putZigZag(payload, 0);
    else if (zeros > 1) putZigZag(payload, -zeros);
    putZigZag(payload, byIndex.get(index) ?? 0);
    next = index + 1;
  }
  const ratio = new Uint8Array(8);
  new DataView(ratio.buffer).setFloat64(0, 1);
  const header = [
    ...int32(ENCODING_COOKIE),
    ...int32(payload.length),
    ...int32(0), // normalizing index offset
    ...int32(SIGNIFICANT_DIGITS),
    ...int64(1), // lowest discernible value
    ...int64(Math.max(HIGHEST_TRACKABLE, h.max)),
    ...ratio, // integer to double conversion ratio
  ];
  return Uint8Array.from([...header, ...payload]);
}

/** The compressed V2 encoding (zlib of the uncompressed one behind its own cookie and length), in base64. */
export function hdrCompressedBase64(h: HistogramBuckets): string {
  const compressed = deflateSync(hdrEncode(h));
  const head = Uint8Array.from([...int32(COMPRESSED_COOKIE), ...int32(compressed.length)]);
  return Buffer.concat([head, compressed]).toString('base64');
}

export interface LogInterval {
  /** Seconds since the log's base time at which the interval began, and its length. */
  startSec: number;
  lengthSec: number;
  /** Written as `Tag=<tag>,` before the interval (HistogramLogAnalyzer shows each tag apart). */
  tag?: string;
  histogram: HistogramBuckets;
}

/**
 * An interval log. Values are µs; Interval_Max is written in ms (a max value unit ratio of 1000).
 * `startTime` is the moment the intervals count from, also written as the base time.
 */
export function hdrIntervalLog(intervals: LogInterval[], startTime: Date, comment?: string): string {
  const seconds = (startTime.getTime() / 1000).toFixed(3);
  const lines = [
    ...(comment ? comment.split('\n').map((line) => `#${line}`) : []),
    '#[Histogram log format version 1.3]',
    `#[StartTime: ${seconds} (seconds since epoch), ${startTime.toISOString()}]`,
    `#[BaseTime: ${seconds} (seconds since epoch)]`,
    '#[Values in microseconds; Interval_Max in milliseconds]',
    '"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"',
  ];
  for (const interval of intervals) {
    const fields = [
      interval.startSec.toFixed(3),
      interval.lengthSec.toFixed(3),
      (interval.histogram.max / 1000).toFixed(3),
      hdrCompressedBase64(interval.histogram),
    ];
    lines.push(`${interval.tag ? `Tag=${interval.tag},` : ''}${fields.join(',')}`);
  }
  return `${lines.join('\n')}\n`;
}
