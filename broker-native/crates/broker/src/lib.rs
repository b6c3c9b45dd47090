//! kbench's Kafka-wire-compatible broker: codec, server, handlers, storage.

pub mod blocking;
pub mod broker;
pub mod cluster;
pub mod codec;
pub mod config;
pub mod error;
pub mod handlers;
pub mod producer_ids;
pub mod server;
pub mod stats;
pub mod storage;
pub mod topic_config;

pub use broker::{start, Broker, BrokerHandle};
pub use config::{BrokerConfig, FsyncPolicy, Limits};
pub use error::{Error, Result};
pub use stats::StatsSnapshot;
