//! Record values and keys: a pre-generated random pool, the shared send-time stamp and a small
//! PRNG, so that the hot path never generates random bytes per record.

use std::time::{SystemTime, UNIX_EPOCH};

/// A value of this many bytes or more carries its send time (f64 LE, µs since the epoch) first.
pub const STAMP_BYTES: usize = 8;
const POOL_BYTES: usize = 1 << 20;
/// Successive values start this far apart in the pool (a prime, so starts do not repeat soon).
const POOL_STRIDE: usize = 4099;

/// Wall-clock time in microseconds since the Unix epoch.
#[inline]
pub fn now_micros() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64() * 1e6)
        .unwrap_or(0.0)
}

/// The send time a value carries, when it is long enough to carry one.
#[inline]
pub fn stamp_of(value: &[u8]) -> Option<f64> {
    let bytes: [u8; STAMP_BYTES] = value.get(..STAMP_BYTES)?.try_into().ok()?;
    Some(f64::from_le_bytes(bytes))
}

/// splitmix64: small, fast and good enough for sizes, keys and the pool.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn seeded_from_clock() -> Rng {
        Rng(now_micros().to_bits() ^ 0x9e37_79b9_7f4a_7c15)
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `min..=max`.
    #[inline]
    pub fn between(&mut self, min: u32, max: u32) -> u32 {
        let span = u64::from(max.saturating_sub(min)) + 1;
        min + (self.next_u64() % span) as u32
    }
}

/// Random bytes that values are sliced from.
#[derive(Debug)]
pub struct ValuePool {
    bytes: Vec<u8>,
    cursor: usize,
}

impl ValuePool {
    pub fn new(max_value: usize, rng: &mut Rng) -> ValuePool {
        let mut bytes = Vec::with_capacity(POOL_BYTES + max_value + 8);
        while bytes.len() < POOL_BYTES + max_value {
            bytes.extend_from_slice(&rng.next_u64().to_le_bytes());
        }
        ValuePool { bytes, cursor: 0 }
    }

    /// The next `len` random bytes.
    #[inline]
    pub fn next(&mut self, len: usize) -> &[u8] {
        let start = self.cursor;
        self.cursor = (self.cursor + POOL_STRIDE) % POOL_BYTES;
        &self.bytes[start..start + len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamp_round_trips_through_the_first_eight_bytes() {
        let mut value = vec![7u8; 20];
        value[..8].copy_from_slice(&1_700_000_000_123_456.5f64.to_le_bytes());
        assert_eq!(stamp_of(&value), Some(1_700_000_000_123_456.5));
        assert_eq!(stamp_of(&value[..7]), None);
    }

    #[test]
    fn between_stays_in_range() {
        let mut rng = Rng::new(1);
        for _ in 0..1000 {
            let v = rng.between(10, 12);
            assert!((10..=12).contains(&v));
        }
    }
}
