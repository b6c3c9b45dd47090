//! A bundled cluster on one machine: N broker nodes (in this process, or one
//! per process) that share a metadata directory, replicate partitions from
//! leaders to followers over the Kafka Fetch protocol, track in-sync
//! replicas and high watermarks, and move leadership off dead nodes.
//!
//! - `state`: the shared cluster metadata and heartbeats.
//! - `controller`: replica assignment and leader election (pure).
//! - `replica`: one node's role per partition, follower positions, HW.
//! - `fetcher`: follower replication (over kbench-client's one-call client).
//! - `node`: a node's membership and upkeep.
//!
//! Cluster code works on the node's log alone; what a handler asks of the
//! cluster goes through `crate::admin::ClusterAdmin`, and starting N nodes
//! in one process is `crate::launcher`'s.

pub mod controller;
pub mod fetcher;
pub mod node;
pub mod replica;
pub mod state;

pub use node::{spawn, ClusterNode, ClusterOptions};
pub use replica::{PartitionRole, Role};
