//! kbench's Kafka-wire-compatible broker: codec, storage, cluster
//! replication, topic administration, handlers, server and lifecycle.
//! docs/architecture.md ("Layers inside the broker crate") says which
//! module may import which; tests/module_circles.rs keeps them apart.

pub mod admin;
pub mod apis;
pub mod background;
pub mod blocking;
pub mod broker;
pub mod clock;
pub mod cluster;
pub mod codec;
pub mod config;
pub mod error;
pub mod handlers;
pub mod launcher;
pub mod lifecycle;
pub mod metrics;
pub mod pause;
pub mod producer_ids;
pub mod security;
pub mod server;
pub mod stats;
pub mod storage;
pub mod topic_config;

pub use broker::{Broker, BrokerParts};
pub use config::{BrokerConfig, FsyncPolicy, Limits, SaslMechanism, SaslUsers, Security, TlsFiles};
pub use error::{Error, Result};
pub use lifecycle::{start, start_with, BrokerHandle};
pub use stats::StatsSnapshot;
