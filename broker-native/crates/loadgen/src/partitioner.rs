//! Partition choice as the Java client makes it: murmur2 of the key, or a sticky partition per
//! batch for records without a key.

/// Kafka's murmur2 (`org.apache.kafka.common.utils.Utils.murmur2`), seed 0x9747b28c.
pub fn murmur2(data: &[u8]) -> i32 {
    const M: u32 = 0x5bd1_e995;
    const R: u32 = 24;
    let mut h: u32 = 0x9747_b28c ^ data.len() as u32;
    let mut chunks = data.chunks_exact(4);
    for chunk in &mut chunks {
        let mut k = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h = h.wrapping_mul(M);
        h ^= k;
    }
    let tail = chunks.remainder();
    if tail.len() >= 3 {
        h ^= u32::from(tail[2]) << 16;
    }
    if tail.len() >= 2 {
        h ^= u32::from(tail[1]) << 8;
    }
    if !tail.is_empty() {
        h ^= u32::from(tail[0]);
        h = h.wrapping_mul(M);
    }
    h ^= h >> 13;
    h = h.wrapping_mul(M);
    h ^= h >> 15;
    h as i32
}

/// The partition of a keyed record, as the Java client's default partitioner picks it.
pub fn partition_for_key(key: &[u8], partitions: usize) -> usize {
    ((murmur2(key) & 0x7fff_ffff) as usize) % partitions.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values from the Java client's own murmur2 tests.
    #[test]
    fn murmur2_matches_the_java_client() {
        let cases: [(&[u8], i32); 6] = [
            (b"21", -973_932_308),
            (b"foobar", -790_332_482),
            (b"a-little-bit-long-string", -985_981_536),
            (b"a-little-bit-longer-string", -1_486_304_829),
            (
                b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8",
                -58_897_971,
            ),
            (b"abc", 479_470_107),
        ];
        for (key, expected) in cases {
            assert_eq!(murmur2(key), expected, "{}", String::from_utf8_lossy(key));
        }
    }

    #[test]
    fn keyed_partition_is_stable_and_in_range() {
        for key in [&b"key-0"[..], b"key-1", b"foobar"] {
            let p = partition_for_key(key, 6);
            assert!(p < 6);
            assert_eq!(p, partition_for_key(key, 6));
        }
    }
}
