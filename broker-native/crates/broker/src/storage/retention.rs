//! Retention: which whole segments to delete, oldest first, by
//! retention.bytes (per partition) and retention.ms (by each segment's
//! largest timestamp). The active (last) segment is never deleted.

/// What retention needs to know about one segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentFacts {
    pub size: u64,
    /// Largest batch timestamp, or -1 when the segment has none.
    pub max_timestamp: i64,
}

/// How many of `segments` (oldest first, the last one active) to delete.
/// Kafka's rules: by time, a segment goes when `now - max_timestamp >
/// retention_ms`; by size, oldest segments go while what is left stays at
/// or above `retention_bytes`. Both stop at the first segment they keep.
pub fn expired_prefix(
    segments: &[SegmentFacts],
    retention_ms: Option<i64>,
    retention_bytes: Option<i64>,
    now_ms: i64,
) -> usize {
    let sealed = segments.len().saturating_sub(1);
    let by_time = match retention_ms.filter(|ms| *ms >= 0) {
        Some(ms) => segments[..sealed]
            .iter()
            .take_while(|s| s.max_timestamp >= 0 && now_ms - s.max_timestamp > ms)
            .count(),
        None => 0,
    };
    let by_size = match retention_bytes.filter(|b| *b >= 0) {
        Some(limit) => {
            let total: u64 = segments.iter().map(|s| s.size).sum();
            let mut excess = total as i64 - limit;
            segments[..sealed]
                .iter()
                .take_while(|s| {
                    let keep = excess - (s.size as i64) < 0;
                    if !keep {
                        excess -= s.size as i64;
                    }
                    !keep
                })
                .count()
        }
        None => 0,
    };
    by_time.max(by_size)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(list: &[(u64, i64)]) -> Vec<SegmentFacts> {
        list.iter()
            .map(|(size, max_timestamp)| SegmentFacts {
                size: *size,
                max_timestamp: *max_timestamp,
            })
            .collect()
    }

    #[test]
    fn unlimited_retention_deletes_nothing() {
        let s = facts(&[(100, 1), (100, 2), (100, 3)]);
        assert_eq!(expired_prefix(&s, None, None, i64::MAX), 0);
    }

    #[test]
    fn size_retention_keeps_at_least_retention_bytes() {
        let s = facts(&[(100, 1), (100, 2), (100, 3), (100, 4)]);
        assert_eq!(expired_prefix(&s, None, Some(250), 0), 1);
        assert_eq!(expired_prefix(&s, None, Some(200), 0), 2);
        assert_eq!(expired_prefix(&s, None, Some(0), 0), 3);
    }

    #[test]
    fn time_retention_stops_at_the_first_young_segment() {
        let s = facts(&[(1, 100), (1, 500), (1, 200), (1, 900)]);
        assert_eq!(expired_prefix(&s, Some(100), None, 450), 1);
        assert_eq!(expired_prefix(&s, Some(100), None, 10_000), 3);
    }

    #[test]
    fn the_active_segment_is_never_deleted() {
        let s = facts(&[(100, 1)]);
        assert_eq!(expired_prefix(&s, Some(0), Some(0), i64::MAX), 0);
    }

    #[test]
    fn segments_without_timestamps_are_kept_by_time_retention() {
        let s = facts(&[(1, -1), (1, 1)]);
        assert_eq!(expired_prefix(&s, Some(0), None, 1_000), 0);
    }
}
