// A log-linear latency histogram in microseconds, in the manner of HdrHistogram:
// every value is kept to within 1/SUB_BUCKETS of itself (about 0.1%), whatever its size,
// so a 50 µs ack and a 5 s stall are both measured honestly in one small structure.
import type { LatencySummary } from '@kbench/schema';

export const SUB_BITS = 10;
const SUB_BUCKETS = 1 << SUB_BITS; // 1024 sub-buckets per power of two: 3 significant digits

/** The bucket index of a value in µs (an integer >= 0). */
export function bucketOf(value: number): number {
  if (value < SUB_BUCKETS) return value;
  const exponent = Math.floor(Math.log2(value)) - SUB_BITS + 1;
  const mantissa = Math.floor(value / 2 ** exponent);
  return exponent * SUB_BUCKETS + mantissa;
}

/** The highest value that falls in a bucket (reported values never understate latency). */
/**
 * The 1-based rank of a share of a count: the count times the share, rounded up, at least 1. The
 * product is taken to a whole number when it is within floating-point error of one, so p99.9 of
 * 3000 values is rank 2997 (99.9 / 100 * 3000 is 2997.0000000000005 in doubles, which a bare ceil
 * made 2998).
 */
export function rankOf(exact: number): number {
  const whole = Math.round(exact);
  const rounded = Math.abs(exact - whole) <= 1e-9 * Math.max(1, Math.abs(exact)) ? whole : Math.ceil(exact);
  return Math.max(1, rounded);
}

export function bucketTop(bucket: number): number {
  if (bucket < SUB_BUCKETS) return bucket;
  const exponent = Math.floor(bucket / SUB_BUCKETS);
  const mantissa = bucket % SUB_BUCKETS;
  return (mantissa + 1) * 2 ** exponent - 1;
}

/**
 * A histogram as arrays of bucket indexes and counts, with count, sum and max in microseconds.
 * The Rust load engine produces the same buckets (SUB_BITS = 10), so both merge into one summary.
 */
export interface HistogramBuckets {
  buckets: number[];
  counts: number[];
  count: number;
  sum: number;
  max: number;
}

export class LatencyHistogram {
  private counts = new Map<number, number>();
  private total = 0;
  private sum = 0;
  private maxValue = 0;

  get count(): number {
    return this.total;
  }

  /** Records a latency in microseconds `times` times (a batch acked at once counts for each record). */
  record(micros: number, times = 1): void {
    if (times <= 0) return;
    const value = Math.max(0, Math.round(micros));
    const bucket = bucketOf(value);
    this.counts.set(bucket, (this.counts.get(bucket) ?? 0) + times);
    this.total += times;
    this.sum += value * times;
    if (value > this.maxValue) this.maxValue = value;
  }

  add(other: LatencyHistogram): void {
    for (const [bucket, n] of other.counts) this.counts.set(bucket, (this.counts.get(bucket) ?? 0) + n);
    this.total += other.total;
    this.sum += other.sum;
    if (other.maxValue > this.maxValue) this.maxValue = other.maxValue;
  }

  /** The histogram as plain arrays, to cross a thread or napi boundary. Bucketing is part of the contract. */
  toBuckets(): HistogramBuckets {
    const buckets: number[] = [];
    const counts: number[] = [];
    for (const [bucket, n] of this.counts) {
      buckets.push(bucket);
      counts.push(n);
    }
    return { buckets, counts, count: this.total, sum: this.sum, max: this.maxValue };
  }

  /** Adds a histogram sent as buckets (from a worker thread or the native engine). */
  addBuckets(h: HistogramBuckets): void {
    h.buckets.forEach((bucket, i) => {
      const n = h.counts[i] ?? 0;
      if (n > 0) this.counts.set(bucket, (this.counts.get(bucket) ?? 0) + n);
    });
    this.total += h.count;
    this.sum += h.sum;
    if (h.max > this.maxValue) this.maxValue = h.max;
  }

  reset(): void {
    this.counts.clear();
    this.total = 0;
    this.sum = 0;
    this.maxValue = 0;
  }

  /** A histogram holding these buckets. */
  static fromBuckets(h: HistogramBuckets): LatencyHistogram {
    const out = new LatencyHistogram();
    out.addBuckets(h);
    return out;
  }

  /** [bucket, count] pairs in bucket order. */
  sortedBuckets(): [number, number][] {
    return [...this.counts.entries()].sort((a, b) => a[0] - b[0]);
  }

  /** The value at a percentile (0..100) in microseconds: the smallest value with that share at or below it. */
  percentile(p: number): number {
    if (this.total === 0) return 0;
    const rank = rankOf((p / 100) * this.total);
    let seen = 0;
    for (const [bucket, n] of this.sortedBuckets()) {
      seen += n;
      if (seen >= rank) return Math.min(bucketTop(bucket), this.maxValue);
    }
    return this.maxValue;
  }

  max(): number {
    return this.maxValue;
  }

  mean(): number {
    return this.total === 0 ? 0 : this.sum / this.total;
  }

  /** Mean of the slowest `share` (0..1) of values, in microseconds. */
  worstMean(share: number): number {
    if (this.total === 0) return 0;
    let wanted = rankOf(this.total * share);
    let acc = 0;
    const taken = wanted;
    const buckets = this.sortedBuckets();
    for (let i = buckets.length - 1; i >= 0 && wanted > 0; i--) {
      const [bucket, n] = buckets[i] as [number, number];
      const take = Math.min(n, wanted);
      acc += take * Math.min(bucketTop(bucket), this.maxValue);
      wanted -= take;
    }
    return acc / taken;
  }

  summaryMs(): LatencySummary {
    const ms = (us: number) => Math.round(us) / 1000;
    return {
      count: this.total,
      p50: ms(this.percentile(50)),
      p75: ms(this.percentile(75)),
      p95: ms(this.percentile(95)),
      p99: ms(this.percentile(99)),
      p999: ms(this.percentile(99.9)),
      p9999: ms(this.percentile(99.99)),
      max: ms(this.maxValue),
      mean: ms(this.mean()),
      worst10Mean: ms(this.worstMean(0.1)),
    };
  }
}
