// The compact bytes a sample's latency histogram is stored as in the history (sample_histograms):
// a format byte, then unsigned LEB128 varints: the number of buckets, each bucket as the gap from
// the previous bucket index and its count, then the sum and the max in µs. The count is the sum of
// the counts. Format 2 is the same varints through raw deflate, used when that is smaller.
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { bucketOf, type HistogramBuckets } from './histogram.js';

const VARINTS = 1;
const DEFLATED = 2;
/** No histogram holds more buckets than there are for values up to 2^53 µs. */
const MAX_BUCKETS = bucketOf(Number.MAX_SAFE_INTEGER) + 1;
/** Inflated bytes are bounded by the largest histogram's varints. */
const MAX_INFLATED = 1 + 10 * (1 + 2 * MAX_BUCKETS + 2);

function putVarint(out: number[], value: number): void {
  let v = value;
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  out.push(v);
}

class Reader {
  private at = 0;
  constructor(private readonly bytes: Uint8Array) {}

  varint(what: string): number {
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 8; i++) {
      const byte = this.bytes[this.at++];
      if (byte === undefined) throw new Error(`histogram bytes end inside the ${what}`);
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) return value;
      scale *= 0x80;
    }
    throw new Error(`histogram bytes hold a ${what} longer than 8 bytes`);
  }

  get left(): number {
    return this.bytes.length - this.at;
  }
}

/** A histogram as the bytes the history stores. */
export function encodeHistogram(h: HistogramBuckets): Uint8Array {
  const pairs = h.buckets.map((bucket, i) => [bucket, h.counts[i] ?? 0] as const).filter(([, n]) => n > 0);
  pairs.sort((a, b) => a[0] - b[0]);
  const out: number[] = [];
  putVarint(out, pairs.length);
  let previous = 0;
  for (const [bucket, n] of pairs) {
    putVarint(out, bucket - previous);
    putVarint(out, n);
    previous = bucket;
  }
  putVarint(out, Math.round(h.sum));
  putVarint(out, Math.round(h.max));
  const plain = Uint8Array.from(out);
  const deflated = deflateRawSync(plain);
  if (deflated.length < plain.length) return Uint8Array.from([DEFLATED, ...deflated]);
  return Uint8Array.from([VARINTS, ...plain]);
}

/** The histogram stored as these bytes; a clear error for bytes that are not one. */
export function decodeHistogram(bytes: Uint8Array): HistogramBuckets {
  const format = bytes[0];
  let body: Uint8Array;
  if (format === VARINTS) body = bytes.subarray(1);
  else if (format === DEFLATED)
    body = new Uint8Array(inflateRawSync(bytes.subarray(1), { maxOutputLength: MAX_INFLATED }));
  else throw new Error(`histogram bytes of unknown format ${String(format)} (known: 1, 2)`);
  const reader = new Reader(body);
  const n = reader.varint('bucket count');
  if (n > MAX_BUCKETS || n * 2 > reader.left)
    throw new Error(`histogram bytes claim ${n} buckets, more than they can hold`);
  const buckets: number[] = [];
  const counts: number[] = [];
  let bucket = 0;
  let count = 0;
  for (let i = 0; i < n; i++) {
    bucket += reader.varint('bucket gap');
    if (bucket >= MAX_BUCKETS) throw new Error(`histogram bytes name bucket ${bucket}, past the last one`);
    const c = reader.varint('bucket count');
    buckets.push(bucket);
    counts.push(c);
    count += c;
  }
  const sum = reader.varint('sum');
  const max = reader.varint('max');
  return { buckets, counts, count, sum, max };
}
