//! Follower replication: one task per leader node this node follows, which
//! fetches every followed partition from it with the Kafka Fetch protocol
//! (replica id set), appends what comes back as it was sent, and takes the
//! leader's high watermark. A diverging epoch in a response (KIP-320's
//! `last_fetched_epoch` check) makes the follower truncate its tail first.

use super::replica::PartitionRole;
use super::state::NodeInfo;
use crate::error::{Error, Result};
use crate::pause::{Pause, REPLICA_CLIENT_PREFIX};
use crate::stats::ClusterStats;
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::{BrokerId, FetchRequest, FetchResponse, TopicName};
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::ResponseError;
use kbench_client::{Backoff, ConnectOptions, SimpleClient};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// The Fetch version followers send: the newest that still names topics
/// rather than ids and carries `replica_id` in the body.
const FETCH_VERSION: i16 = 12;
const MAX_WAIT_MS: i32 = 500;
const PARTITION_MAX_BYTES: i32 = 4 << 20;
const RESPONSE_MAX_BYTES: i32 = 32 << 20;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// The tagged field (in each FetchPartition, flexible versions) in which
/// our followers report the offsets below which their copy is on disk, 8
/// bytes big-endian. The leader's high watermark under fsync `batch` is
/// the smallest such position among the in-sync replicas; a fetch without
/// it (any other client) counts its fetch offset.
pub const DURABLE_TAG: i32 = 0x6b62;
/// The longest a follower with nothing new to fetch waits for its own sync
/// before fetching again to report it.
const DURABLE_WAIT: Duration = Duration::from_millis(100);
/// The wait after a failed connect to the leader (doubling while it keeps failing), and after
/// a failed fetch before connecting again.
const BACKOFF: Backoff = Backoff {
    initial: Duration::from_millis(20),
    max: Duration::from_millis(500),
};

#[derive(Debug, Clone)]
pub struct FollowTarget {
    pub role: Arc<PartitionRole>,
    pub epoch: i32,
}

/// What the node tells a fetcher: where its leader listens (as the cluster
/// state last applied says) and the partitions to follow there.
#[derive(Debug, Clone)]
pub struct Follow {
    pub address: Option<NodeInfo>,
    pub targets: Vec<FollowTarget>,
}

/// The following node, as its fetchers see it.
pub struct Follower {
    pub id: i32,
    pub pause: Arc<Pause>,
    pub stats: Arc<ClusterStats>,
}

/// Replicates from `leader` until `follow`'s sender is dropped.
pub async fn run(me: Follower, leader: i32, mut follow: watch::Receiver<Follow>) {
    let options = ConnectOptions::new(StrBytes::from_string(format!(
        "{REPLICA_CLIENT_PREFIX}{}",
        me.id
    )))
    .with_connect_timeout(CONNECT_TIMEOUT)
    .with_backoff(BACKOFF);
    // The last wait after a failed connect, while connects keep failing.
    let mut waited = None;
    loop {
        me.pause.wait_peers().await;
        if follow.borrow_and_update().targets.is_empty() {
            if follow.changed().await.is_err() {
                return;
            }
            continue;
        }
        let Some(address) = follow.borrow().address.clone() else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        let addr = match address.host.contains(':') {
            true => format!("[{}]:{}", address.host, address.port),
            false => format!("{}:{}", address.host, address.port),
        };
        let mut conn = match SimpleClient::connect(&addr, &options).await {
            Ok(conn) => conn,
            Err(e) => {
                tracing::debug!(leader, error = %e, "replica fetcher cannot connect");
                let wait = BACKOFF.next(waited);
                waited = Some(wait);
                tokio::time::sleep(wait).await;
                continue;
            }
        };
        waited = None;
        loop {
            me.pause.wait_peers().await;
            let current = follow.borrow_and_update().targets.clone();
            if current.is_empty() {
                break;
            }
            match fetch_once(&me, &mut conn, &current).await {
                Ok(true) => {}
                Ok(false) => tokio::time::sleep(Duration::from_millis(50)).await,
                Err(e) => {
                    tracing::debug!(leader, error = %e, "replica fetch failed; reconnecting");
                    tokio::time::sleep(BACKOFF.initial).await;
                    break;
                }
            }
        }
    }
}

