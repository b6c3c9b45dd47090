//! The agent's clock (shifted by the test hook), the busy claim's start time in ISO 8601, and
//! the host name the hello reply carries.

use std::net::SocketAddr;
use std::time::{SystemTime, UNIX_EPOCH};

/// The run this agent is busy with.
#[derive(Debug, Clone)]
pub(crate) struct Claim {
    pub run: String,
    pub peer: SocketAddr,
    pub since: SystemTime,
    /// The connection that holds it.
    pub connection: u64,
}

/// Wall-clock µs since the epoch, as the agent reports it (shifted by `skew_micros`).
pub(crate) fn now_micros(skew_micros: f64) -> f64 {
    kbench_loadgen::payload::now_micros() + skew_micros
}

/// `2026-11-24T12:00:00Z`, UTC to the second.
pub(crate) fn iso_utc(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rest) = (secs / 86_400, secs % 86_400);
    // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// This machine's host name (Linux), else `HOSTNAME`, else `unknown`.
pub(crate) fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn iso_dates() {
        let at = |secs: u64| iso_utc(UNIX_EPOCH + Duration::from_secs(secs));
        assert_eq!(at(0), "1970-01-01T00:00:00Z");
        assert_eq!(at(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(at(1_795_000_000 + 3661), "2026-11-18T12:07:41Z");
    }
}
