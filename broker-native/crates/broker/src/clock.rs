//! Wall-clock time as Kafka counts it: milliseconds since the Unix epoch.

/// Milliseconds since the Unix epoch (0 if the clock reads before it).
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}
