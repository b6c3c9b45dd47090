//! Broker options, with the defaults the design brief names.

use std::path::PathBuf;
use std::time::Duration;

/// When appended bytes are forced to disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FsyncPolicy {
    /// Leave it to the page cache, like Kafka's default.
    #[default]
    None,
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
