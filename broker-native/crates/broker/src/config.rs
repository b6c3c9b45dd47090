//! Broker options, with the defaults the design brief names.

use std::path::PathBuf;
use std::time::Duration;

/// When appended bytes are forced to disk (broker-wide; a topic may
/// override it with Kafka's `flush.messages=1` or `flush.ms=N`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FsyncPolicy {
    /// Leave it to the page cache, like Kafka's default.
    #[default]
    None,
    /// An append returns once its bytes are on disk (fdatasync), like
    /// Redpanda; concurrent appends to one partition share one fdatasync.
    Batch,
    /// Written bytes reach the disk within this long (a periodic flush of
    /// partitions with unsynced bytes); appends do not wait.
    Interval(Duration),
}

impl FsyncPolicy {
    /// Parses `none`, `batch` or `interval:<ms>` (the scenario's and the
    /// CLI's spelling).
    pub fn parse(text: &str) -> crate::Result<FsyncPolicy> {
        let text = text.trim();
        let bad = || crate::Error::InvalidOption {
            name: "fsync",
            message: format!("{text:?} is not one of none, batch, interval:<ms>"),
        };
        match text {
            "none" => Ok(FsyncPolicy::None),
            "batch" => Ok(FsyncPolicy::Batch),
            _ => {
                let ms = text.strip_prefix("interval:").ok_or_else(bad)?;
                if ms.is_empty() || !ms.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(bad());
                }
                let ms: u64 = ms.parse().map_err(|_| bad())?;
                Ok(FsyncPolicy::Interval(Duration::from_millis(ms)))
            }
        }
    }
}

impl std::fmt::Display for FsyncPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FsyncPolicy::None => f.write_str("none"),
            FsyncPolicy::Batch => f.write_str("batch"),
            FsyncPolicy::Interval(every) => write!(f, "interval:{}", every.as_millis()),
        }
    }
}

#[derive(Debug, Clone)]
pub struct BrokerConfig {
    pub data_dir: PathBuf,
    pub host: String,
    /// 0 picks an ephemeral port.
    pub port: u16,
    pub node_id: i32,
    pub auto_create_topics: bool,
    /// Partitions for CreateTopics with -1 and for auto-created topics.
    pub default_partitions: i32,
    pub max_frame_bytes: usize,
    pub segment_bytes: u64,
    pub max_connections: usize,
    pub fsync: FsyncPolicy,
    pub cluster_id: String,
    /// How often retention (retention.ms / retention.bytes) is enforced.
    pub retention_check_interval: Duration,
}

pub const DEFAULT_MAX_FRAME_BYTES: usize = 100 * 1024 * 1024;
pub const DEFAULT_SEGMENT_BYTES: u64 = 1024 * 1024 * 1024;

impl BrokerConfig {
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        BrokerConfig {
            data_dir: data_dir.into(),
            host: "127.0.0.1".to_string(),
            port: 0,
            node_id: 1,
            auto_create_topics: false,
            default_partitions: 1,
            max_frame_bytes: DEFAULT_MAX_FRAME_BYTES,
            segment_bytes: DEFAULT_SEGMENT_BYTES,
            max_connections: 1024,
            fsync: FsyncPolicy::None,
            cluster_id: "kbench-cluster".to_string(),
            retention_check_interval: crate::storage::retention::DEFAULT_CHECK_INTERVAL,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fsync_policies_parse_and_print_back() {
        for text in ["none", "batch", "interval:250", "interval:0"] {
            assert_eq!(FsyncPolicy::parse(text).unwrap().to_string(), text);
        }
        assert_eq!(
            FsyncPolicy::parse("interval:5").unwrap(),
            FsyncPolicy::Interval(Duration::from_millis(5))
        );
    }

    #[test]
    fn a_bad_fsync_policy_names_the_allowed_values() {
        for text in [
            "",
            "always",
            "interval:",
            "interval:-1",
            "interval:1s",
            "batch:2",
        ] {
            let message = FsyncPolicy::parse(text).unwrap_err().to_string();
            assert!(
                message.contains("none, batch, interval:<ms>"),
                "{text}: {message}"
            );
        }
    }
}
