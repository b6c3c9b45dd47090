// The stored form of a sample's histograms, percentiles of a window merged from them, and the
// HdrHistogram interval log, checked against hdr-histogram-js as an independent reader.
import { build, HistogramLogReader } from 'hdr-histogram-js';
import { describe, expect, it } from 'vitest';
import { hdrIntervalLog } from '../src/hdr-log.js';
import { bucketOf, bucketTop, LatencyHistogram } from '../src/histogram.js';
import { decodeHistogram, encodeHistogram } from '../src/histogram-codec.js';
import { agentsLatency, type IntervalHistograms, windowLatency } from '../src/stored-latency.js';

/** A deterministic spread of latencies in µs: mostly small, a long tail up to seconds. */
function values(seed: number, n: number): number[] {
  let x = seed;
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    const u = x / 2 ** 31;
    out.push(Math.round(50 + 10 ** (u * 6.5)));
  }
  return out;
}

/** The reader's count of values from low to high, summed over its own buckets. */
function countBetween(histogram: unknown, low: number, high: number): number {
  const h = histogram as { countsArrayIndex(v: number): number; getCountAtIndex(i: number): number };
  let n = 0;
  for (let i = h.countsArrayIndex(low); i <= h.countsArrayIndex(high); i++) n += h.getCountAtIndex(i);
  return n;
}

function histogramOf(vs: number[]): LatencyHistogram {
  const h = new LatencyHistogram();
  for (const v of vs) h.record(v);
  return h;
}

describe('histogram bytes', () => {
  it('round-trip every bucket, count, sum and max', () => {
    for (const n of [0, 1, 7, 5000]) {
      const h = histogramOf(values(n + 1, n)).toBuckets();
      const back = decodeHistogram(encodeHistogram(h));
      expect(LatencyHistogram.fromBuckets(back).sortedBuckets()).toEqual(
        LatencyHistogram.fromBuckets(h).sortedBuckets(),
      );
      expect({ count: back.count, sum: back.sum, max: back.max }).toEqual({
        count: h.count,
        sum: h.sum,
        max: h.max,
      });
    }
  });

  it('refuse bytes that are not a histogram, naming what is wrong', () => {
    expect(() => decodeHistogram(Uint8Array.from([9]))).toThrow(/unknown format 9/);
    expect(() => decodeHistogram(Uint8Array.from([1, 0xff, 0xff, 0xff, 0x7f]))).toThrow(/claim \d+ buckets/);
    expect(() => decodeHistogram(Uint8Array.from([1, 1, 5, 1]))).toThrow(/end inside/);
  });
});

describe('percentiles of a window', () => {
  it('equal those of a histogram built from the raw values of that window, across runs', () => {
    // Two runs of ten 1-second intervals; the window is seconds 3..7 of both, warm-up (t=1) left out.
    const raw = new Map<string, number[]>();
    const runs: IntervalHistograms[][] = [0, 1].map((run) =>
      Array.from({ length: 10 }, (_, i) => {
        const t = i + 1;
        const publish = values(100 * run + t, 200 + 37 * t);
        const e2e = values(1000 * run + t, 150);
        raw.set(`${run}:${t}`, publish);
        raw.set(`${run}:${t}:e2e`, e2e);
        return {
          t,
          warmup: t === 1,
          publish: histogramOf(publish).toBuckets(),
          e2e: histogramOf(e2e).toBuckets(),
        };
      }),
    );
    const window = windowLatency(runs, { from: 3, to: 7 });
    const expected = histogramOf(
      [0, 1].flatMap((run) => [4, 5, 6, 7].flatMap((t) => raw.get(`${run}:${t}`) ?? [])),
    );
    const expectedE2e = histogramOf(
      [0, 1].flatMap((run) => [4, 5, 6, 7].flatMap((t) => raw.get(`${run}:${t}:e2e`) ?? [])),
    );
    expect(window.samples).toBe(8);
    expect(window.publishLatencyMs).toEqual(expected.summaryMs());
    expect(window.endToEndLatencyMs).toEqual(expectedE2e.summaryMs());
    // The whole of one run, warm-up left out, is its measured summary.
    const whole = histogramOf([2, 3, 4, 5, 6, 7, 8, 9, 10].flatMap((t) => raw.get(`0:${t}`) ?? []));
    expect(windowLatency([runs[0] ?? []]).publishLatencyMs).toEqual(whole.summaryMs());
    // And with warm-up asked for, t=1 is in.
    expect(windowLatency([runs[0] ?? []], { to: 1, warmup: true }).publishLatencyMs).toEqual(
      histogramOf(raw.get('0:1') ?? []).summaryMs(),
    );
  });
});

