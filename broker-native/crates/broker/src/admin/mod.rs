//! Topic administration behind one trait, so that a handler never asks
//! whether it serves a lone broker or a node of a bundled cluster: create
//! and delete topics, grow partitions, replace config overrides, say where
//! each partition is led and replicated, and which brokers clients see.
//!
//! - `single`: a lone broker, whose log is the whole truth.
//! - `cluster`: a cluster node, which changes the shared cluster state (and
//!   waits for the live nodes to apply it) and reads leadership from it.
//!
//! A handler holds it as `Arc<dyn TopicAdmin>`: one call per admin request,
//! and one `leadership` call per partition of a Produce, Fetch or
//! ListOffsets request, never one per batch or record.

pub mod cluster;
pub mod single;

pub use cluster::ClusterAdmin;
pub use single::SingleNodeAdmin;

use crate::cluster::PartitionRole;
use crate::error::Result;
use crate::storage::topic::TopicMeta;
use crate::storage::Topic;
use crate::topic_config::TopicOverrides;
use kafka_protocol::ResponseError;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use uuid::Uuid;

/// What the asynchronous administration calls return.
pub type AdminFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T>> + Send + 'a>>;

/// A topic a client asks for (CreateTopics, or Metadata's auto-creation).
#[derive(Debug, Clone, Copy)]
pub struct NewTopic<'a> {
    pub name: &'a str,
    pub partitions: i32,
    /// -1: the default.
    pub replication_factor: i16,
    /// Config overrides by their Kafka names, as the client sent them
    /// (validated by `create_topic`).
    pub configs: &'a [(&'a str, Option<&'a str>)],
}

/// Where one partition lives, as Metadata reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    /// -1 while no in-sync replica is alive.
    pub leader: i32,
    pub leader_epoch: i32,
    pub replicas: Vec<i32>,
    pub isr: Vec<i32>,
    /// The replicas on nodes that are not alive.
    pub offline: Vec<i32>,
}

/// This node's leadership of a partition on a cluster node: its role (the
/// ISR, the followers, the high watermark) and its leader epoch.
pub type Leadership = Option<(Arc<PartitionRole>, i32)>;

pub trait TopicAdmin: Send + Sync {
    /// Creates a topic (or, with `validate_only`, checks that it could be
    /// created); returns its id and partition count and the replication
    /// factor it got.
    fn create_topic<'a>(
        &'a self,
        topic: NewTopic<'a>,
        validate_only: bool,
    ) -> AdminFuture<'a, (TopicMeta, i16)>;

    /// Deletes a topic by name, with its data; returns its id.
    fn delete_topic<'a>(&'a self, name: &'a str) -> AdminFuture<'a, Uuid>;

    /// Deletes a topic by id, with its data; returns its name.
    fn delete_topic_by_id(&self, id: Uuid) -> AdminFuture<'_, String>;

    /// Grows `name` to `count` partitions (never shrinks it).
    fn create_partitions<'a>(
        &'a self,
        name: &'a str,
        count: i32,
        validate_only: bool,
    ) -> AdminFuture<'a, ()>;

    /// Replaces a topic's config overrides (already validated).
    fn set_topic_overrides(
        &self,
        name: &str,
        overrides: TopicOverrides,
        validate_only: bool,
    ) -> Result<()>;

    /// The brokers a client is told about: (node id, host, port).
    fn advertised_nodes(&self) -> Vec<(i32, String, u16)>;

    /// The node named as controller (and group coordinator).
    fn controller_id(&self) -> i32;

    /// Leader, replicas and ISR of each partition of `topic`, or `None`
    /// when the topic is not (or no longer) known beyond this node's log.
    fn placement(&self, topic: &Topic) -> Option<Vec<Placement>>;

    /// This node's leadership of a partition, checked against a client's
    /// `current_leader_epoch` when it sent one, or the error to answer with.
    /// `Ok(None)` on a lone broker, which leads everything it has.
    fn leadership(
        &self,
        topic: &str,
        partition: i32,
        epoch: Option<i32>,
    ) -> std::result::Result<Leadership, ResponseError>;

    /// Whether other nodes replicate from this one, so that a Fetch with a
    /// replica id comes from a follower (a lone broker serves it as a
    /// consumer's).
    fn serves_followers(&self) -> bool;

    /// A follower fetched `role`'s partition from `fetch_offset`: records
    /// its position and writes the ISR expansion it earns (off the request
    /// path).
    fn follower_fetched(
        &self,
        role: &Arc<PartitionRole>,
        follower: i32,
        fetch_offset: i64,
        durable: i64,
        now_ms: i64,
    );
}