/// One fetch round trip. `Ok(false)` when the leader refused every
/// partition (it is not, or no longer, the leader): back off until the
/// metadata catches up.
async fn fetch_once(
    me: &Follower,
    conn: &mut SimpleClient,
    targets: &[FollowTarget],
) -> Result<bool> {
    // Fetching goes on while this replica's sync is pending (under fsync
    // `batch`); such a fetch must not wait at the leader, or the durable
    // position it is about to reach would be reported only after it.
    let pending = targets.iter().any(|t| {
        let p = &t.role.partition;
        p.durable_end() < p.log_end_offset()
    });
    let mut request = FetchRequest::default();
    request.replica_id = BrokerId(me.id);
    request.max_wait_ms = if pending { 0 } else { MAX_WAIT_MS };
    request.min_bytes = 1;
    request.max_bytes = RESPONSE_MAX_BYTES;
    request.session_epoch = -1;
    let mut topics: Vec<FetchTopic> = Vec::new();
    for target in targets {
        let partition = &target.role.partition;
        let mut p = FetchPartition::default();
        p.partition = target.role.index;
        p.current_leader_epoch = target.epoch;
        p.fetch_offset = partition.log_end_offset();
        p.last_fetched_epoch = partition.latest_epoch().unwrap_or(-1);
        p.log_start_offset = partition.log_start_offset();
        p.partition_max_bytes = PARTITION_MAX_BYTES;
        p.unknown_tagged_fields.insert(
            DURABLE_TAG,
            bytes::Bytes::copy_from_slice(&partition.durable_end().to_be_bytes()),
        );
        match topics.last_mut() {
            Some(t) if t.topic.as_str() == target.role.topic => t.partitions.push(p),
            _ => {
                let mut t = FetchTopic::default();
                t.topic = TopicName(StrBytes::from_string(target.role.topic.clone()));
                t.partitions.push(p);
                topics.push(t);
            }
        }
    }
    request.topics = topics;
    let response: FetchResponse = tokio::time::timeout(
        Duration::from_millis(MAX_WAIT_MS as u64 + 10_000),
        conn.call(FETCH_VERSION, &request),
    )
    .await
    .map_err(|_| Error::Io(std::io::ErrorKind::TimedOut.into()))?
    .map_err(|e| match e {
        kbench_client::Error::Io { source, .. } => Error::Io(source),
        other => Error::Malformed(other.to_string()),
    })?;
    if response.error_code != 0 {
        return Ok(false);
    }
    let mut any_ok = false;
    let mut appended = false;
    for topic in response.responses {
        for data in topic.partitions {
            let Some(target) = targets.iter().find(|t| {
                t.role.topic == topic.topic.as_str() && t.role.index == data.partition_index
            }) else {
                continue;
            };
            // Data for an epoch we no longer follow is dropped.
            if target.role.role().1 != target.epoch {
                continue;
            }
            let partition = &target.role.partition;
            match ResponseError::try_from_code(data.error_code) {
                None => {}
                Some(ResponseError::OffsetOutOfRange) => {
                    // Ahead of the leader without a divergence the epochs
                    // could explain: fall back to our high watermark.
                    let hw = partition.high_watermark();
                    tracing::warn!(topic = %target.role.topic, partition = target.role.index, hw, "follower ahead of the leader; truncating to the high watermark");
                    partition.truncate_to(hw)?;
                    any_ok = true;
                    continue;
                }
                Some(_) => continue,
            }
            any_ok = true;
            if data.diverging_epoch.epoch >= 0 || data.diverging_epoch.end_offset >= 0 {
                let (leader_epoch, leader_end) =
                    (data.diverging_epoch.epoch, data.diverging_epoch.end_offset);
                let (mine, my_end) = partition.end_offset_for_epoch(leader_epoch);
                let to = if leader_end < 0 {
                    0
                } else if mine == leader_epoch {
                    leader_end.min(my_end)
                } else {
                    leader_end.min(partition.log_end_offset())
                };
                tracing::info!(topic = %target.role.topic, partition = target.role.index, to, "follower truncating a diverging tail");
                partition.truncate_to(to.max(partition.log_start_offset()))?;
                continue;
            }
            if let Some(records) = data.records.as_ref().filter(|r| !r.is_empty()) {
                partition.append_as_follower(records)?;
                me.stats.replicated_bytes(records.len());
                appended = true;
            }
            let hw = data.high_watermark.min(partition.log_end_offset());
            if hw > partition.high_watermark() {
                partition.set_high_watermark(hw);
            }
        }
    }
    if pending && !appended {
        // Nothing new: the next fetch is worth sending once the syncs in
        // progress have moved this replica's durable positions (one fetch
        // then reports them all).
        let waits: Vec<_> = targets
            .iter()
            .map(|t| &t.role.partition)
            .filter(|p| p.durable_end() < p.log_end_offset())
            .map(|p| (p.subscribe_durable(), p.log_end_offset()))
            .collect();
        let _ = tokio::time::timeout(DURABLE_WAIT, async {
            for (mut durable, end) in waits {
                let _ = durable.wait_for(|d| *d >= end).await;
            }
        })
        .await;
    }
    Ok(any_ok)
}
