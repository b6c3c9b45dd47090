//! The on-disk log: batches, index, segments, partitions, topics.

pub mod batch;
pub mod index;
pub mod log;
pub mod partition;
pub mod segment;
pub mod topic;

pub use log::Log;
pub use partition::{Appended, LogConfig, Partition, PartitionRead};
pub use topic::Topic;
