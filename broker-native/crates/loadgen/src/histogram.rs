//! Log-linear latency histogram in microseconds. The bucketing is a contract with the TypeScript
//! side (`packages/engine/src/histogram.ts`), which merges these buckets into its own histogram.

/// Sub-bucket bits: every value is kept to within 1/1024 of itself.
pub const SUB_BITS: u32 = 10;
pub const SUB_BUCKETS: u64 = 1 << SUB_BITS;

/// The bucket of a value: exact below 1024, then 1024 sub-buckets per power of two.
#[inline]
pub fn bucket_of(value: u64) -> usize {
    if value < SUB_BUCKETS {
        return value as usize;
    }
    let exponent = 63 - value.leading_zeros() - SUB_BITS + 1;
    (u64::from(exponent) * SUB_BUCKETS + (value >> exponent)) as usize
}

/// The lowest value that falls in a bucket.
pub fn bucket_floor(bucket: usize) -> u64 {
    let bucket = bucket as u64;
    if bucket < SUB_BUCKETS {
        return bucket;
    }
    let exponent = bucket / SUB_BUCKETS;
    (bucket % SUB_BUCKETS) << exponent
}

/// Counts per bucket (dense, grown on demand) plus count, sum and max.
#[derive(Debug, Default, Clone)]
pub struct Histogram {
    counts: Vec<u64>,
    count: u64,
    sum: u64,
    max: u64,
}

/// A histogram as parallel arrays of the non-empty buckets, to cross the napi boundary.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct HistogramSnapshot {
    pub buckets: Vec<u32>,
    pub counts: Vec<u64>,
    pub count: u64,
    pub sum: u64,
    pub max: u64,
}

impl HistogramSnapshot {
    /// Adds `other` in: the counts of a bucket add up, so a merge is exact (no averaging).
    pub fn merge(&mut self, other: &HistogramSnapshot) {
        let (mut buckets, mut counts) = (vec![], vec![]);
        let (mut i, mut j) = (0, 0);
        while i < self.buckets.len() || j < other.buckets.len() {
            let mine = self.buckets.get(i).copied().unwrap_or(u32::MAX);
            let theirs = other.buckets.get(j).copied().unwrap_or(u32::MAX);
            let mut n = 0;
            if mine <= theirs {
                n += self.counts[i];
                i += 1;
            }
            if theirs <= mine {
                n += other.counts[j];
                j += 1;
            }
            buckets.push(mine.min(theirs));
            counts.push(n);
        }
        self.buckets = buckets;
        self.counts = counts;
        self.count += other.count;
        self.sum += other.sum;
        self.max = self.max.max(other.max);
    }
}

impl Histogram {
    /// Records a latency in microseconds, rounded; negative values (clock skew) count as 0.
    #[inline]
    pub fn record(&mut self, micros: f64) {
        let value = if micros > 0.0 {
            micros.round() as u64
        } else {
            0
        };
        let bucket = bucket_of(value);
        if bucket >= self.counts.len() {
            self.counts.resize(bucket + 1, 0);
        }
        self.counts[bucket] += 1;
        self.count += 1;
        self.sum += value;
        self.max = self.max.max(value);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn snapshot(&self) -> HistogramSnapshot {
        let mut snapshot = HistogramSnapshot {
            count: self.count,
            sum: self.sum,
            max: self.max,
            ..HistogramSnapshot::default()
        };
        for (bucket, &n) in self.counts.iter().enumerate() {
            if n > 0 {
                snapshot.buckets.push(bucket as u32);
                snapshot.counts.push(n);
            }
        }
        snapshot
    }

    /// The lowest value of the bucket holding the q-quantile (0..=1).
    pub fn quantile(&self, q: f64) -> u64 {
        let rank = ((self.count as f64) * q).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (bucket, &n) in self.counts.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return bucket_floor(bucket);
            }
        }
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_below_a_hundred_are_exact() {
        for v in 1..=100u64 {
            let mut h = Histogram::default();
            h.record(v as f64);
            assert_eq!(h.quantile(0.5), v);
            assert_eq!(bucket_of(v), v as usize);
        }
    }

    #[test]
    fn large_value_is_within_a_thousandth_and_not_above() {
        let mut h = Histogram::default();
        h.record(5_123_457.0);
        let p = h.quantile(0.99) as f64;
        assert!(p >= 5_123_457.0 * 0.999, "{p}");
        assert!(p <= 5_123_457.0, "{p}");
    }

    #[test]
    fn bucketing_matches_the_typescript_formula() {
        // bucket(v) = e * 1024 + floor(v / 2^e) with e = floor(log2 v) - 10 + 1
        for v in [
            1024u64,
            1025,
            2047,
            2048,
            4095,
            5_123_457,
            1 << 40,
            (1 << 50) + 12_345,
        ] {
            let e = (v as f64).log2().floor() as u64 - 10 + 1;
            assert_eq!(bucket_of(v) as u64, e * 1024 + v / (1u64 << e), "v = {v}");
        }
    }

    #[test]
    fn merged_snapshots_equal_one_histogram_of_every_value() {
        let (mut a, mut b, mut all) = (
            Histogram::default(),
            Histogram::default(),
            Histogram::default(),
        );
        for v in [1.0, 5.0, 5.0, 2000.0, 70_000.0] {
            a.record(v);
            all.record(v);
        }
        for v in [0.0, 5.0, 3000.0, 70_001.0, 9e9] {
            b.record(v);
            all.record(v);
        }
        let mut merged = a.snapshot();
        merged.merge(&b.snapshot());
        assert_eq!(merged, all.snapshot());
        let mut empty = HistogramSnapshot::default();
        empty.merge(&all.snapshot());
        assert_eq!(empty, all.snapshot());
    }

    #[test]
    fn snapshot_lists_only_non_empty_buckets() {
        let mut h = Histogram::default();
        h.record(3.0);
        h.record(3.0);
        h.record(-5.0);
        h.record(2000.0);
        let s = h.snapshot();
        assert_eq!(s.buckets, vec![0, 3, bucket_of(2000) as u32]);
        assert_eq!(s.counts, vec![1, 2, 1]);
        assert_eq!((s.count, s.sum, s.max), (4, 2006, 2000));
    }
}