describe('the HdrHistogram interval log', () => {
  it('is read back by hdr-histogram-js with every count in the same bucket, and the same percentiles', () => {
    const intervals = [1, 2, 3].map((t) => histogramOf(values(t, 3000)).toBuckets());
    // Edge values: bucket boundaries below and above 1024 and 2048, and a lone maximum.
    intervals.push(
      histogramOf([0, 1, 1023, 1024, 1025, 2047, 2048, 2049, 4095, 4096, 123_457, 7_654_321]).toBuckets(),
    );
    const log = hdrIntervalLog(
      intervals.map((histogram, i) => ({ startSec: i, lengthSec: 1, tag: 'publish', histogram })),
      new Date('2026-01-02T03:04:05.000Z'),
      '[a test]',
    );
    expect(log).toContain('#[StartTime: 1767323045.000');
    expect(log).toContain(
      '"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"',
    );
    const reader = new HistogramLogReader(log);
    for (const [i, ours] of intervals.entries()) {
      const theirs = reader.nextIntervalHistogram();
      expect(theirs, `interval ${i}`).not.toBeNull();
      if (!theirs) return;
      expect(theirs.tag).toBe('publish');
      expect(theirs.startTimeStampMsec).toBe(1767323045000 + i * 1000);
      expect(theirs.totalCount).toBe(ours.count);
      // Each of our buckets' counts lies in their histogram within that bucket's range.
      const mine = LatencyHistogram.fromBuckets(ours);
      for (const [bucket, n] of mine.sortedBuckets()) {
        const low = bucket < 1024 ? bucket : bucketTop(bucket - 1) + 1;
        const high = Math.min(bucketTop(bucket), ours.max);
        expect(bucketOf(low)).toBe(bucket);
        expect(countBetween(theirs, low, high), `bucket ${bucket}`).toBe(n);
      }
      // Percentiles agree exactly except where ours is the maximum (reported to their resolution).
      for (const p of [1, 25, 50, 75, 90, 95, 99, 99.9, 99.99, 100]) {
        // Where p% of the count is a whole number both take that rank (p99.9 of 3000 is rank 2997).
        const value = mine.percentile(p);
        const expected =
          value === ours.max
            ? (theirs as unknown as { highestEquivalentValue(v: number): number }).highestEquivalentValue(
                ours.max,
              )
            : value;
        expect(theirs.getValueAtPercentile(p), `p${p}`).toBe(expected);
      }
      expect((theirs as unknown as { maxValue: number }).maxValue).toBe(
        (theirs as unknown as { highestEquivalentValue(v: number): number }).highestEquivalentValue(ours.max),
      );
    }
    expect(reader.nextIntervalHistogram()).toBeNull();
    // A reader's merge of the log is the merge of ours.
    const merged = build();
    const again = new HistogramLogReader(log);
    for (let h = again.nextIntervalHistogram(); h; h = again.nextIntervalHistogram()) merged.add(h);
    expect(merged.totalCount).toBe(intervals.reduce((n, h) => n + h.count, 0));
  });
});

describe("percentiles of a run's agents", () => {
  it('equal those of the merged raw values of the agents chosen', () => {
    const side = (values: number[]) => ({
      records: values.length,
      valueBytes: 0,
      recordsPerSec: 0,
      errors: 0,
      latencyMs: null,
      histogram: histogramOf(values).toBuckets(),
    });
    const agent = (name: string, seed: number) => ({
      name,
      address: `${name}:7000`,
      host: name,
      cores: 2,
      kbench: '0.1.0',
      roles: ['producers' as const, 'consumers' as const],
      producers: 1,
      consumers: 1,
      clockOffsetMs: 0,
      clockUncertaintyMs: 0,
      lostAtMs: null,
      lostReason: null,
      produced: side(values(seed, 500)),
      consumed: side(values(seed + 50, 300)),
    });
    const agents = [agent('a', 1), agent('b', 2), agent('c', 3)];
    const two = agentsLatency(agents, ['a', 'c']);
    expect(two.publishLatencyMs).toEqual(histogramOf([...values(1, 500), ...values(3, 500)]).summaryMs());
    expect(two.endToEndLatencyMs).toEqual(histogramOf([...values(51, 300), ...values(53, 300)]).summaryMs());
    expect(agentsLatency(agents).publishLatencyMs?.count).toBe(1500);
  });
});
