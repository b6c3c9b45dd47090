//! The on-disk log: batches, indexes, segments, partitions, topics, and the
//! topics catalog.

pub mod batch;
pub mod catalog;
pub mod epoch_cache;
pub mod file_cache;
pub mod group_commit;
pub mod index;
pub mod journal;
pub mod log;
pub mod partition;
pub mod producer_state;
pub mod retention;
pub mod segment;
pub mod shared;
pub mod time_index;
pub mod topic;

pub use batch::Appended;
pub use log::{Log, LogRecovery, FLUSH_CHECK_INTERVAL};
pub use partition::{
    Durability, LogConfig, Partition, PartitionRead, RecoveryReport, SharedTopicConfig,
};
pub use topic::Topic;
